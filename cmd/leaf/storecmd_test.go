package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

// testStore is one database of a test, as --store gives it.
type testStore struct {
	name, dialect, dsn string // dsn as the store package opens it
}

// flag is the store as --store NAME=DSN gives it.
func (s testStore) flag() string {
	if s.dialect == store.SQLite {
		return s.name + "=" + app.SQLitePrefix + s.dsn
	}
	return s.name + "=" + s.dsn
}

// open opens the store's database behind leaf's back, migrated.
func (s testStore) open(t *testing.T) *store.Store {
	t.Helper()
	return storetest.Open(t, s.dialect, s.dsn)
}

// testStores are fresh databases named a, b, c, …: SQLite files, MariaDB
// databases, or a mix when kinds cycles through both.
func testStores(t *testing.T, kinds []string, n int) []testStore {
	t.Helper()
	out := make([]testStore, n)
	for i := range out {
		s := testStore{name: string(rune('a' + i)), dialect: kinds[i%len(kinds)]}
		if s.dialect == store.MySQL {
			s.dsn = storetest.MySQL(t)
		} else {
			s.dsn = filepath.Join(t.TempDir(), s.name+".db")
		}
		out[i] = s
	}
	return out
}

// storeArgs are --store flags of stores, in their order.
func storeArgs(stores ...testStore) []string {
	var out []string
	for _, s := range stores {
		out = append(out, "--store", s.flag())
	}
	return out
}

// storesEnv is LEAF_STORES holding stores.
func storesEnv(stores ...testStore) env {
	flags := make([]string, len(stores))
	for i, s := range stores {
		flags[i] = s.flag()
	}
	return env{"LEAF_STORES": strings.Join(flags, " ")}
}

// leafOK runs a command that must succeed and returns its stdout.
func leafOK(t *testing.T, e env, args ...string) string {
	t.Helper()
	out, errOut, err := runSplit(t, e, args...)
	if err != nil {
		t.Fatalf("leaf %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func eachKind(t *testing.T, fn func(t *testing.T, kinds []string)) {
	for name, kinds := range map[string][]string{"sqlite": {store.SQLite}, "mysql": {store.MySQL}} {
		t.Run(name, func(t *testing.T) { fn(t, kinds) })
	}
}

// TestStoreCommands: a set made, shown, grown and shrunk from the command
// line, with tags created in every store and listed once.
func TestStoreCommands(t *testing.T) {
	eachKind(t, func(t *testing.T, kinds []string) {
		inEmptyDir(t)
		ctx := context.Background()
		s := testStores(t, kinds, 3)
		a, b, c := s[0], s[1], s[2]
		ab := storesEnv(a, b)

		out := leafOK(t, ab, "store", "init")
		for _, want := range []string{"set version 1 of fleet ", "floor 0,", "  a: class 0 of 2, worker slot 0 of 16, store id ", "  b: class 1 of 2, worker slot 1 of 16, store id "} {
			if !strings.Contains(out, want) {
				t.Fatalf("store init said\n%s\nwant %q in it", out, want)
			}
		}
		if again := leafOK(t, ab, "store", "init"); again != out {
			t.Fatalf("store init of the same stores again said\n%s\nfirst\n%s", again, out)
		}
		if _, _, err := runSplit(t, env{}, append([]string{"store", "init"}, storeArgs(a, c)...)...); !errors.Is(err, storeset.ErrMismatch) {
			t.Fatalf("store init with a store of another set = %v, want ErrMismatch", err)
		}

		if out := leafOK(t, ab, "tag", "add", "orders", "--step", "10", "--description", "order ids"); out != "created orders in stores a, b: step 10\n" {
			t.Fatalf("tag add said %q", out)
		}
		for _, st := range []testStore{a, b} {
			if tag, err := st.open(t).Tag(ctx, "orders"); err != nil || tag.Step != 10 || tag.Description != "order ids" {
				t.Fatalf("store %s: orders = %+v, %v", st.name, tag, err)
			}
		}
		if _, _, err := runSplit(t, ab, "tag", "add", "orders"); !errors.Is(err, segment.ErrTagExists) {
			t.Fatalf("tag add twice = %v", err)
		}
		// A tag only one store has is listed too, once.
		if _, err := a.open(t).CreateTag(ctx, segment.Tag{Name: "only-a", MaxID: 1, Step: 5}); err != nil {
			t.Fatal(err)
		}
		list := leafOK(t, ab, "tag", "list")
		if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 3 ||
			!strings.HasPrefix(lines[1], "only-a ") || !strings.HasPrefix(lines[2], "orders ") || !strings.Contains(lines[2], "order ids") {
			t.Fatalf("tag list =\n%s", list)
		}

		// c added, given as NAME=DSN: it gets the tags.
		out = leafOK(t, ab, "store", "add", c.flag())
		for _, want := range []string{"added c\n", "set version 2 ", "  a: class 0 of 3", "  c: class 2 of 3"} {
			if !strings.Contains(out, want) {
				t.Fatalf("store add said\n%s\nwant %q in it", out, want)
			}
		}
		if tag, err := c.open(t).Tag(ctx, "orders"); err != nil || tag.Step != 10 {
			t.Fatalf("store c: orders = %+v, %v", tag, err)
		}
		abc := storesEnv(a, b, c)
		if _, _, err := runSplit(t, abc, "store", "add", "c"); err == nil || !strings.Contains(err.Error(), "in the set already") {
			t.Fatalf("store add of a member = %v", err)
		}
		show := leafOK(t, abc, "store", "show")
		for _, want := range []string{"set version 2 ", "stores:\n", "  a: version 2, active (store id ", "  c: version 2, active (store id "} {
			if !strings.Contains(show, want) {
				t.Fatalf("store show said\n%s\nwant %q in it", show, want)
			}
		}
		if strings.Contains(show, "did not answer") {
			t.Fatalf("store show said\n%s", show)
		}

		// a retired: b and c stay, in their order.
		out = leafOK(t, abc, "store", "retire", "a")
		for _, want := range []string{"retired a\n", "set version 3 ", "  b: class 0 of 2", "  c: class 1 of 2"} {
			if !strings.Contains(out, want) {
				t.Fatalf("store retire said\n%s\nwant %q in it", out, want)
			}
		}
		show = leafOK(t, abc, "store", "show")
		if !strings.Contains(show, "  a: version 3, retired") || strings.Contains(show, "  a: class") {
			t.Fatalf("store show after the retirement said\n%s", show)
		}
		// A retired store given to a change is refused, not marked again.
		if _, _, err := runSplit(t, abc, "store", "retire", "b"); !errors.Is(err, storeset.ErrMismatch) || !strings.Contains(err.Error(), `store "a" is given but not in the set`) {
			t.Fatalf("store retire with a retired store given = %v", err)
		}
		bc := storesEnv(b, c)
		if _, _, err := runSplit(t, storesEnv(c), "store", "retire", "c"); err == nil || !strings.Contains(err.Error(), `"b" of the set (version 3) is not given`) {
			t.Fatalf("store retire without every member = %v", err)
		}
		if out := leafOK(t, bc, "migrate"); strings.Count(out, "is up to date") != 2 {
			t.Fatalf("migrate said\n%s", out)
		}
		// c has only-a, copied from a when it was added.
		if list := leafOK(t, bc, "tag", "list"); !strings.Contains(list, "orders ") || !strings.Contains(list, "only-a ") {
			t.Fatalf("tag list of b and c =\n%s", list)
		}
	})
}

// TestStoreRetireForced: a store that does not answer is retired only with
// --force; store show says which store did not answer, and the tag
// commands are served by the others.
func TestStoreRetireForced(t *testing.T) {
	inEmptyDir(t)
	s := testStores(t, []string{store.SQLite, store.MySQL}, 3)
	leafOK(t, storesEnv(s...), "store", "init")

	down := s[1]
	cfg, err := store.ParseMySQLDSN(down.dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:1" // nothing listens there
	cfg.Passwd = "s3cret"
	down.dsn = cfg.FormatDSN()
	e := storesEnv(s[0], down, s[2])
	e["LEAF_STORE_TIMEOUT"] = "1s"

	show, _, err := runSplit(t, e, "store", "show")
	if err != nil || !strings.Contains(show, "  b: did not answer\n") || !strings.Contains(show, "did not answer:\n  b: store \"b\": open mysql 127.0.0.1:1/") {
		t.Fatalf("store show with b down = %v:\n%s", err, show)
	}
	// The tag commands are served by the stores that answer, as an
	// instance is; a store that cannot be opened at all refuses them.
	if out, errOut, err := runSplit(t, e, "tag", "list"); err != nil {
		t.Fatalf("tag list with b down = %v:\n%s%s", err, out, errOut)
	}
	gone := s[0]
	gone.dsn = filepath.Join(t.TempDir(), "gone.db")
	if _, _, err := runSplit(t, storesEnv(gone, s[1], s[2]), "tag", "list"); err == nil || !strings.Contains(err.Error(), `store "a": sqlite `+gone.dsn+" does not exist") {
		t.Fatalf("tag list with a's file gone = %v", err)
	}
	if _, _, err := runSplit(t, e, "store", "retire", "a"); err == nil || !strings.Contains(err.Error(), `store "b"`) {
		t.Fatalf("store retire a with b down = %v", err)
	}
	out, errOut, err := runSplit(t, e, "store", "retire", "b")
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("store retire b while it is down = %v", err)
	}
	if strings.Contains(out+errOut+err.Error()+show, "s3cret") {
		t.Fatal("the password is shown")
	}
	out, errOut, err = runSplit(t, e, "store", "retire", "b", "--force")
	if err != nil || !strings.Contains(out, "retired b\n") || !strings.Contains(out, "  c: class 1 of 2") || !strings.Contains(errOut, "never give it to an instance again") {
		t.Fatalf("store retire --force = %v:\n%s%s", err, out, errOut)
	}
	if out := leafOK(t, storesEnv(s[0], s[2]), "store", "show"); !strings.Contains(out, "set version 2 ") {
		t.Fatalf("store show after b was retired:\n%s", out)
	}
}

// TestStoreCommandLines: what the leaf store commands refuse before they
// open anything.
func TestStoreCommandLines(t *testing.T) {
	inEmptyDir(t)
	a := "a=sqlite:" + filepath.Join(t.TempDir(), "a.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"store"}, "init, show, add or retire"},
		{"unknown subcommand", []string{"store", "drop"}, `unknown store subcommand "drop"`},
		{"init without stores", []string{"store", "init"}, "store init needs the stores"},
		{"init with --mysql-dsn", []string{"store", "init", "--mysql-dsn", "u@tcp(h:3306)/d"}, "store init needs the stores"},
		{"init with an argument", []string{"store", "init", "--store", a, "x"}, "no arguments"},
		{"show with an argument", []string{"store", "show", "--store", a, "x"}, "no arguments"},
		{"add without a store", []string{"store", "add", "--store", a}, "one NAME=DSN"},
		{"add a name not given", []string{"store", "add", "b", "--store", a}, "give the store as NAME=DSN"},
		{"add a store given twice", []string{"store", "add", a, "--store", a}, `store "a" is given twice`},
		{"add a bad entry", []string{"store", "add", "leaf:s3cret@tcp(h:3306)/d?x=y", "--store", a}, "store add …: want NAME=DSN"},
		{"retire without a name", []string{"store", "retire", "--store", a}, "one NAME"},
		{"retire a name not given", []string{"store", "retire", "b", "--store", a}, "no --store is named so"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runSplit(t, env{}, tt.args...)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("leaf %q = %v, want a usage error with %q", tt.args, err, tt.want)
			}
			if strings.Contains(out+errOut+err.Error(), "s3cret") {
				t.Fatal("the password is shown")
			}
		})
	}
	for _, args := range [][]string{{"store", "-h"}, {"help", "store"}, {"store", "add", "-h"}, {"help", "store", "retire"}} {
		out, errOut, err := runSplit(t, env{}, args...)
		if exitCode(err, io.Discard) != 0 || !strings.Contains(out+errOut, "leaf store") {
			t.Fatalf("leaf %q = %v:\n%s%s", args, err, out, errOut)
		}
	}
}
