package main

import (
	"errors"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestFlagWinsOverEnvironment(t *testing.T) {
	tests := []struct {
		name string
		env  env
		args []string
		want string
	}{
		{"default", env{}, nil, ":8080"},
		{"environment", env{"LEAF_ADDR": ":9000"}, nil, ":9000"},
		{"flag", env{}, []string{"--addr", ":9001"}, ":9001"},
		{"flag over environment", env{"LEAF_ADDR": ":9000"}, []string{"--addr=:9001"}, ":9001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newApp(tt.args, tt.env.get, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if a.cfg.Addr != tt.want {
				t.Fatalf("addr = %q, want %q", a.cfg.Addr, tt.want)
			}
		})
	}
}

// commandFlags are the flags of the command words, each with its variable
// ("" for none).
func commandFlags(t *testing.T, words ...string) map[string]string {
	t.Helper()
	p, err := newParser(env{}.get, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	node := p.k.Model.Node
	for _, w := range words {
		if node = childNamed(node, w); node == nil {
			t.Fatalf("no command %q", words)
		}
	}
	out := map[string]string{}
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			if f.Name != "help" {
				out[f.Name] = f.Tag.Get("var")
			}
		}
	}
	return out
}

// Every flag of serve has its variable, LEAF_ and its name in capitals,
// in the plural for a flag given once per item.
func TestEveryServeFlagHasItsVariable(t *testing.T) {
	flags := commandFlags(t, "serve")
	if len(flags) < 40 {
		t.Fatalf("serve has %d flags", len(flags))
	}
	for name, got := range flags {
		want := "LEAF_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if name == "store" || name == "store-addrs" {
			want = strings.TrimSuffix(want, "S") + "S"
		}
		if got != want {
			t.Errorf("--%s reads %q, want %s", name, got, want)
		}
	}
	// tag add's own flags read none: a LEAF_STEP left in a shell changes
	// no tag; its store flags read theirs.
	for name, v := range commandFlags(t, "tag", "add") {
		if _, ok := flags[name]; (v != "") != ok && name != "opaque-key" {
			t.Errorf("tag add --%s reads %q", name, v)
		}
	}
}

// Flags may come before, after and among the arguments, with one dash or
// two; after "--" everything is an argument.
func TestFlagsAnywhere(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantName string
		wantStep int64
		wantDesc string
	}{
		{"flags first", []string{"--step", "5", "y1"}, "y1", 5, ""},
		{"flags last", []string{"y1", "--step", "5"}, "y1", 5, ""},
		{"interleaved", []string{"--description=d", "y1", "-step", "6"}, "y1", 6, "d"},
		{"negative value", []string{"--step", "-1", "y1"}, "y1", -1, ""},
		{"double dash", []string{"--step", "5", "--", "--step"}, "--step", 5, ""},
		{"single dash argument", []string{"-", "--step", "5"}, "-", 5, ""},
		{"flag value looks like a flag", []string{"--description", "--step", "y1"}, "y1", 1000, "--step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parsed(t, env{}, []string{"tag", "add"}, tt.args).root.Tag.Add
			if c.Name != tt.wantName || c.Step != tt.wantStep || c.Description != tt.wantDesc {
				t.Fatalf("name %q step %d description %q, want %q %d %q", c.Name, c.Step, c.Description, tt.wantName, tt.wantStep, tt.wantDesc)
			}
		})
	}
}

// TestServeFlagValues: each flag with rules of its own refuses a bad value
// from the command line and from its variable, naming where it came from,
// and keeps a good one.
func TestServeFlagValues(t *testing.T) {
	dsn := []string{"--mysql-dsn", "leaf@tcp(db:3306)/ids"}
	tests := []struct {
		name    string
		env     env
		args    []string
		wantErr string            // in the usage error; empty: accepted
		got     func(*served) any // when accepted
		want    any
	}{
		{name: "tag refresh", args: []string{"--tag-refresh", "30s"},
			got: func(a *served) any { return a.cfg.RefreshTags }, want: 30 * time.Second},
		{name: "tag refresh zero", args: []string{"--tag-refresh", "0"}, wantErr: "--tag-refresh 0s: want a positive duration such as 1m0s"},
		{name: "tag refresh negative in the environment", env: env{"LEAF_TAG_REFRESH": "-1s"}, wantErr: "LEAF_TAG_REFRESH=-1s: want a positive duration"},
		{name: "tag refresh without a unit", args: []string{"--tag-refresh", "5"}, wantErr: `--tag-refresh "5": want a duration such as 500ms, 2s or 1m`},
		{name: "failover jump", args: []string{"--failover-jump", "5"},
			got: func(a *served) any { return a.cfg.FailoverJump }, want: int64(5)},
		{name: "failover jump zero", args: []string{"--failover-jump", "0"}, wantErr: "--failover-jump 0: want at least 1"},
		{name: "failover jump zero in the environment", env: env{"LEAF_FAILOVER_JUMP": "0"}, wantErr: "LEAF_FAILOVER_JUMP=0: want at least 1"},
		{name: "failover jump not a number", args: []string{"--failover-jump", "x"}, wantErr: `--failover-jump "x": want a whole number`},
		{name: "store timeout", args: []string{"--store-timeout", "1500ms"},
			got: func(a *served) any { return a.cfg.Timeout }, want: 1500 * time.Millisecond},
		{name: "store timeout negative", args: []string{"--store-timeout", "-1s"}, wantErr: "--store-timeout -1s: want 0 or a positive duration"},
		{name: "mysql addrs", args: append([]string{"--mysql-addrs", "db1:3306, db2:3306"}, dsn...),
			got: func(a *served) any { return a.cfg.MySQLAddrs }, want: []string{"db1:3306", "db2:3306"}},
		{name: "mysql addrs without a port", args: append([]string{"--mysql-addrs", "db1:3306,db2"}, dsn...), wantErr: `--mysql-addrs db1:3306,db2: "db2" is not host:port`},
		{name: "mysql addrs without a DSN", args: []string{"--mysql-addrs", "db1:3306"}, wantErr: "--mysql-addrs needs --mysql-dsn"},
		{name: "log level", args: []string{"--log-level", "DEBUG"},
			got: func(a *served) any { return a.flags.level }, want: slog.LevelDebug},
		{name: "log level unknown", args: []string{"--log-level", "verbose"}, wantErr: `--log-level "verbose": want debug, info, warn or error`},
		{name: "log level unknown in the environment", env: env{"LEAF_LOG_LEVEL": "loud"}, wantErr: `LEAF_LOG_LEVEL="loud": want debug, info, warn or error`},
		{name: "log format", env: env{"LEAF_LOG_FORMAT": "json"},
			got: func(a *served) any { return a.flags.LogFormat }, want: "json"},
		{name: "log format unknown", args: []string{"--log-format", "xml"}, wantErr: `--log-format "xml": want text or json`},
		{name: "listen address in the environment", env: env{"LEAF_ADDR": "nope"}, wantErr: "LEAF_ADDR=nope: want host:port or :port, e.g. :8080"},
		{name: "flag over a variable of the wrong type", env: env{"LEAF_SEGMENT": "maybe"}, args: []string{"--segment=false"},
			got: func(a *served) any { return a.cfg.Segment }, want: false},
		{name: "count", env: env{"LEAF_MAX_CONNS": "0"}, wantErr: "LEAF_MAX_CONNS=0: want a whole number above 0"},
		{name: "range", args: []string{"--range-max", "1000001"}, wantErr: "--range-max 1000001: want a whole number from 1 to 1000000"},
		{name: "share", args: []string{"--capped-share", "1.5"}, wantErr: "--capped-share 1.5: want a share above 0 and at most 1"},
		{name: "opaque key", env: env{"LEAF_OPAQUE_KEY": "0123456789abcdef,short"}, wantErr: "LEAF_OPAQUE_KEY=(secret): key 2 has 5 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newApp(tt.args, tt.env.get, io.Discard)
			if tt.wantErr != "" {
				if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("newApp(%q) = %v, want a usage error with %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got(a); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// The help names the argument of every flag and shows its variable and its
// default, text quoted and numbers and durations not.
func TestServeHelpNamesArgumentsAndDefaults(t *testing.T) {
	help, _, err := runSplit(t, env{}, "serve", "-h")
	if !errors.Is(err, errHelp) {
		t.Fatalf("serve -h = %v", err)
	}
	blocks := map[string]string{} // "--name=arg" -> its usage, on one line
	for _, b := range regexp.MustCompile(`\n +--`).Split(help, -1)[1:] {
		head, usage, _ := strings.Cut(strings.Join(strings.Fields(b), " "), " ")
		blocks["--"+head] = usage
	}
	for head, suffix := range map[string]string{
		"--addr=address":                 `(env LEAF_ADDR) (default ":8080")`,
		"--snowflake-epoch=milliseconds": "(env LEAF_SNOWFLAKE_EPOCH) (default 1288834974657)",
		"--snowflake-layout=T,W,S":       `(env LEAF_SNOWFLAKE_LAYOUT) (default "41,10,12")`,
		"--snowflake-time-unit=unit":     `(env LEAF_SNOWFLAKE_TIME_UNIT) (default "ms")`,
		"--snowflake-order=order":        `(env LEAF_SNOWFLAKE_ORDER) (default "time,worker,sequence")`,
		"--tag-refresh=duration":         "(env LEAF_TAG_REFRESH) (default 1m0s)",
		"--failover-jump=ids":            "(env LEAF_FAILOVER_JUMP) (default 1000000000)",
		"--store-timeout=duration":       "0 means 2s on MySQL, 10s on SQLite (env LEAF_STORE_TIMEOUT)",
		"--mysql-addrs=host:port":        "never asynchronous replicas (env LEAF_MYSQL_ADDRS)",
		"--log-format=format":            `(env LEAF_LOG_FORMAT) (default "text")`,
		"--log-level=level":              `(env LEAF_LOG_LEVEL) (default "info")`,
		"--snowflake-worker-id=id":       "(env LEAF_SNOWFLAKE_WORKER_ID) (default -1)",
		"--migrate":                      "(env LEAF_MIGRATE) (default true)",
		"--store=NAME=DSN":               "(env LEAF_STORES)",
	} {
		usage, ok := blocks[head]
		if !ok {
			t.Errorf("no %q in\n%s", head, help)
			continue
		}
		if !strings.HasSuffix(usage, suffix) {
			t.Errorf("%s: %q, want it to end in %q", head, usage, suffix)
		}
	}
}

// parsed is the parser of the command words after it read args, as run
// reads them before running the command.
func parsed(t *testing.T, e env, words, args []string) *parser {
	t.Helper()
	p, err := parse(e.get, words, args)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func parse(getenv func(string) string, words, args []string) (*parser, error) {
	p, err := newParser(getenv, io.Discard, io.Discard)
	if err == nil {
		if args, err = p.checkArgs(words, args); err == nil {
			_, err = p.parse(append(words, args...))
		}
	}
	return p, err
}

// newApp reads the command line of `leaf serve` (args, after the word
// serve) and makes its server, as serve does before it opens anything.
func newApp(args []string, getenv func(string) string, stderr io.Writer) (*served, error) {
	p, err := parse(getenv, []string{"serve"}, args)
	if err != nil {
		return nil, err
	}
	return p.root.Serve.server(p, stderr)
}
