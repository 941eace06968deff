package main

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/leafid/leaf/app"
)

// TestStoreFlags: --store and --store-addrs are given once per store, in
// order, or all at once in their variables; the command line wins.
func TestStoreFlags(t *testing.T) {
	type want struct {
		stores []string // NAME=DSN as shown, in order
		addrs  map[string][]string
	}
	tests := []struct {
		name string
		env  env
		args []string
		want want
	}{
		{name: "repeated", args: []string{"--store", "a=sqlite:/d/a.db", "--store=b=leaf:pw@tcp(db:3306)/ids", "--store", "c=sqlite:c.db"},
			want: want{stores: []string{"a=sqlite:/d/a.db", "b=leaf@tcp(db:3306)/ids", "c=sqlite:c.db"}}},
		{name: "from the environment", env: env{"LEAF_STORES": " a=sqlite:a.db\n\tb=leaf:pw@tcp(db:3306)/ids?parseTime=true  "},
			want: want{stores: []string{"a=sqlite:a.db", "b=leaf@tcp(db:3306)/ids"}}},
		{name: "the command line wins", env: env{"LEAF_STORES": "a=sqlite:a.db b=sqlite:b.db"},
			args: []string{"--store", "c=sqlite:c.db"}, want: want{stores: []string{"c=sqlite:c.db"}}},
		{name: "the command line wins for nodes", env: env{"LEAF_STORE_ADDRS": "a=db7:3306 x=h:1"},
			args: []string{"--store", "a=leaf@tcp(db1:3306)/ids", "--store-addrs", "a=db2:3306"},
			want: want{stores: []string{"a=leaf@tcp(db1:3306)/ids"}, addrs: map[string][]string{"a": {"db2:3306"}}}},
		{name: "nodes", args: []string{"--store", "a=leaf@tcp(db1:3306)/ids", "--store", "b=leaf@tcp(db4:3306)/ids",
			"--store-addrs", "a=db1:3306, db2:3306,db3:3306", "--store", "c=sqlite:c.db"},
			want: want{stores: []string{"a=leaf@tcp(db1:3306)/ids", "b=leaf@tcp(db4:3306)/ids", "c=sqlite:c.db"},
				addrs: map[string][]string{"a": {"db1:3306", "db2:3306", "db3:3306"}}}},
		{name: "nodes from the environment", env: env{"LEAF_STORE_ADDRS": "a=db1:3306,db2:3306 b=db5:3306"},
			args: []string{"--store", "a=leaf@tcp(db1:3306)/ids", "--store", "b=leaf@tcp(db4:3306)/ids"},
			want: want{stores: []string{"a=leaf@tcp(db1:3306)/ids", "b=leaf@tcp(db4:3306)/ids"},
				addrs: map[string][]string{"a": {"db1:3306", "db2:3306"}, "b": {"db5:3306"}}}},
		{name: "the default sqlite path beside --store", env: env{"LEAF_STORES": "a=sqlite:a.db"},
			want: want{stores: []string{"a=sqlite:a.db"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T, set []app.StoreEntry) {
				t.Helper()
				var got []string
				addrs := map[string][]string{}
				for _, e := range set {
					got = append(got, e.String())
					if e.Addrs != nil {
						addrs[e.Name] = e.Addrs
					}
				}
				if !slices.Equal(got, tt.want.stores) {
					t.Fatalf("stores %q, want %q", got, tt.want.stores)
				}
				if len(addrs) != len(tt.want.addrs) {
					t.Fatalf("nodes %v, want %v", addrs, tt.want.addrs)
				}
				for name, a := range tt.want.addrs {
					if !slices.Equal(addrs[name], a) {
						t.Fatalf("nodes of %s: %v, want %v", name, addrs[name], a)
					}
				}
			}
			t.Run("serve", func(t *testing.T) {
				a, err := newApp(tt.args, tt.env.get, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				check(t, a.cfg.Set)
			})
			t.Run("tag list", func(t *testing.T) {
				p := parsed(t, tt.env, []string{"tag", "list"}, tt.args)
				c, err := p.root.Tag.List.config(p)
				if err != nil {
					t.Fatal(err)
				}
				check(t, c.Set)
			})
		})
	}
}

// TestStoreFlagsRefused: a bad --store, --store-addrs or a mix with the
// one-store flags is a usage error before anything is opened, and no
// password is shown in it.
func TestStoreFlagsRefused(t *testing.T) {
	inEmptyDir(t)
	const secret = "s3cret"
	tests := []struct {
		name string
		env  env
		args []string
		want string // in the error
	}{
		{"no name", nil, []string{"--store", "sqlite:a.db"}, "--store …: want NAME=DSN"},
		{"no DSN", nil, []string{"--store", "a"}, "--store a: want NAME=DSN"},
		{"DSN without a name", nil, []string{"--store", "leaf:s3cret@tcp(db:3306)/ids?parseTime=true"}, "--store …: want NAME=DSN"},
		{"DSN without a name in the environment", env{"LEAF_STORES": "a=sqlite:a.db leaf:s3cret@tcp(db:3306)/ids?x=y"}, nil, "LEAF_STORES: …: want NAME=DSN"},
		{"name with a dot", nil, []string{"--store", "eu.west=sqlite:a.db"}, "--store eu.west=…: want NAME=DSN, NAME 1 to 32 letters"},
		{"name too long", nil, []string{"--store", strings.Repeat("n", 33) + "=sqlite:a.db"}, "want NAME=DSN"},
		{"empty name", nil, []string{"--store", "=sqlite:a.db"}, "want NAME=DSN"},
		{"name twice", nil, []string{"--store", "a=sqlite:a.db", "--store", "a=sqlite:b.db"}, `store "a" is given twice`},
		{"empty sqlite path", nil, []string{"--store", "a=sqlite:"}, "--store a=sqlite:: the SQLite file's path is missing"},
		{"DSN without a database", nil, []string{"--store", "a=leaf:s3cret@tcp(db:3306)/"}, "--store a=…: the DSN names no database"},
		{"malformed DSN", nil, []string{"--store", "a=leaf:s3cret@db:3306/ids"}, "--store a=…: default addr for network 'db:3306' unknown (want user:pass@tcp(host:3306)/db)"},
		{"malformed DSN in the environment", env{"LEAF_STORES": "a=leaf:s3cret@db/ids"}, nil, "LEAF_STORES: a=…: default addr for network 'db' unknown"},
		{"with --mysql-dsn", nil, []string{"--store", "a=sqlite:a.db", "--mysql-dsn", "leaf:s3cret@tcp(db:3306)/ids"}, "--store cannot be combined with --mysql-dsn"},
		{"with LEAF_MYSQL_DSN", env{"LEAF_MYSQL_DSN": "leaf:s3cret@tcp(db:3306)/ids"}, []string{"--store", "a=sqlite:a.db"}, "--store cannot be combined with --mysql-dsn"},
		{"with --sqlite-path", nil, []string{"--store", "a=sqlite:a.db", "--sqlite-path", "leaf.db"}, "--store cannot be combined with --sqlite-path"},
		{"with LEAF_SQLITE_PATH", env{"LEAF_SQLITE_PATH": "x.db", "LEAF_STORES": "a=sqlite:a.db"}, nil, "--store cannot be combined with --sqlite-path"},
		{"with --mysql-addrs", nil, []string{"--store", "a=leaf@tcp(db:3306)/ids", "--mysql-addrs", "db:3306"}, "--store-addrs NAME=host:port"},
		{"nodes without --store", nil, []string{"--store-addrs", "a=db:3306"}, "no --store is given"},
		{"nodes of no store", nil, []string{"--store", "a=leaf@tcp(db:3306)/ids", "--store-addrs", "b=db:3306"}, `no --store is named "b"`},
		{"nodes of an SQLite file", nil, []string{"--store", "a=sqlite:a.db", "--store-addrs", "a=db:3306"}, "is an SQLite file"},
		{"nodes without a port", nil, []string{"--store", "a=leaf@tcp(db:3306)/ids", "--store-addrs", "a=db1:3306,db2"}, `--store-addrs a=db1:3306,db2: "db2" is not host:port`},
		{"nodes without a name", nil, []string{"--store", "a=leaf@tcp(db:3306)/ids", "--store-addrs", "db1:3306"}, "--store-addrs db1:3306: want NAME=host:port"},
		{"nodes twice", nil, []string{"--store", "a=leaf@tcp(db:3306)/ids", "--store-addrs", "a=db1:3306", "--store-addrs", "a=db2:3306"}, "given twice"},
		{"no node", nil, []string{"--store", "a=leaf@tcp(db:3306)/ids", "--store-addrs", "a="}, "no host:port given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"tag", "list"}, {"store", "show"}} {
				var out, errOut bytes.Buffer
				err := run(t.Context(), append(cmd, tt.args...), tt.env.get, &out, &errOut)
				if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("%s: %v, want a usage error with %q", cmd, err, tt.want)
				}
				var msg bytes.Buffer
				if code := exitCode(err, &msg); code != 2 {
					t.Fatalf("%s: exit status %d, want 2", cmd, code)
				}
				if all := out.String() + errOut.String() + msg.String(); strings.Contains(all, secret) {
					t.Fatalf("%s: the password is shown:\n%s", cmd, all)
				}
			}
		})
	}
}

// The help names --store's and --store-addrs's arguments and variables,
// and shows no password from the environment.
func TestStoreFlagsHelp(t *testing.T) {
	e := env{"LEAF_STORES": "a=leaf:s3cret@tcp(db:3306)/ids"}
	for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"tag", "add"}, {"store", "init"}} {
		out, help, err := runSplit(t, e, append(cmd, "-h")...)
		if !errors.Is(err, errHelp) {
			t.Fatalf("%s -h = %v", cmd, err)
		}
		for _, want := range []string{"--store=NAME=DSN", "(env LEAF_STORES)", "--store-addrs=NAME=host:port,host:port", "(env LEAF_STORE_ADDRS)"} {
			if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
				t.Errorf("%s -h: no %q in\n%s", cmd, want, out)
			}
		}
		if strings.Contains(out+help, "s3cret") {
			t.Errorf("%s -h shows the password", cmd)
		}
	}
}
