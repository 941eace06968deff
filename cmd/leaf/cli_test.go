package main

// The command line against hostile or careless input: flags after
// arguments, extra arguments, bad values, escape sequences in the
// database, and what each command says it did.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// inEmptyDir runs the test in an empty working directory and fails it if
// anything (a ./leaf.db made by mistake) is left there.
func inEmptyDir(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	t.Cleanup(func() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("left behind in the working directory: %s", e.Name())
		}
	})
}

// runSplit is runCmd with stdout and stderr apart.
func runSplit(t *testing.T, e env, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, e.get, &out, &errOut)
	return out.String(), errOut.String(), err
}

// Item 3 of issue 9, on SQLite: the flags after the name reach the store
// they name, and the output says which store that is.
func TestTagAddFlagsAfterNameSQLite(t *testing.T) {
	inEmptyDir(t)
	path := filepath.Join(t.TempDir(), "chosen.db")
	out, _, err := runSplit(t, env{}, "tag", "add", "--step", "5", "y1", "--sqlite-path", path, "--max-id", "70")
	if err != nil {
		t.Fatal(err)
	}
	if want := "created y1 in sqlite " + path + ": next id 70, step 5\n"; out != want {
		t.Fatalf("tag add said %q, want %q", out, want)
	}
	st := storetest.Open(t, store.SQLite, path)
	if tag, err := st.Tag(context.Background(), "y1"); err != nil || tag.Step != 5 || tag.MaxID != 70 {
		t.Fatalf("Tag(y1) = %+v, %v", tag, err)
	}
}

// The same on MySQL, and migrate with an extra argument touches no store.
func TestFlagsAfterArgumentsMySQL(t *testing.T) {
	inEmptyDir(t)
	dsn := storetest.MySQL(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := runSplit(t, env{}, "migrate", "extra", "--mysql-dsn", dsn); !errors.Is(err, errUsage) {
		t.Fatalf("migrate extra = %v, want a usage error", err)
	}
	// Nothing was migrated: the usage error came before the store.
	if _, _, err := runSplit(t, env{}, "tag", "list", "--mysql-dsn", dsn); err == nil || !strings.Contains(err.Error(), "leaf migrate") {
		t.Fatalf("tag list on an unmigrated database = %v, want an error saying to run leaf migrate", err)
	}

	out, _, err := runSplit(t, env{}, "tag", "add", "--step", "5", "y1", "--mysql-dsn", dsn)
	if err != nil {
		t.Fatal(err)
	}
	where := fmt.Sprintf("mysql %s@tcp(%s)/%s", cfg.User, cfg.Addr, cfg.DBName)
	if want := "created y1 in " + where + ": next id 1, step 5\n"; out != want {
		t.Fatalf("tag add said %q, want %q", out, want)
	}
	st := storetest.Open(t, store.MySQL, dsn)
	if tag, err := st.Tag(context.Background(), "y1"); err != nil || tag.Step != 5 {
		t.Fatalf("Tag(y1) = %+v, %v", tag, err)
	}
	out, _, err = runSplit(t, env{}, "migrate", "--mysql-dsn", dsn)
	if err != nil || out != "no pending migration: "+where+" is up to date\n" {
		t.Fatalf("migrate = %q, %v", out, err)
	}
}

// A description MySQL refuses (not UTF-8) is a usage error too, though
// only the database could tell.
func TestTagAddDescriptionMySQLRefuses(t *testing.T) {
	inEmptyDir(t)
	dsn := storetest.MySQL(t)
	_, _, err := runSplit(t, env{}, "tag", "add", "u1", "--description", "bad\xff", "--mysql-dsn", dsn)
	if !errors.Is(err, errUsage) || !errors.Is(err, segment.ErrInvalidDescription) {
		t.Fatalf("tag add with a description that is not UTF-8 = %v, want a usage error", err)
	}
}

// An ordered tag is never opaque, and settings need a format: asking for
// them is a usage error, before any store is opened. An ordered formatted
// tag is created ordered.
func TestTagAddOrderedRules(t *testing.T) {
	inEmptyDir(t)
	for _, tc := range []struct {
		extra []string
		says  string
	}{
		{[]string{"--opaque", "63", "--opaque-key", "0123456789abcdef"}, "opaque tag is not ordered"},
		{[]string{"--time-zone", "UTC"}, "need a format"},
	} {
		args := append([]string{"tag", "add", "o", "--ordered", "--sqlite-path", "leaf.db"}, tc.extra...)
		_, _, err := runSplit(t, env{}, args...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.says) {
			t.Fatalf("%q = %v, want a usage error saying %q", args, err, tc.says)
		}
	}
	if _, err := os.Stat("leaf.db"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the database was created: %v", err)
	}
	db := filepath.Join(t.TempDir(), "leaf.db")
	out, _, err := runSplit(t, env{}, "tag", "add", "o", "--ordered", "--format", "O-{seq}", "--sqlite-path", db)
	if err != nil || !strings.Contains(out, "ordered") {
		t.Fatalf("an ordered formatted tag: %q, %v", out, err)
	}
	out, _, err = runSplit(t, env{}, "tag", "add", "c", "--format", "C-{seq:3!}", "--sqlite-path", db)
	if err != nil || !strings.Contains(out, "ordered") {
		t.Fatalf("a capped formatted tag: %q, %v", out, err)
	}
}

func TestWhereHidesThePassword(t *testing.T) {
	a, err := newApp([]string{"--mysql-dsn", "leaf:s3cret@tcp(db.example:3306)/ids?parseTime=true"}, env{}.get, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.cfg.Entries()[0].Where(nil), "mysql leaf@tcp(db.example:3306)/ids"; got != want {
		t.Fatalf("where = %q, want %q", got, want)
	}
	// Nor does a failure to connect print it.
	out, err := runCmd(t, env{}, "migrate", "--mysql-dsn", "leaf:s3cret@tcp(127.0.0.1:1)/ids", "--store-timeout", "1s")
	if err == nil || errors.Is(err, errUsage) {
		t.Fatalf("migrate against a closed port = %v", err)
	}
	if strings.Contains(out+err.Error(), "s3cret") {
		t.Fatalf("the password is printed: %s%v", out, err)
	}
}

func TestUnknownDatabaseSaysToCreateIt(t *testing.T) {
	inEmptyDir(t)
	cfg, err := mysql.ParseDSN(storetest.MySQL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = "leaf_test_never_created"
	_, _, err = runSplit(t, env{}, "migrate", "--mysql-dsn", cfg.FormatDSN())
	if err == nil || !strings.Contains(err.Error(), "CREATE DATABASE `leaf_test_never_created`") {
		t.Fatalf("migrate on a missing database = %v, want the CREATE DATABASE to run", err)
	}
}

func TestSnowflakeEpoch(t *testing.T) {
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	tests := []struct {
		name string
		env  env
		args []string
		want string // in the error; empty: accepted
	}{
		{"default", env{}, nil, ""},
		{"one", env{}, []string{"--snowflake-epoch", "1"}, ""},
		{"zero", env{}, []string{"--snowflake-epoch", "0"}, "--snowflake-epoch 0: not accepted"},
		{"zero in the environment", env{"LEAF_SNOWFLAKE_EPOCH": "0"}, nil, "LEAF_SNOWFLAKE_EPOCH=0: not accepted"},
		{"negative", env{}, []string{"--snowflake-epoch=-1"}, "before 1970"},
		{"negative in the environment", env{"LEAF_SNOWFLAKE_EPOCH": "-1"}, nil, "LEAF_SNOWFLAKE_EPOCH=-1: invalid snowflake settings: epoch -1 is negative, before 1970"},
		{"future", env{}, []string{"--snowflake-epoch", future}, "in the future"},
		{"flag over a bad variable", env{"LEAF_SNOWFLAKE_EPOCH": "0"}, []string{"--snowflake-epoch", "1288834974657"}, ""},
		{"not a number", env{}, []string{"--snowflake-epoch", "2010-11-04"}, "want a whole number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newApp(tt.args, tt.env.get, io.Discard)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if want := int64(snowflake.DefaultEpochMs); len(tt.args) == 0 && a.cfg.EpochMs != want {
					t.Fatalf("epoch %d, want %d", a.cfg.EpochMs, want)
				}
				return
			}
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("newApp(%q) = %v, want a usage error with %q", tt.args, err, tt.want)
			}
		})
	}
}

// A serve whose epoch is refused opens nothing.
func TestServeRefusesEpochZeroBeforeOpening(t *testing.T) {
	inEmptyDir(t)
	// A serve that starts anyway returns when ctx ends, rather than never.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--snowflake-epoch", "0"}, env{}.get, io.Discard, io.Discard)
	if !errors.Is(err, errUsage) {
		t.Fatalf("serve --snowflake-epoch 0 = %v, want a usage error", err)
	}
}

// Item 14 of issue 9: rows put in the database by someone else (a Java
// Leaf's admin, a SQL console) cannot drive the terminal of whoever lists
// them, and wide characters keep the columns aligned.
func TestTagListEscapesWhatTheDatabaseHolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaf.db")
	st := storetest.Open(t, store.SQLite, path)
	rows := []struct{ tag, desc string }{
		{"evil\x1b]0;pwned\x07", "red \x1b[31malert\x1b[0m and a NUL \x00 here"},
		{"订单", "中文描述"},
		{"ab", ""},
		{"rtl\u202e", "line\nbreak\ttab"},
	}
	for _, r := range rows {
		if _, err := st.DB().Exec("INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, 1, 10, ?)", r.tag, r.desc); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := runSplit(t, env{"LEAF_SQLITE_PATH": path}, "tag", "list")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			t.Fatalf("control byte %#x at %d in\n%s", c, i, out)
		}
	}
	for _, want := range []string{`evil\x1b]0;pwned\a`, `red \x1b[31malert\x1b[0m and a NUL \x00 here`, `rtl\u202e`, `line\nbreak\ttab`} {
		if !strings.Contains(out, want) {
			t.Errorf("%q not in\n%s", want, out)
		}
	}
	// MAX_ID starts in the same terminal column on every line.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(rows)+1 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	col := -1
	for _, l := range lines {
		field := "MAX_ID"
		if !strings.HasPrefix(l, "TAG") {
			field = "  1  "
		}
		i := strings.Index(l, field)
		if i < 0 {
			t.Fatalf("no %q in line %q", field, l)
		}
		if field != "MAX_ID" {
			i += 2
		}
		c := displayWidth(l[:i])
		if col >= 0 && c != col {
			t.Fatalf("MAX_ID at column %d and %d:\n%s", col, c, out)
		}
		col = c
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing blanks in %q", l)
		}
	}
}

// tag list reads; it creates no database where there is none.
func TestTagListCreatesNoDatabase(t *testing.T) {
	inEmptyDir(t)
	_, _, err := runSplit(t, env{}, "tag", "list")
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("tag list without a database = %v, want a failure saying it does not exist", err)
	}
}

// tag add's own flags have no environment variables: a LEAF_STEP left in
// a shell does not change every tag created from it.
func TestTagAddReadsNoVariablesOfItsOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaf.db")
	e := env{"LEAF_SQLITE_PATH": path, "LEAF_STEP": "7", "LEAF_MAX_ID": "99", "LEAF_DESCRIPTION": "from the environment"}
	if out, err := runCmd(t, e, "tag", "add", "t1"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	st := storetest.Open(t, store.SQLite, path)
	tag, err := st.Tag(context.Background(), "t1")
	if err != nil || tag.Step != segment.DefaultStep || tag.MaxID != 1 || tag.Description != "" {
		t.Fatalf("Tag(t1) = %+v, %v, want the defaults", tag, err)
	}
	help, _, err := runSplit(t, e, "tag", "add", "-h")
	if !errors.Is(err, errHelp) || strings.Contains(help, "LEAF_STEP") || !strings.Contains(help, "LEAF_SQLITE_PATH") {
		t.Fatalf("tag add -h = %v:\n%s", err, help)
	}
}

// Item 15 of issue 9: migrate says what it applied, or that nothing was
// pending; serve logs the same.
func TestMigrateSaysWhatItApplied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaf.db")
	e := env{"LEAF_SQLITE_PATH": path}
	out, _, err := runSplit(t, e, "migrate")
	if err != nil {
		t.Fatal(err)
	}
	want := "applied 00001_leaf_alloc.sql (version 1) to sqlite " + path + "\n" +
		"applied 00002_leaf_worker_lease.sql (version 2) to sqlite " + path + "\n" +
		"applied 00003_leaf_worker_lease_instance.sql (version 3) to sqlite " + path + "\n" +
		"applied 00004_leaf_store.sql (version 4) to sqlite " + path + "\n" +
		"applied 00005_leaf_worker_lease_16_bit_ids.sql (version 5) to sqlite " + path + "\n" +
		"applied 00006_leaf_sequence.sql (version 6) to sqlite " + path + "\n" +
		"applied 00007_leaf_tag_format.sql (version 7) to sqlite " + path + "\n" +
		"applied 00008_leaf_db_start.sql (version 8) to sqlite " + path + "\n" +
		"applied 00009_leaf_db_run.sql (version 9) to sqlite " + path + "\n" +
		"applied 00010_leaf_tag_bound.sql (version 10) to sqlite " + path + "\n"
	if out != want {
		t.Fatalf("first migrate said\n%s\nwant\n%s", out, want)
	}
	out, _, err = runSplit(t, e, "migrate")
	if want := "no pending migration: sqlite " + path + " is up to date\n"; err != nil || out != want {
		t.Fatalf("second migrate = %q, %v, want %q", out, err, want)
	}
}

func TestServeLogsMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaf.db")
	first := startApp(t, env{"LEAF_SQLITE_PATH": path}, "--snowflake=false")
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 3; v++ {
		if want := fmt.Sprintf(`level=INFO msg="migration applied" version=%d name=0000%d_`, v, v); !strings.Contains(first.logs.String(), want) {
			t.Fatalf("no %q in\n%s", want, first.logs.String())
		}
	}
	second := startApp(t, env{"LEAF_SQLITE_PATH": path}, "--snowflake=false")
	if err := second.stop(); err != nil {
		t.Fatal(err)
	}
	if logs := second.logs.String(); !strings.Contains(logs, `level=INFO msg="no pending migration"`) || strings.Contains(logs, "migration applied") {
		t.Fatalf("second start logged\n%s", logs)
	}
}

// docs/migrating-from-leaf.md's advice for running beside a Java Leaf's
// snowflake: a row in leaf_worker_lease that never expires keeps its worker
// id from ever being leased.
func TestReservedWorkerIDsAreNotLeased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaf.db")
	st := storetest.Open(t, store.SQLite, path)
	for id := range 4 {
		if _, err := st.DB().Exec(`INSERT INTO leaf_worker_lease (worker_id, holder, expires_ms) VALUES (?, 'java-leaf', 32503680000000)`, id); err != nil {
			t.Fatal(err)
		}
	}
	a := startApp(t, env{"LEAF_SQLITE_PATH": path}, "--segment=false")
	if w := a.Generator().WorkerID(); w != 4 {
		t.Fatalf("worker id %d, want 4, the first not reserved", w)
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, 0, ""},
		{"help", errHelp, 0, ""},
		{"usage", helpHint{fmt.Errorf("%w: bad", errUsage), "leaf tag add"}, 2, "leaf: usage: bad\nRun 'leaf tag add -h' for its usage.\n"},
		{"failure", errors.New("database gone"), 1, "leaf: database gone\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if code := exitCode(tt.err, &b); code != tt.code || b.String() != tt.stderr {
				t.Fatalf("exitCode = %d, %q; want %d, %q", code, b.String(), tt.code, tt.stderr)
			}
		})
	}
}

// Item 6 of issue 9: command lines a careless or hostile user may type.
// Each is a usage error (exit status 2), and none leaves a database behind.
func TestHostileCommandLines(t *testing.T) {
	inEmptyDir(t)
	long := strings.Repeat("x", segment.MaxTagLen+1)
	tests := []struct {
		name string
		env  env
		args []string
		want string // in the error
	}{
		{"empty name", env{}, []string{"tag", "add", ""}, "empty"},
		{"two names", env{}, []string{"tag", "add", "a", "b"}, "one NAME"},
		{"step zero", env{}, []string{"tag", "add", "x", "--step", "0"}, "invalid step"},
		{"step in exponent form", env{}, []string{"tag", "add", "x", "--step", "1e3"}, `--step "1e3": want a whole number`},
		{"step too big", env{}, []string{"tag", "add", "x", "--step", "1000001"}, "invalid step"},
		{"step beyond int64", env{}, []string{"tag", "add", "x", "--step", "99999999999999999999"}, "out of range"},
		{"max id negative", env{}, []string{"tag", "add", "x", "--max-id", "-1"}, "invalid max_id"},
		{"max id at the int64 maximum", env{}, []string{"tag", "add", "x", "--max-id", "9223372036854775807"}, "invalid max_id"},
		{"description too long", env{}, []string{"tag", "add", "x", "--description", strings.Repeat("d", 257)}, "invalid description"},
		{"name too long", env{}, []string{"tag", "add", long}, "invalid biz tag"},
		{"dot dot", env{}, []string{"tag", "add", ".."}, "invalid biz tag"},
		{"dot", env{}, []string{"tag", "add", "."}, "invalid biz tag"},
		{"escape in name", env{}, []string{"tag", "add", "a\x1b[2Jb"}, `"a\x1b[2Jb"`},
		{"newline in name", env{}, []string{"tag", "add", "a\nb"}, "control character"},
		{"not UTF-8", env{}, []string{"tag", "add", "a\xffb"}, "UTF-8"},
		{"unknown flag", env{}, []string{"tag", "add", "x", "--nope"}, "unknown flag --nope"},
		{"flag without value", env{}, []string{"tag", "add", "x", "--step"}, "--step needs a value"},
		{"bad flag syntax", env{}, []string{"tag", "add", "x", "---step=5"}, "bad flag syntax"},
		{"tag list argument", env{}, []string{"tag", "list", "extra"}, "no arguments"},
		{"migrate argument", env{}, []string{"migrate", "extra"}, "no arguments"},
		{"serve argument after a flag", env{}, []string{"serve", "--addr", "127.0.0.1:0", "extra"}, "no arguments"},
		{"boolean with a separate value", env{}, []string{"serve", "--segment", "false"}, "--segment=false"},
		{"bad boolean variable", env{"LEAF_MIGRATE": "nope"}, []string{"serve"}, "LEAF_MIGRATE=\"nope\": want true or false"},
		{"bad duration", env{}, []string{"migrate", "--store-timeout", "5"}, "want a duration"},
		{"empty sqlite path", env{}, []string{"migrate", "--sqlite-path", ""}, "--sqlite-path is empty"},
		{"malformed DSN", env{}, []string{"migrate", "--mysql-dsn", "root@127.0.0.1/leaf"}, "--mysql-dsn"},
		{"DSN without database", env{}, []string{"tag", "list", "--mysql-dsn", "root@tcp(127.0.0.1:3306)/"}, "names no database"},
		{"version argument", env{}, []string{"version", "extra"}, "no arguments"},
		{"no command", env{}, nil, "no command"},
		{"tag alone", env{}, []string{"tag"}, "subcommand"},
		{"unknown tag subcommand", env{}, []string{"tag", "remove", "x"}, `"remove"`},
		{"unknown command with escapes", env{}, []string{"\x1b[2J"}, `"\x1b[2J"`},
		{"unknown flag with escapes", env{}, []string{"migrate", "--\x1b[2J"}, `--\x1b[2J`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runSplit(t, tt.env, tt.args...)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run(%q) = %v, want a usage error with %q", tt.args, err, tt.want)
			}
			var msg bytes.Buffer
			if code := exitCode(err, &msg); code != 2 {
				t.Fatalf("exit status %d, want 2", code)
			}
			if i := strings.IndexFunc(msg.String(), func(r rune) bool { return r < 0x20 && r != '\n' }); i >= 0 {
				t.Fatalf("control character in the message %q", msg.String())
			}
		})
	}
}

// A command with subcommands refuses a missing or unknown one with its own
// usage, and names no command line to run with -h: leaf sequence drop has
// none.
func TestUnknownSubcommand(t *testing.T) {
	inEmptyDir(t)
	for _, group := range []string{"tag", "sequence", "store"} {
		for _, args := range [][]string{{group}, {group, "drop"}} {
			_, errOut, err := runSplit(t, env{}, args...)
			if !errors.Is(err, errUsage) {
				t.Fatalf("leaf %q = %v, want a usage error", args, err)
			}
			if !strings.Contains(errOut, "leaf "+group+" ") {
				t.Fatalf("leaf %q printed %q, want the usage of leaf %s", args, errOut, group)
			}
			var msg bytes.Buffer
			if code := exitCode(err, &msg); code != 2 || strings.Contains(msg.String(), "Run '") {
				t.Fatalf("leaf %q: exit status %d with %q, want 2 and no command to run with -h", args, code, msg.String())
			}
		}
	}
}

// Every command and subcommand answers -h, --help and leaf help with its
// usage and exit status 0.
func TestHelpOfEveryCommand(t *testing.T) {
	inEmptyDir(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "Usage: leaf <command>"},
		{[]string{"--help"}, "store retire <name> [flags]"},
		{[]string{"tag", "-h"}, "tag add <name> [flags]"},
		{[]string{"help", "tag"}, "Usage: leaf tag <command>"},
		{[]string{"serve", "--help"}, "Usage: leaf serve [flags]"},
		{[]string{"serve", "--addr", "x", "-h"}, "--snowflake-epoch"},
		{[]string{"tag", "add", "x", "--step", "1e3", "-h"}, "Usage: leaf tag add <name> [flags]"},
		{[]string{"migrate", "-help"}, "Usage: leaf migrate [flags]"},
		{[]string{"tag", "add", "x", "--help"}, "Usage: leaf tag add <name> [flags]"},
		{[]string{"help", "tag", "add"}, "Usage: leaf tag add <name> [flags]"},
		{[]string{"tag", "list", "-h"}, "Usage: leaf tag list [flags]"},
		{[]string{"help", "serve"}, "--mysql-dsn"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, err := runSplit(t, env{}, tt.args...)
			if code := exitCode(err, io.Discard); code != 0 {
				t.Fatalf("exit status %d (%v)", code, err)
			}
			if !strings.Contains(out+errOut, tt.want) {
				t.Fatalf("no %q in\n%s%s", tt.want, out, errOut)
			}
		})
	}
}
