package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

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

// splitAddrs parses a comma-separated list of host:port.
func splitAddrs(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("%q is not host:port: %v", a, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// commandLine parses the command line of a one-shot command: the store
// flags, which read their environment variables as serve's do, and the
// command's own flags (own), which do not: a LEAF_STEP left in a shell by
// someone would silently change every tag created there. It returns the
// store flags, validated, and the arguments.
func commandLine(name string, args []string, getenv func(string) string, stderr io.Writer, own func(*flag.FlagSet)) (*storeFlags, []string, error) {
	sf := &storeFlags{}
	fs := flag.NewFlagSet("leaf "+name, flag.ContinueOnError)
	sf.register(fs)
	fromEnv := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { fromEnv[f.Name] = true })
	if own != nil {
		own(fs)
	}
	if err := parseFlags(fs, args, getenv, stderr, func(n string) bool { return fromEnv[n] }); err != nil {
		return nil, nil, err
	}
	if err := sf.validate(); err != nil {
		return nil, nil, err
	}
	return sf, fs.Args(), nil
}
