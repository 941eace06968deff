package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
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
	addrs        []string // mysqlAddrs parsed by validate
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
	return nil
}

// open opens the configured store, after validate.
func (f *storeFlags) open(ctx context.Context, opts store.Options) (*store.Store, error) {
	opts.Timeout = f.storeTimeout
	if f.mysqlDSN != "" {
		opts.Addrs = f.addrs
		return store.OpenMySQL(ctx, f.mysqlDSN, opts)
	}
	return store.OpenSQLite(ctx, f.sqlitePath, opts)
}

// describe names the store for logs, without the DSN's password.
func (f *storeFlags) describe() []any {
	if f.mysqlDSN == "" {
		return []any{"store", "sqlite", "path", f.sqlitePath}
	}
	cfg, err := mysql.ParseDSN(f.mysqlDSN)
	if err != nil {
		return []any{"store", "mysql"}
	}
	addr := cfg.Addr
	if f.mysqlAddrs != "" {
		addr = f.mysqlAddrs
	}
	return []any{"store", "mysql", "addr", addr, "database", cfg.DBName, "user", cfg.User}
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
	fs.SetOutput(stderr)
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		f.Usage += fmt.Sprintf(" (env %s)", envName(f.Name))
		if v := getenv(envName(f.Name)); v != "" && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%w: %s=%q: %v", errUsage, envName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
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
