package main

import (
	"flag"
	"io"
	"slices"
	"testing"
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
	}
	var c serveConfig
	fs := c.flags()
	for name, variable := range want {
		if fs.Lookup(name) == nil {
			t.Errorf("serve has no --%s", name)
		}
		if got := envName(name); got != variable {
			t.Errorf("--%s reads %s, want %s", name, got, variable)
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
