package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
	"github.com/leafid/leaf/tlsfiles"
)

// storeFlags are the flags of every command that opens the database: one
// store (--mysql-dsn, or --sqlite-path), or several independent stores
// serving one number space (package storeset): --store NAME=DSN, once per
// store in the order of preference, and --store-addrs NAME=host:port,…
// for the nodes of one store's synchronous cluster.
type storeFlags struct {
	MySQLDSN     string        `name:"mysql-dsn" var:"LEAF_MYSQL_DSN" placeholder:"user:pass@tcp(host:3306)/db" help:"MySQL DSN; empty uses the embedded SQLite store"`
	MySQLAddrs   string        `name:"mysql-addrs" var:"LEAF_MYSQL_ADDRS" placeholder:"host:port" help:"comma-separated list of the nodes of a synchronous cluster (Galera, Group Replication), used in turn instead of the DSN's address; never asynchronous replicas"`
	SQLitePath   string        `name:"sqlite-path" var:"LEAF_SQLITE_PATH" default:"leaf.db" placeholder:"file" help:"the embedded SQLite store's file"`
	StoreTimeout time.Duration `var:"LEAF_STORE_TIMEOUT" default:"0s" placeholder:"duration" help:"deadline of each database call, retries included; 0 means ${store_timeouts}"`
	Stores       []string      `name:"store" var:"LEAF_STORES" sep:"none" placeholder:"NAME=DSN" help:"one of several independent stores serving one number space: a MySQL DSN or sqlite:PATH; once per store, the preferred first (for now snowflake worker ids are leased from the first); not with --mysql-dsn or --sqlite-path"`
	TLSCA        string        `name:"mysql-tls-ca" var:"LEAF_MYSQL_TLS_CA" placeholder:"file" help:"CA (PEM) that verifies the MySQL servers' certificates: every connection to MySQL then speaks TLS, never clear, whatever the DSN's tls= says; read again when it changes"`
	TLSName      string        `name:"mysql-tls-server-name" var:"LEAF_MYSQL_TLS_SERVER_NAME" placeholder:"name" help:"name the MySQL servers' certificates are verified for, with --mysql-tls-ca; empty: each node's host"`
	StoreAddrs   []string      `name:"store-addrs" var:"LEAF_STORE_ADDRS" sep:"none" placeholder:"NAME=host:port,host:port" help:"the nodes of the synchronous cluster of the --store NAME, used in turn instead of its DSN's address; once per such store"`
}

// several reports whether the stores are given with --store.
func (f *storeFlags) several() bool { return len(f.Stores) > 0 }

// config checks, once the flags are read, that they name one store, or
// several with --store, and is the stores they name. No error quotes a
// DSN, which holds a password.
func (f *storeFlags) config(p *parser) (app.StoreConfig, error) {
	c := app.StoreConfig{MySQLDSN: f.MySQLDSN, MySQLAddrsGiven: f.MySQLAddrs, SQLitePath: f.SQLitePath, Timeout: f.StoreTimeout}
	var err error
	if c.MySQLAddrs, err = splitAddrs(f.MySQLAddrs); err != nil {
		return c, p.refused(refusal{"mysql-addrs", f.MySQLAddrs, err.Error()})
	}
	if err := p.check(rule{"store-timeout", f.StoreTimeout >= 0, f.StoreTimeout, "want 0 or a positive duration"}); err != nil {
		return c, err
	}
	if c.MySQLTLS, err = f.readTLS(); err != nil {
		return c, err
	}
	if c.Set, err = f.set(p); err != nil || f.several() {
		return c, err
	}
	switch {
	case f.MySQLAddrs != "" && f.MySQLDSN == "":
		return c, fmt.Errorf("%w: --mysql-addrs needs --mysql-dsn for the user, password and database", errUsage)
	case f.MySQLDSN == "" && f.SQLitePath == "":
		return c, fmt.Errorf("%w: --sqlite-path is empty and no --mysql-dsn is given: no store to open", errUsage)
	case f.MySQLDSN == "":
		return c, nil
	}
	if _, err := store.ParseMySQLDSN(f.MySQLDSN); err != nil { // its errors quote no part of the DSN
		return c, fmt.Errorf("%w: --mysql-dsn: %v", errUsage, err)
	}
	return c, nil
}

// readTLS reads the CA of --mysql-tls-ca.
func (f *storeFlags) readTLS() (*store.TLS, error) {
	if f.TLSCA == "" {
		if f.TLSName != "" {
			return nil, fmt.Errorf("%w: --mysql-tls-server-name needs --mysql-tls-ca", errUsage)
		}
		return nil, nil
	}
	ca, err := tlsfiles.NewCA("--mysql-tls-ca", f.TLSCA, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	return &store.TLS{CA: ca, ServerName: f.TLSName}, nil
}

// set reads --store and --store-addrs, and checks what they need of each
// other and of the single store's flags.
func (f *storeFlags) set(p *parser) ([]app.StoreEntry, error) {
	if !f.several() {
		if len(f.StoreAddrs) > 0 {
			return nil, fmt.Errorf("%w: --store-addrs gives the nodes of a --store, and no --store is given", errUsage)
		}
		return nil, nil
	}
	var entries []app.StoreEntry
	for _, s := range f.Stores {
		e, err := parseStoreEntry(s)
		if err == nil && index(entries, e.Name) >= 0 {
			err = refusal{"store", e.Name + "=…", fmt.Sprintf("store %q is given twice", e.Name)}
		}
		var r refusal
		if errors.As(err, &r) {
			return nil, p.refused(r)
		}
		entries = append(entries, e)
	}
	sqliteGiven := p.given["sqlite-path"]
	switch {
	case f.MySQLDSN != "" && sqliteGiven:
		return nil, fmt.Errorf("%w: --store cannot be combined with --mysql-dsn and --sqlite-path: give every store as --store NAME=DSN", errUsage)
	case f.MySQLDSN != "":
		return nil, fmt.Errorf("%w: --store cannot be combined with --mysql-dsn: give every store as --store NAME=DSN", errUsage)
	case sqliteGiven:
		return nil, fmt.Errorf("%w: --store cannot be combined with --sqlite-path: give an SQLite file as --store NAME=sqlite:PATH", errUsage)
	case f.MySQLAddrs != "":
		return nil, fmt.Errorf("%w: --mysql-addrs is for --mysql-dsn: give the nodes of a --store as --store-addrs NAME=host:port,…", errUsage)
	}
	return entries, f.nodes(p, entries)
}

// nodes gives each store of --store-addrs its nodes.
func (f *storeFlags) nodes(p *parser, entries []app.StoreEntry) error {
	for _, v := range f.StoreAddrs {
		name, list, ok := strings.Cut(v, "=")
		if !ok || storeset.ValidateName(name) != nil {
			return p.refused(refusal{"store-addrs", v, "want NAME=host:port,host:port, NAME the name of a --store"})
		}
		addrs, err := splitAddrs(list)
		i := index(entries, name)
		switch {
		case err != nil:
			return p.refused(refusal{"store-addrs", v, err.Error()})
		case len(addrs) == 0:
			return p.refused(refusal{"store-addrs", v, "no host:port given"})
		case i < 0:
			return fmt.Errorf("%w: --store-addrs %s=…: no --store is named %q", errUsage, name, name)
		case entries[i].IsSQLite():
			return fmt.Errorf("%w: --store-addrs %s=…: store %q is an SQLite file, which has no nodes", errUsage, name, name)
		case entries[i].Addrs != nil:
			return p.refused(refusal{"store-addrs", v, fmt.Sprintf("the nodes of store %q are given twice", name)})
		}
		entries[i].Addrs, entries[i].AddrsGiven = addrs, list
	}
	return nil
}

// parseStoreEntry reads NAME=DSN. A refusal shows the entry as shown
// names it, never the DSN's password.
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
		return app.StoreEntry{}, refusal{"store", shown, "want NAME=DSN, NAME 1 to 32 letters, digits, '-' or '_', DSN a MySQL DSN or sqlite:PATH"}
	}
	e := app.StoreEntry{Name: name}
	if path, ok := strings.CutPrefix(dsn, app.SQLitePrefix); ok {
		if path == "" {
			return app.StoreEntry{}, refusal{"store", name + "=" + app.SQLitePrefix, "the SQLite file's path is missing"}
		}
		e.Path = path
		return e, nil
	}
	cfg, err := store.ParseMySQLDSN(dsn) // its errors quote no part of the DSN
	if err != nil {
		return app.StoreEntry{}, refusal{"store", name + "=…", err.Error()}
	}
	e.DSN, e.Cfg = dsn, cfg
	return e, nil
}

// index is the position of the store named name, or -1.
func index(entries []app.StoreEntry, name string) int {
	for i, e := range entries {
		if e.Name == name {
			return i
		}
	}
	return -1
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
