package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
)

// storeFlags are the flags of every command that opens the database.
type storeFlags struct {
	mysqlDSN     string
	mysqlAddrs   string
	sqlitePath   string
	storeTimeout time.Duration
	addrs        []string      // mysqlAddrs parsed by validate
	mysqlCfg     *mysql.Config // mysqlDSN parsed by validate; nil for SQLite
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mysqlDSN, "mysql-dsn", "", "MySQL DSN `user:pass@tcp(host:3306)/db?parseTime=true`; empty uses the embedded SQLite store")
	fs.StringVar(&f.mysqlAddrs, "mysql-addrs", "", "comma-separated `host:port` list of the nodes of a synchronous cluster (Galera, Group Replication), used in turn instead of the DSN's address; never asynchronous replicas")
	fs.StringVar(&f.sqlitePath, "sqlite-path", "leaf.db", "the embedded SQLite store's `file`")
	fs.DurationVar(&f.storeTimeout, "store-timeout", 0, "deadline of each database call, retries included; 0 means 2s on MySQL, 10s on SQLite")
}

// validate checks the flags once parsed; open needs it to have run.
func (f *storeFlags) validate() error {
	var err error
	if f.addrs, err = splitAddrs(f.mysqlAddrs); err != nil {
		return fmt.Errorf("%w: --mysql-addrs: %v", errUsage, err)
	}
	if f.mysqlAddrs != "" && f.mysqlDSN == "" {
		return fmt.Errorf("%w: --mysql-addrs needs --mysql-dsn for the user, password and database", errUsage)
	}
	if f.storeTimeout < 0 {
		return fmt.Errorf("%w: --store-timeout %v: want 0 or a positive duration", errUsage, f.storeTimeout)
	}
	if f.mysqlDSN == "" {
		f.mysqlCfg = nil
		if f.sqlitePath == "" {
			return fmt.Errorf("%w: --sqlite-path is empty and no --mysql-dsn is given: no store to open", errUsage)
		}
		return nil
	}
	// The errors quote no part of the DSN, so the password cannot leak
	// through them.
	if f.mysqlCfg, err = store.ParseMySQLDSN(f.mysqlDSN); err != nil {
		return fmt.Errorf("%w: --mysql-dsn: %v", errUsage, err)
	}
	return nil
}

// mysqlUnknownDatabase is MySQL's answer for a database that does not
// exist (ER_BAD_DB_ERROR).
const mysqlUnknownDatabase = 1049

// open opens the configured store, after validate.
func (f *storeFlags) open(ctx context.Context, opts store.Options) (*store.Store, error) {
	opts.Timeout = f.storeTimeout
	if f.mysqlDSN == "" {
		return store.OpenSQLite(ctx, f.sqlitePath, opts)
	}
	opts.Addrs = f.addrs
	st, err := store.OpenMySQL(ctx, f.mysqlDSN, opts)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == mysqlUnknownDatabase && f.mysqlCfg != nil {
		// leaf creates tables, never the database: that needs a privilege
		// the service's user should not have.
		return nil, fmt.Errorf("%w; create it first: CREATE DATABASE `%s` CHARACTER SET utf8mb4", err, f.mysqlCfg.DBName)
	}
	return st, err
}

// kind names the store's kind, "mysql" or "sqlite", without an address.
func (f *storeFlags) kind() string {
	if f.mysqlDSN == "" {
		return "sqlite"
	}
	return "mysql"
}

// describe names the store for logs, without the DSN's password.
func (f *storeFlags) describe() []any {
	if f.mysqlDSN == "" {
		return []any{"store", "sqlite", "path", f.sqlitePath}
	}
	cfg, err := store.ParseMySQLDSN(f.mysqlDSN)
	if err != nil {
		return []any{"store", "mysql"}
	}
	addr := cfg.Addr
	if f.mysqlAddrs != "" {
		addr = f.mysqlAddrs
	}
	return []any{"store", "mysql", "addr", addr, "database", cfg.DBName, "user", cfg.User}
}

// where names the store st for a person, as in "created orders in mysql
// leaf@tcp(db:3306)/leaf": the node in use, never the password.
func (f *storeFlags) where(st *store.Store) string {
	if f.mysqlCfg == nil {
		return "sqlite " + f.sqlitePath
	}
	addr := f.mysqlCfg.Addr
	if st != nil && st.Addr() != "" {
		addr = st.Addr()
	}
	return fmt.Sprintf("mysql %s@%s(%s)/%s", f.mysqlCfg.User, f.mysqlCfg.Net, addr, f.mysqlCfg.DBName)
}

// envName is the environment variable of a flag: LEAF_ and the flag's name
// in capitals, dashes as underscores.
func envName(flagName string) string {
	return "LEAF_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse parses args into fs after setting every flag from its environment
// variable, so that a flag on the command line wins over the variable.
// -h prints the flags and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) error {
	return parseFlags(fs, args, getenv, stderr, func(string) bool { return true })
}

// parseFlags is parse where only the flags for which withEnv is true read
// their environment variable.
//
// Flags and arguments may come in any order (leaf tag add NAME --step 5 as
// well as leaf tag add --step 5 NAME): the flag package alone would stop at
// the first argument and leave every flag after it unread, silently. After
// "--" everything is an argument. fs.Args() holds the arguments afterwards.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer, withEnv func(string) bool) error {
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(fs) }
	sources := map[string]string{} // flag name -> what set it, for messages

	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if !withEnv(f.Name) {
			return
		}
		name := envName(f.Name)
		f.Usage += fmt.Sprintf(" (env %s)", name)
		v := getenv(name)
		if v == "" || envErr != nil {
			return
		}
		source := name + "="
		if err := fs.Set(f.Name, v); err != nil {
			envErr = fmt.Errorf("%w: %s%q: %s", errUsage, source, v, badValue(f, v, err))
		}
		sources[f.Name] = source
	})

	var positional []string
	var argErr error
	for i := 0; i < len(args) && argErr == nil; i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		name := strings.TrimPrefix(arg[1:], "-")
		value, hasValue := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, value, hasValue = name[:k], name[k+1:], true
		}
		if name == "" || name[0] == '-' || name[0] == '=' {
			argErr = fmt.Errorf("%w: bad flag syntax %q", errUsage, arg)
			break
		}
		f := fs.Lookup(name)
		if f == nil {
			if name == "h" || name == "help" {
				fs.Usage()
				return flag.ErrHelp
			}
			argErr = fmt.Errorf("%w: unknown flag %s", errUsage, printable("--"+name))
			break
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if !hasValue {
				value = "true"
				// --segment false sets --segment and leaves "false" as an
				// argument; say what was meant.
				if i+1 < len(args) {
					if _, err := strconv.ParseBool(args[i+1]); err == nil {
						argErr = fmt.Errorf("%w: --%s %s: a true/false flag takes its value after '=': --%s=%s", errUsage, name, args[i+1], name, args[i+1])
						break
					}
				}
			}
		} else if !hasValue {
			if i+1 == len(args) {
				argErr = fmt.Errorf("%w: --%s needs a value", errUsage, name)
				break
			}
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			argErr = fmt.Errorf("%w: --%s %q: %s", errUsage, name, value, badValue(f, value, err))
			break
		}
		sources[name] = "--" + name + " "
	}
	if argErr != nil {
		return argErr
	}
	if envErr != nil {
		return envErr
	}
	// Hand the arguments to fs, behind "--" so that none is read as a flag.
	if err := fs.Parse(append([]string{"--"}, positional...)); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	for _, name := range slices.Sorted(maps.Keys(flagRules)) {
		rule := flagRules[name]
		f := fs.Lookup(name)
		if f == nil || sources[name] == "" {
			continue
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			continue
		}
		if err := rule(g.Get()); err != nil {
			return fmt.Errorf("%w: %s%s: %v", errUsage, sources[name], f.Value, err)
		}
	}
	return nil
}

// badValue says what is wrong with value for f, in a person's terms
// rather than the flag package's ("parse error").
func badValue(f *flag.Flag, value string, err error) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err.Error()
	}
	switch g.Get().(type) {
	case bool:
		return "want true or false"
	case time.Duration:
		return "want a duration such as 500ms, 2s or 1m"
	case int, int64:
		if _, perr := strconv.ParseInt(value, 0, 64); errors.Is(perr, strconv.ErrRange) {
			return "out of range"
		}
		return "want a whole number"
	}
	return err.Error()
}

// flagRules are checks of a flag's value that its type cannot make. They
// run on a value set by a variable or on the command line, before anything
// is opened, so that a bad one is a usage error and not a failure halfway
// through a start.
var flagRules = map[string]func(any) error{
	"snowflake-epoch":     checkEpoch,
	"snowflake-layout":    checkLayoutSyntax,
	"snowflake-time-unit": checkTimeUnit,
	"tag-refresh":         checkTagRefresh,
	"addr":                checkAddr,
}

// defaultLayoutBits is --snowflake-layout's default: Leaf's layout.
const defaultLayoutBits = "41,10,12"

// parseLayout reads --snowflake-layout (three widths, "41,10,12") and
// --snowflake-time-unit ("ms" or "s"). It checks only their syntax: the
// rules of a layout are snowflake.Layout.Validate's.
func parseLayout(bits, unit string) (snowflake.Layout, error) {
	if err := checkLayoutSyntax(bits); err != nil {
		return snowflake.Layout{}, fmt.Errorf("%w: --snowflake-layout %s: %v", errUsage, printable(bits), err)
	}
	if err := checkTimeUnit(unit); err != nil {
		return snowflake.Layout{}, fmt.Errorf("%w: --snowflake-time-unit %s: %v", errUsage, printable(unit), err)
	}
	var w [3]int
	for i, f := range strings.Split(bits, ",") {
		w[i], _ = strconv.Atoi(strings.TrimSpace(f))
	}
	u, _ := snowflake.ParseUnit(unit)
	return snowflake.Layout{Unit: u, TimeBits: w[0], WorkerBits: w[1], SequenceBits: w[2]}, nil
}

// checkLayoutSyntax wants three whole numbers separated by commas.
func checkLayoutSyntax(v any) error {
	s, _ := v.(string)
	fields := strings.Split(s, ",")
	if len(fields) != 3 {
		return fmt.Errorf("want the bits of time, worker id and sequence as T,W,S, e.g. %s", defaultLayoutBits)
	}
	for _, f := range fields {
		if _, err := strconv.Atoi(strings.TrimSpace(f)); err != nil {
			return fmt.Errorf("%s is not a number of bits; want T,W,S, e.g. %s", printable(strings.TrimSpace(f)), defaultLayoutBits)
		}
	}
	return nil
}

// checkTimeUnit wants ms or s.
func checkTimeUnit(v any) error {
	s, _ := v.(string)
	if _, ok := snowflake.ParseUnit(s); !ok {
		return errors.New("want ms (milliseconds) or s (seconds)")
	}
	return nil
}

// checkTagRefresh wants a positive interval: segment.Options reads 0 as
// "the default" and a negative one as "never", and never would silently
// stop the search for rows gone back in time (README, "High availability").
func checkTagRefresh(v any) error {
	if d, ok := v.(time.Duration); !ok || d <= 0 {
		return fmt.Errorf("want a positive duration such as %v", segment.DefaultRefreshInterval)
	}
	return nil
}

// checkAddr wants host:port, so that a bad address is a usage error before
// the store is opened and migrated rather than a failure after.
func checkAddr(v any) error {
	s, _ := v.(string)
	if _, _, err := net.SplitHostPort(s); err != nil {
		return fmt.Errorf("want host:port or :port, e.g. :8080 (%v)", err)
	}
	return nil
}

// checkEpoch accepts the epochs that snowflake.CheckEpoch does but 0,
// from 1 ms after the Unix epoch to now. Zero is refused rather than
// honoured: snowflake.Settings reads an EpochMs of 0 as "the default", so
// 0 used to become 1288834974657 without a word. Honouring it would need a
// way to say "unset" other than 0 in the snowflake settings; what is lost
// is small, as the 41 bits counted from 1970 run out in 2039.
func checkEpoch(v any) error {
	ms, ok := v.(int64)
	if !ok {
		return fmt.Errorf("not a number of milliseconds")
	}
	if ms == 0 {
		return fmt.Errorf("not accepted (0 used to mean the default; an epoch of 1970 would run out in 2039): give the epoch in Unix milliseconds, e.g. the default %d", snowflake.DefaultEpochMs)
	}
	return snowflake.CheckEpoch(ms, time.Now())
}

// synopses are the first lines of each command's -h.
var synopses = map[string]string{
	"leaf serve":    "Usage: leaf serve [flags]\n\nRuns the service; applies pending migrations first unless --migrate=false.\nEvery flag has an environment variable, shown with it; a flag wins over its variable.",
	"leaf migrate":  "Usage: leaf migrate [flags]\n\nApplies the pending migrations to the store, says which, and exits.",
	"leaf tag add":  "Usage: leaf tag add NAME [flags]\n\nCreates the tag NAME in the store (applying pending migrations first).\nFlags may come before or after NAME; put -- before a NAME that begins with '-'.",
	"leaf tag list": "Usage: leaf tag list [flags]\n\nLists the tags of the store with max_id, step, last update and description.\nControl characters in names and descriptions are shown escaped (\\x1b, \\u202e, \\\\).",
}

// printUsage writes the synopsis of fs's command and its flags.
func printUsage(fs *flag.FlagSet) {
	w := fs.Output()
	if s, ok := synopses[fs.Name()]; ok {
		fmt.Fprintf(w, "%s\n\nFlags:\n", s)
	} else {
		fmt.Fprintf(w, "Usage of %s:\n", fs.Name())
	}
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "0" && d != "0s" && d != "false" {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					d = strconv.Quote(d)
				}
			}
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

// newLogger returns the slog logger for format "text" or "json" at level
// "debug", "info", "warn" or "error".
func newLogger(format, level string, w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", errUsage, level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: want text or json", errUsage, format)
}
