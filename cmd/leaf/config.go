package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/store"
)

// storeFlags are the flags of every command that opens the database.
type storeFlags struct {
	mysqlDSN   string
	sqlitePath string
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mysqlDSN, "mysql-dsn", "", "MySQL DSN `user:pass@tcp(host:3306)/db?parseTime=true`; empty uses the embedded SQLite store")
	fs.StringVar(&f.sqlitePath, "sqlite-path", "leaf.db", "the embedded SQLite store's `file`")
}

// open opens the configured store.
func (f *storeFlags) open(ctx context.Context) (*store.Store, error) {
	if f.mysqlDSN != "" {
		return store.OpenMySQL(ctx, f.mysqlDSN)
	}
	return store.OpenSQLite(ctx, f.sqlitePath)
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
	return []any{"store", "mysql", "addr", cfg.Addr, "database", cfg.DBName, "user", cfg.User}
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

// newLogger returns the slog logger for format "text" or "json".
func newLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: want text or json", errUsage, format)
}
