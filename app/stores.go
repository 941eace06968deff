package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// StoreConfig is where the ids live: one store (a MySQL database, with the
// nodes of its synchronous cluster, or an SQLite file), or several
// independent stores serving one number space (Set). The command line
// reads it from --mysql-dsn and --mysql-addrs, --sqlite-path, --store and
// --store-addrs, and --store-timeout; every command that opens a store
// opens its Entries.
type StoreConfig struct {
	// MySQLDSN is the DSN of the one MySQL store; empty for SQLite.
	MySQLDSN string
	// MySQLAddrs are the nodes of its cluster, used in turn instead of the
	// DSN's address, and MySQLAddrsGiven as given, for the logs.
	MySQLAddrs      []string
	MySQLAddrsGiven string
	// SQLitePath is the one SQLite store's file.
	SQLitePath string
	// Timeout is the deadline of each call of a store; 0 means the store's
	// default.
	Timeout time.Duration
	// Set are the stores of a set, in the order of preference; none for
	// one store.
	Set []StoreEntry
	// MySQLTLS, when set, is the link to every MySQL store over TLS
	// verified by the operator's CA (--mysql-tls-ca).
	MySQLTLS *store.TLS
}

// StoreEntry is one store of a set, NAME=DSN or NAME=sqlite:PATH, or the
// one store, named storeset.Lone.
type StoreEntry struct {
	Name string
	DSN  string        // the MySQL DSN; empty for SQLite
	Cfg  *mysql.Config // the parsed DSN; nil for SQLite, or a DSN that does not parse
	Path string        // the SQLite file
	// Addrs are the nodes of its cluster, and AddrsGiven as given.
	Addrs      []string
	AddrsGiven string
	// TLS is the link to a MySQL store over TLS (StoreConfig.MySQLTLS).
	TLS *store.TLS
}

// Several reports whether the stores are a set.
func (s StoreConfig) Several() bool { return len(s.Set) > 0 }

// Entries are the stores to open: those of the set, or the one store,
// named storeset.Lone.
func (s StoreConfig) Entries() []StoreEntry {
	if s.Several() {
		out := make([]StoreEntry, len(s.Set))
		for i, e := range s.Set {
			e.TLS = s.MySQLTLS
			out[i] = e
		}
		return out
	}
	e := StoreEntry{Name: storeset.Lone, DSN: s.MySQLDSN, Path: s.SQLitePath, Addrs: s.MySQLAddrs, AddrsGiven: s.MySQLAddrsGiven, TLS: s.MySQLTLS}
	if s.MySQLDSN != "" {
		e.Cfg, _ = store.ParseMySQLDSN(s.MySQLDSN) // nil for a DSN that does not parse: Open says why
	}
	return []StoreEntry{e}
}

// mysqlUnknownDatabase is MySQL's answer for a database that does not
// exist (ER_BAD_DB_ERROR).
const mysqlUnknownDatabase = 1049

// openMySQL opens the MySQL store of dsn, parsed as cfg (nil if it could
// not be).
func openMySQL(ctx context.Context, dsn string, cfg *mysql.Config, opts store.Options) (*store.Store, error) {
	st, err := store.OpenMySQL(ctx, dsn, opts)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == mysqlUnknownDatabase && cfg != nil {
		// leaf creates tables, never the database: that needs a privilege
		// the service's user should not have.
		return nil, fmt.Errorf("%w; create it first: CREATE DATABASE `%s` CHARACTER SET utf8mb4", err, cfg.DBName)
	}
	return st, err
}

// Kind names the one store's kind, "mysql" or "sqlite", without an
// address.
func (s StoreConfig) Kind() string { return s.Entries()[0].Kind() }

// SetKind names the kind of each store of the set for the status page:
// "3 stores: a (mysql), b (sqlite), c (mysql)", no address.
func (s StoreConfig) SetKind() string {
	kinds := make([]string, len(s.Set))
	for i, e := range s.Set {
		kinds[i] = fmt.Sprintf("%s (%s)", e.Name, e.Kind())
	}
	noun := "stores"
	if len(s.Set) == 1 {
		noun = "store"
	}
	return fmt.Sprintf("%d %s: %s", len(s.Set), noun, strings.Join(kinds, ", "))
}

// SQLitePrefix marks the DSN of an SQLite file of a set: sqlite:PATH.
const SQLitePrefix = "sqlite:"

// IsSQLite reports whether the entry is an SQLite file.
func (e StoreEntry) IsSQLite() bool { return e.DSN == "" }

// String names the entry as NAME=DSN, without the DSN's password.
func (e StoreEntry) String() string {
	if e.IsSQLite() {
		return e.Name + "=" + SQLitePrefix + e.Path
	}
	return fmt.Sprintf("%s=%s@%s(%s)/%s", e.Name, e.Cfg.User, e.Cfg.Net, e.Cfg.Addr, e.Cfg.DBName)
}

// Kind is "mysql" or "sqlite".
func (e StoreEntry) Kind() string {
	if e.IsSQLite() {
		return "sqlite"
	}
	return "mysql"
}

// Where names the store for a person, as Stores.Where does, with its name:
// `store "a" (mysql leaf@tcp(db:3306)/leaf)`; st, when open, gives the node
// in use.
func (e StoreEntry) Where(st *store.Store) string {
	where := "sqlite " + e.Path
	switch {
	case !e.IsSQLite() && e.Cfg == nil:
		where = "mysql" // a DSN that does not parse: no part of it is shown
	case !e.IsSQLite():
		addr := e.Cfg.Addr
		if st != nil && st.Addr() != "" {
			addr = st.Addr()
		}
		where = fmt.Sprintf("mysql %s@%s(%s)/%s", e.Cfg.User, e.Cfg.Net, addr, e.Cfg.DBName)
	}
	if e.Name == storeset.Lone {
		return where
	}
	return fmt.Sprintf("store %q (%s)", e.Name, where)
}

// Describe names the store for logs, without the DSN's password.
func (e StoreEntry) Describe() []any {
	out := []any{"store", e.Name, "kind", e.Kind()}
	if e.Name == storeset.Lone {
		out = []any{"store", e.Kind()} // the one store, as leaf serve has always logged it
	}
	switch {
	case e.IsSQLite():
		return append(out, "path", e.Path)
	case e.Cfg == nil:
		return out
	}
	addr := e.Cfg.Addr
	if e.AddrsGiven != "" {
		addr = e.AddrsGiven
	}
	return append(out, "addr", addr, "database", e.Cfg.DBName, "user", e.Cfg.User)
}

// Open opens the store.
func (e StoreEntry) Open(ctx context.Context, opts store.Options) (*store.Store, error) {
	var (
		st  *store.Store
		err error
	)
	if e.IsSQLite() {
		st, err = store.OpenSQLite(ctx, e.Path, opts)
	} else {
		opts.Addrs, opts.TLS = e.Addrs, e.TLS
		st, err = openMySQL(ctx, e.DSN, e.Cfg, opts)
	}
	if err != nil && e.Name != storeset.Lone {
		return nil, fmt.Errorf("store %q: %w", e.Name, err)
	}
	return st, err
}
