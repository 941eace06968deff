package main

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"reflect"
	"slices"
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
			var c serveConfig
			if err := parse(c.flags(), tt.args, tt.env.get, io.Discard); err != nil {
				t.Fatal(err)
			}
			if c.addr != tt.want {
				t.Fatalf("addr = %q, want %q", c.addr, tt.want)
			}
		})
	}
}

func TestEveryServeFlagHasItsVariable(t *testing.T) {
	want := map[string]string{
		"addr": "LEAF_ADDR", "mysql-dsn": "LEAF_MYSQL_DSN", "sqlite-path": "LEAF_SQLITE_PATH",
		"segment": "LEAF_SEGMENT", "snowflake": "LEAF_SNOWFLAKE", "snowflake-worker-id": "LEAF_SNOWFLAKE_WORKER_ID",
		"snowflake-epoch": "LEAF_SNOWFLAKE_EPOCH", "admin-token": "LEAF_ADMIN_TOKEN", "log-format": "LEAF_LOG_FORMAT",
		"snowflake-layout": "LEAF_SNOWFLAKE_LAYOUT", "snowflake-time-unit": "LEAF_SNOWFLAKE_TIME_UNIT",
		"snowflake-order": "LEAF_SNOWFLAKE_ORDER", "metrics-tags": "LEAF_METRICS_TAGS",
		"store": "LEAF_STORES", "store-addrs": "LEAF_STORE_ADDRS",
	}
	var c serveConfig
	fs := c.flags()
	for name, want := range want {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("serve has no --%s", name)
			continue
		}
		if got := variable(f); got != want {
			t.Errorf("--%s reads %s, want %s", name, got, want)
		}
	}
}

func TestFlagsAnywhere(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantArgs []string
		wantStep int64
	}{
		{"flags first", []string{"--step", "5", "y1"}, []string{"y1"}, 5},
		{"flags last", []string{"y1", "--step", "5"}, []string{"y1"}, 5},
		{"interleaved", []string{"a", "--step=5", "b", "-step", "6", "c"}, []string{"a", "b", "c"}, 6},
		{"negative value", []string{"--step", "-1", "y1"}, []string{"y1"}, -1},
		{"double dash", []string{"--step", "5", "--", "--step", "-x"}, []string{"--step", "-x"}, 5},
		{"single dash argument", []string{"-", "--step", "5"}, []string{"-"}, 5},
		{"flag value looks like a flag", []string{"--description", "--step", "y1"}, []string{"y1"}, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("leaf test", flag.ContinueOnError)
			step := fs.Int64("step", 1000, "")
			fs.String("description", "", "")
			if err := parse(fs, tt.args, env{}.get, io.Discard); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fs.Args(), tt.wantArgs) || *step != tt.wantStep {
				t.Fatalf("args %q step %d, want %q step %d", fs.Args(), *step, tt.wantArgs, tt.wantStep)
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
		wantErr string                  // in the usage error; empty: accepted
		got     func(c serveConfig) any // when accepted
		want    any
	}{
		{name: "tag refresh", args: []string{"--tag-refresh", "30s"},
			got: func(c serveConfig) any { return c.refreshTags }, want: 30 * time.Second},
		{name: "tag refresh zero", args: []string{"--tag-refresh", "0"}, wantErr: "--tag-refresh 0s: want a positive duration such as 1m0s"},
		{name: "tag refresh negative in the environment", env: env{"LEAF_TAG_REFRESH": "-1s"}, wantErr: "LEAF_TAG_REFRESH=-1s: want a positive duration"},
		{name: "tag refresh without a unit", args: []string{"--tag-refresh", "5"}, wantErr: `--tag-refresh "5": want a duration such as 500ms, 2s or 1m`},
		{name: "failover jump", args: []string{"--failover-jump", "5"},
			got: func(c serveConfig) any { return c.failoverJump }, want: int64(5)},
		{name: "failover jump zero", args: []string{"--failover-jump", "0"}, wantErr: "--failover-jump 0: want at least 1"},
		{name: "failover jump zero in the environment", env: env{"LEAF_FAILOVER_JUMP": "0"}, wantErr: "LEAF_FAILOVER_JUMP=0: want at least 1"},
		{name: "failover jump not a number", args: []string{"--failover-jump", "x"}, wantErr: `--failover-jump "x": want a whole number`},
		{name: "store timeout", args: []string{"--store-timeout", "1500ms"},
			got: func(c serveConfig) any { return c.storeTimeout }, want: 1500 * time.Millisecond},
		{name: "store timeout negative", args: []string{"--store-timeout", "-1s"}, wantErr: "--store-timeout -1s: want 0 or a positive duration"},
		{name: "mysql addrs", args: append([]string{"--mysql-addrs", "db1:3306, db2:3306"}, dsn...),
			got: func(c serveConfig) any { return c.mysqlAddrs.addrs }, want: []string{"db1:3306", "db2:3306"}},
		{name: "mysql addrs without a port", args: append([]string{"--mysql-addrs", "db1:3306,db2"}, dsn...), wantErr: `--mysql-addrs db1:3306,db2: "db2" is not host:port`},
		{name: "mysql addrs without a DSN", args: []string{"--mysql-addrs", "db1:3306"}, wantErr: "--mysql-addrs needs --mysql-dsn"},
		{name: "log level", args: []string{"--log-level", "DEBUG"},
			got: func(c serveConfig) any { return c.logLevel }, want: slog.LevelDebug},
		{name: "log level unknown", args: []string{"--log-level", "verbose"}, wantErr: `--log-level "verbose": want debug, info, warn or error`},
		{name: "log level unknown in the environment", env: env{"LEAF_LOG_LEVEL": "loud"}, wantErr: `LEAF_LOG_LEVEL="loud": want debug, info, warn or error`},
		{name: "log format", env: env{"LEAF_LOG_FORMAT": "json"},
			got: func(c serveConfig) any { return c.logFormat }, want: "json"},
		{name: "log format unknown", args: []string{"--log-format", "xml"}, wantErr: `--log-format "xml": want text or json`},
		{name: "listen address in the environment", env: env{"LEAF_ADDR": "nope"}, wantErr: "LEAF_ADDR=nope: want host:port or :port, e.g. :8080"},
		{name: "flag over a variable of the wrong type", env: env{"LEAF_SEGMENT": "maybe"}, args: []string{"--segment=false"},
			got: func(c serveConfig) any { return c.segment }, want: false},
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
			if got := tt.got(a.cfg); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// The help names the argument of every flag and shows its default, text
// quoted and numbers and durations not, whether the flag's value is one of
// the flag package's or one of this package's.
func TestServeHelpNamesArgumentsAndDefaults(t *testing.T) {
	_, help, err := runSplit(t, env{}, "serve", "-h")
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve -h = %v", err)
	}
	blocks := map[string]string{} // "--name arg" -> its usage
	for _, b := range strings.Split(help, "\n  --")[1:] {
		head, usage, _ := strings.Cut(b, "\n")
		blocks["--"+head] = strings.TrimSpace(usage)
	}
	for head, suffix := range map[string]string{
		"--addr address":                 `(env LEAF_ADDR) (default ":8080")`,
		"--snowflake-epoch milliseconds": "(env LEAF_SNOWFLAKE_EPOCH) (default 1288834974657)",
		"--snowflake-layout T,W,S":       `(env LEAF_SNOWFLAKE_LAYOUT) (default "41,10,12")`,
		"--snowflake-time-unit unit":     `(env LEAF_SNOWFLAKE_TIME_UNIT) (default "ms")`,
		"--snowflake-order order":        `(env LEAF_SNOWFLAKE_ORDER) (default "time,worker,sequence")`,
		"--tag-refresh duration":         "(env LEAF_TAG_REFRESH) (default 1m0s)",
		"--failover-jump ids":            "(env LEAF_FAILOVER_JUMP) (default 1000000000)",
		"--store-timeout duration":       "0 means 2s on MySQL, 10s on SQLite (env LEAF_STORE_TIMEOUT)",
		"--mysql-addrs host:port":        "never asynchronous replicas (env LEAF_MYSQL_ADDRS)",
		"--log-format format":            `(env LEAF_LOG_FORMAT) (default "text")`,
		"--log-level level":              `(env LEAF_LOG_LEVEL) (default "info")`,
		"--snowflake-worker-id id":       "(env LEAF_SNOWFLAKE_WORKER_ID) (default -1)",
		"--migrate":                      "(env LEAF_MIGRATE) (default true)",
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
