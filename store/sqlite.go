package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"
)

// sqliteBusyTimeout is how long a SQLite writer waits for another.
const sqliteBusyTimeout = 10 * time.Second

// OpenSQLite opens (creating it if needed) the SQLite database at path, in
// WAL mode with synchronous=FULL, foreign keys on and a busy timeout, so that several
// connections and processes can share the file. Transactions begin
// IMMEDIATE: a transaction that reads and then writes never fails with
// SQLITE_BUSY halfway. opts.Addrs is ignored.
func OpenSQLite(ctx context.Context, path string, opts Options) (*Store, error) {
	return openSQLite(ctx, path, opts, "FULL")
}

// openSQLite is OpenSQLite with PRAGMA synchronous set to synchronous;
// tests open files with the values a store must judge unsafe.
func openSQLite(ctx context.Context, path string, opts Options, synchronous string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite: empty path")
	}
	memory := path == ":memory:"
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	if !memory {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	q.Add("_pragma", "foreign_keys(1)")
	// FULL, not WAL's usual NORMAL: with NORMAL a power loss can undo the
	// last committed max_id raise, and the ranges handed out before it
	// would be handed out again.
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Set("_txlock", "immediate")
	name := path
	if !memory {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
		name = "file:" + (&url.URL{Path: abs}).EscapedPath()
	}
	db, err := sql.Open("sqlite", name+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if memory {
		// Every connection to :memory: is a database of its own.
		db.SetMaxOpenConns(1)
	} else {
		db.SetMaxOpenConns(8)
	}
	db.SetMaxIdleConns(4)
	s := newStore(sqlx.NewDb(db, "sqlite"), SQLite, opts)
	s.memory = memory
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	s.openedDurability(ctx, opts)
	return s, nil
}
