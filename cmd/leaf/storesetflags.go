package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// Several independent stores serve one number space (package storeset):
// --store NAME=DSN, once per store, in the order of preference, and
// --store-addrs NAME=host:port,… for the nodes of one store's synchronous
// cluster.

// parseStoreEntry reads NAME=DSN. Its errors show the entry as shown names
// it, never the DSN's password.
func parseStoreEntry(s string) (app.StoreEntry, error) {
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
		return app.StoreEntry{}, valueError{shown, errors.New("want NAME=DSN, NAME 1 to 32 letters, digits, '-' or '_', DSN a MySQL DSN or sqlite:PATH")}
	}
	e := app.StoreEntry{Name: name}
	if path, ok := strings.CutPrefix(dsn, app.SQLitePrefix); ok {
		if path == "" {
			return app.StoreEntry{}, valueError{name + "=" + app.SQLitePrefix, errors.New("the SQLite file's path is missing")}
		}
		e.Path = path
		return e, nil
	}
	// ParseMySQLDSN's errors quote no part of the DSN.
	cfg, err := store.ParseMySQLDSN(dsn)
	if err != nil {
		return app.StoreEntry{}, valueError{name + "=…", err}
	}
	e.DSN, e.Cfg = dsn, cfg
	return e, nil
}

// storesFlag is --store NAME=DSN, given once per store.
type storesFlag []app.StoreEntry

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
	if s.index(e.Name) >= 0 {
		return valueError{e.Name + "=…", fmt.Errorf("store %q is given twice", e.Name)}
	}
	*s = append(*s, e)
	return nil
}

// index is the position of the store named name, or -1.
func (s storesFlag) index(name string) int {
	for i, e := range s {
		if e.Name == name {
			return i
		}
	}
	return -1
}

// names lists the stores' names in their order.
func (s storesFlag) names() []string {
	out := make([]string, len(s))
	for i, e := range s {
		out[i] = e.Name
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
		case f.stores[i].IsSQLite():
			return fmt.Errorf("%w: --store-addrs %s=…: store %q is an SQLite file, which has no nodes", errUsage, a.name, a.name)
		}
		f.stores[i].Addrs, f.stores[i].AddrsGiven = a.addrs.addrs, a.addrs.given
	}
	return nil
}

// several reports whether the stores are given with --store.
func (f *storeFlags) several() bool { return len(f.stores) > 0 }
