package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/tlsfiles"
)

// storeFlags are the flags of every command that opens the database: one
// store (--mysql-dsn, or --sqlite-path), or several (--store, see
// storesetflags.go).
type storeFlags struct {
	mysqlDSN     string
	mysqlAddrs   addrsFlag
	sqlitePath   string
	sqliteGiven  bool // --sqlite-path was set, not left at its default
	storeTimeout time.Duration
	stores       storesFlag
	storeAddrs   storeAddrsFlag
	tlsCA        string
	tlsName      string
	tls          *store.TLS // read by validate from tlsCA
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mysqlDSN, "mysql-dsn", "", "MySQL DSN `user:pass@tcp(host:3306)/db`; empty uses the embedded SQLite store")
	fs.Var(&f.mysqlAddrs, "mysql-addrs", "comma-separated `host:port` list of the nodes of a synchronous cluster (Galera, Group Replication), used in turn instead of the DSN's address; never asynchronous replicas")
	f.sqlitePath = "leaf.db"
	fs.Var(sqlitePathFlag{f}, "sqlite-path", "the embedded SQLite store's `file`")
	fs.Var((*storeTimeoutFlag)(&f.storeTimeout), "store-timeout", "deadline of each database call, retries included; 0 means "+store.DefaultTimeouts())
	fs.Var(&f.stores, "store", "one of several independent stores serving one number space, as `NAME=DSN`: a MySQL DSN or sqlite:PATH; once per store, the preferred first (for now snowflake worker ids are leased from the first); not with --mysql-dsn or --sqlite-path")
	fs.StringVar(&f.tlsCA, "mysql-tls-ca", "", "CA `file` (PEM) that verifies the MySQL servers' certificates: every connection to MySQL then speaks TLS, never clear, whatever the DSN's tls= says; read again when it changes")
	fs.StringVar(&f.tlsName, "mysql-tls-server-name", "", "`name` the MySQL servers' certificates are verified for, with --mysql-tls-ca; empty: each node's host")
	fs.Var(&f.storeAddrs, "store-addrs", "the nodes of the synchronous cluster of the --store NAME, as `NAME=host:port,host:port`, used in turn instead of its DSN's address; once per such store")
}

// sqlitePathFlag is --sqlite-path. It remembers that it was given: its
// default goes unused beside --store, a path given there is a mistake.
type sqlitePathFlag struct{ f *storeFlags }

func (p sqlitePathFlag) String() string {
	if p.f == nil {
		return ""
	}
	return p.f.sqlitePath
}

func (p sqlitePathFlag) Set(s string) error {
	p.f.sqlitePath, p.f.sqliteGiven = s, true
	return nil
}

// validate checks, once the flags are read, that they name one store, or
// several with --store. The DSN is checked here rather than by a
// flag.Value of its own, as a refused value is shown in the message and a
// DSN holds a password (--store's values show what they refuse without
// it).
func (f *storeFlags) validate() error {
	if err := f.readTLS(); err != nil {
		return err
	}
	if err := f.validateStores(); err != nil || f.several() {
		return err
	}
	if f.mysqlAddrs.given != "" && f.mysqlDSN == "" {
		return fmt.Errorf("%w: --mysql-addrs needs --mysql-dsn for the user, password and database", errUsage)
	}
	if f.mysqlDSN == "" {
		if f.sqlitePath == "" {
			return fmt.Errorf("%w: --sqlite-path is empty and no --mysql-dsn is given: no store to open", errUsage)
		}
		return nil
	}
	// The errors quote no part of the DSN, so the password cannot leak
	// through them.
	if _, err := store.ParseMySQLDSN(f.mysqlDSN); err != nil {
		return fmt.Errorf("%w: --mysql-dsn: %v", errUsage, err)
	}
	return nil
}

// readTLS reads the CA of --mysql-tls-ca.
func (f *storeFlags) readTLS() error {
	if f.tlsCA == "" {
		if f.tlsName != "" {
			return fmt.Errorf("%w: --mysql-tls-server-name needs --mysql-tls-ca", errUsage)
		}
		return nil
	}
	ca, err := tlsfiles.NewCA("--mysql-tls-ca", f.tlsCA, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	f.tls = &store.TLS{CA: ca, ServerName: f.tlsName}
	return nil
}

// config is the stores the flags name, as the app and every command open
// them (app.StoreConfig).
func (f *storeFlags) config() app.StoreConfig {
	return app.StoreConfig{
		MySQLDSN: f.mysqlDSN, MySQLAddrs: f.mysqlAddrs.addrs, MySQLAddrsGiven: f.mysqlAddrs.given,
		SQLitePath: f.sqlitePath, Timeout: f.storeTimeout, Set: f.stores, MySQLTLS: f.tls,
	}
}

// addrsFlag is --mysql-addrs: a comma-separated list of host:port.
type addrsFlag struct {
	given string // as given, for the log
	addrs []string
}

func (a *addrsFlag) String() string { return a.given }

func (a *addrsFlag) Set(s string) error {
	addrs, err := splitAddrs(s)
	if err != nil {
		return valueError{s, err}
	}
	*a = addrsFlag{given: s, addrs: addrs}
	return nil
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

// storeTimeoutFlag is --store-timeout: 0, for the store's default, or a
// positive duration.
type storeTimeoutFlag time.Duration

func (d storeTimeoutFlag) String() string { return time.Duration(d).String() }
func (d storeTimeoutFlag) Get() any       { return time.Duration(d) }

func (d *storeTimeoutFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return valueError{v.String(), errors.New("want 0 or a positive duration")}
	}
	*d = storeTimeoutFlag(v)
	return nil
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
	storeFlag := map[*flag.Flag]bool{}
	fs.VisitAll(func(f *flag.Flag) { storeFlag[f] = true })
	if own != nil {
		own(fs)
	}
	if err := parseFlags(fs, args, getenv, stderr, func(f *flag.Flag) bool { return storeFlag[f] }); err != nil {
		return nil, nil, err
	}
	if err := sf.validate(); err != nil {
		return nil, nil, err
	}
	return sf, fs.Args(), nil
}
