package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// Several independent stores serve one number space (package storeset):
// --store NAME=DSN, once per store, in the order of preference, and
// --store-addrs NAME=host:port,… for the nodes of one store's synchronous
// cluster.

// sqlitePrefix marks the DSN of an SQLite file in --store: sqlite:PATH.
const sqlitePrefix = "sqlite:"

// storeEntry is one store of --store.
type storeEntry struct {
	name  string
	dsn   string        // the MySQL DSN; empty for SQLite
	cfg   *mysql.Config // the parsed DSN; nil for SQLite
	path  string        // the SQLite file
	addrs addrsFlag     // --store-addrs NAME=…
}

// parseStoreEntry reads NAME=DSN. Its errors show the entry as shown names
// it, never the DSN's password.
func parseStoreEntry(s string) (storeEntry, error) {
	name, dsn, ok := strings.Cut(s, "=")
	if !ok || storeset.ValidateName(name) != nil {
		shown := "…"
		// A name holds no ':', a DSN with a password always does
		// (user:password@…): show only what cannot be a password.
		switch {
		case strings.ContainsAny(name, ":@"):
		case ok:
			shown = printable(name) + "=…"
		default:
			shown = printable(name)
		}
		return storeEntry{}, valueError{shown, errors.New("want NAME=DSN, NAME 1 to 32 letters, digits, '-' or '_', DSN a MySQL DSN or sqlite:PATH")}
	}
	e := storeEntry{name: name}
	if path, ok := strings.CutPrefix(dsn, sqlitePrefix); ok {
		if path == "" {
			return storeEntry{}, valueError{name + "=" + sqlitePrefix, errors.New("the SQLite file's path is missing")}
		}
		e.path = path
		return e, nil
	}
	// ParseMySQLDSN's errors quote no part of the DSN.
	cfg, err := store.ParseMySQLDSN(dsn)
	if err != nil {
		return storeEntry{}, valueError{name + "=…", err}
	}
	e.dsn, e.cfg = dsn, cfg
	return e, nil
}

// isSQLite reports whether the entry is an SQLite file.
func (e storeEntry) isSQLite() bool { return e.cfg == nil }

// String names the entry as NAME=DSN, without the DSN's password.
func (e storeEntry) String() string {
	if e.isSQLite() {
		return e.name + "=" + sqlitePrefix + e.path
	}
	return fmt.Sprintf("%s=%s@%s(%s)/%s", e.name, e.cfg.User, e.cfg.Net, e.cfg.Addr, e.cfg.DBName)
}

// kind is "mysql" or "sqlite".
func (e storeEntry) kind() string {
	if e.isSQLite() {
		return "sqlite"
	}
	return "mysql"
}

// where names the store for a person, as storeFlags.where does, with its
// name: `store "a" (mysql leaf@tcp(db:3306)/leaf)`; st, when open, gives
// the node in use.
func (e storeEntry) where(st *store.Store) string {
	if e.isSQLite() {
		return fmt.Sprintf("store %q (sqlite %s)", e.name, e.path)
	}
	addr := e.cfg.Addr
	if st != nil && st.Addr() != "" {
		addr = st.Addr()
	}
	return fmt.Sprintf("store %q (mysql %s@%s(%s)/%s)", e.name, e.cfg.User, e.cfg.Net, addr, e.cfg.DBName)
}

// describe names the store for logs, without the DSN's password.
func (e storeEntry) describe() []any {
	if e.isSQLite() {
		return []any{"store", e.name, "kind", "sqlite", "path", e.path}
	}
	addr := e.cfg.Addr
	if e.addrs.given != "" {
		addr = e.addrs.given
	}
	return []any{"store", e.name, "kind", "mysql", "addr", addr, "database", e.cfg.DBName, "user", e.cfg.User}
}

// open opens the store.
func (e storeEntry) open(ctx context.Context, opts store.Options) (*store.Store, error) {
	var (
		st  *store.Store
		err error
	)
	if e.isSQLite() {
		st, err = store.OpenSQLite(ctx, e.path, opts)
	} else {
		opts.Addrs = e.addrs.addrs
		st, err = openMySQL(ctx, e.dsn, e.cfg, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("store %q: %w", e.name, err)
	}
	return st, nil
}

// storesFlag is --store NAME=DSN, given once per store.
type storesFlag []storeEntry

func (*storesFlag) isList() {}

func (s *storesFlag) String() string {
	if s == nil {
		return ""
	}
	names := make([]string, len(*s))
	for i, e := range *s {
		names[i] = e.String()
	}
	return strings.Join(names, " ")
}

func (s *storesFlag) Set(v string) error {
	e, err := parseStoreEntry(v)
	if err != nil {
		return err
	}
	if s.index(e.name) >= 0 {
		return valueError{e.name + "=…", fmt.Errorf("store %q is given twice", e.name)}
	}
	*s = append(*s, e)
	return nil
}

// index is the position of the store named name, or -1.
func (s storesFlag) index(name string) int {
	for i, e := range s {
		if e.name == name {
			return i
		}
	}
	return -1
}

// names lists the stores' names in their order.
func (s storesFlag) names() []string {
	out := make([]string, len(s))
	for i, e := range s {
		out[i] = e.name
	}
	return out
}

// storeAddrsFlag is --store-addrs NAME=host:port,…, given once per store
// on a synchronous cluster.
type storeAddrsFlag []storeAddrs

type storeAddrs struct {
	name  string
	addrs addrsFlag
}

func (*storeAddrsFlag) isList() {}

func (s *storeAddrsFlag) String() string {
	if s == nil {
		return ""
	}
	var out []string
	for _, a := range *s {
		out = append(out, a.name+"="+a.addrs.given)
	}
	return strings.Join(out, " ")
}

func (s *storeAddrsFlag) Set(v string) error {
	name, list, ok := strings.Cut(v, "=")
	if !ok || storeset.ValidateName(name) != nil {
		return valueError{v, errors.New("want NAME=host:port,host:port, NAME the name of a --store")}
	}
	for _, a := range *s {
		if a.name == name {
			return valueError{v, fmt.Errorf("the nodes of store %q are given twice", name)}
		}
	}
	addrs, err := splitAddrs(list)
	if err != nil {
		return valueError{v, err}
	}
	if len(addrs) == 0 {
		return valueError{v, errors.New("no host:port given")}
	}
	*s = append(*s, storeAddrs{name: name, addrs: addrsFlag{given: list, addrs: addrs}})
	return nil
}

// validateStores checks, once every flag is read, what --store and
// --store-addrs need of each other and of the single store's flags, and
// gives each store its nodes.
func (f *storeFlags) validateStores() error {
	if len(f.stores) == 0 {
		if len(f.storeAddrs) > 0 {
			return fmt.Errorf("%w: --store-addrs gives the nodes of a --store, and no --store is given", errUsage)
		}
		return nil
	}
	switch {
	case f.mysqlDSN != "" && f.sqliteGiven:
		return fmt.Errorf("%w: --store cannot be combined with --mysql-dsn and --sqlite-path: give every store as --store NAME=DSN", errUsage)
	case f.mysqlDSN != "":
		return fmt.Errorf("%w: --store cannot be combined with --mysql-dsn: give every store as --store NAME=DSN", errUsage)
	case f.sqliteGiven:
		return fmt.Errorf("%w: --store cannot be combined with --sqlite-path: give an SQLite file as --store NAME=sqlite:PATH", errUsage)
	case f.mysqlAddrs.given != "":
		return fmt.Errorf("%w: --mysql-addrs is for --mysql-dsn: give the nodes of a --store as --store-addrs NAME=host:port,…", errUsage)
	}
	for _, a := range f.storeAddrs {
		i := f.stores.index(a.name)
		switch {
		case i < 0:
			return fmt.Errorf("%w: --store-addrs %s=…: no --store is named %q", errUsage, a.name, a.name)
		case f.stores[i].isSQLite():
			return fmt.Errorf("%w: --store-addrs %s=…: store %q is an SQLite file, which has no nodes", errUsage, a.name, a.name)
		}
		f.stores[i].addrs = a.addrs
	}
	return nil
}

// several reports whether the stores are given with --store.
func (f *storeFlags) several() bool { return len(f.stores) > 0 }

// setKind names the kind of each store for the status page:
// "3 stores: a (mysql), b (sqlite), c (mysql)", no address.
func (f *storeFlags) setKind() string {
	kinds := make([]string, len(f.stores))
	for i, e := range f.stores {
		kinds[i] = fmt.Sprintf("%s (%s)", e.name, e.kind())
	}
	noun := "stores"
	if len(f.stores) == 1 {
		noun = "store"
	}
	return fmt.Sprintf("%d %s: %s", len(f.stores), noun, strings.Join(kinds, ", "))
}
