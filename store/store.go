// Package store keeps leaf's state in MySQL or in an embedded SQLite file:
// the segment ranges and tags of leaf_alloc (segment.Store) and the
// snowflake worker-id leases of leaf_worker_lease (snowflake.LeaseStore).
//
// One implementation serves both dialects; only the few statements whose
// SQL differs come in two versions. Driver errors are translated into the
// errors of the segment and snowflake packages, so callers compare with
// errors.Is whatever database is behind.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/leafid/leaf/migrations"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// Dialects, as returned by Store.Dialect.
const (
	MySQL  = migrations.MySQL
	SQLite = migrations.SQLite
)

var (
	_ segment.Store        = (*Store)(nil)
	_ snowflake.LeaseStore = (*Store)(nil)
)

// Store is a connection pool to one database with leaf's tables. It is
// safe for concurrent use, also by several processes on one database.
type Store struct {
	db        *sqlx.DB
	dialect   string
	nowMillis string // the dialect's query for the database clock
}

// sqliteBusyTimeout is how long a SQLite writer waits for another.
const sqliteBusyTimeout = 10 * time.Second

// OpenMySQL connects to MySQL with a go-sql-driver DSN
// (user:pass@tcp(host:3306)/db) and pings it. It always sets
// parseTime=true and clientFoundRows=true, and, unless the DSN chooses a
// time_zone or loc itself, runs the session in UTC so that TIMESTAMP
// columns read back as the right instant. The driver's own logging is
// discarded. Errors never contain the password.
func OpenMySQL(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("open mysql: parse dsn: %w", err)
	}
	cfg.ParseTime = true
	// RowsAffected counts matched rows, not changed ones: a renewal that
	// writes the same values still proves the row is ours.
	cfg.ClientFoundRows = true
	if _, ok := cfg.Params["time_zone"]; !ok && (cfg.Loc == nil || cfg.Loc == time.UTC) {
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["time_zone"] = "'+00:00'"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	// The driver would print connection trouble to stderr; a library does
	// not log, and the errors reach the caller anyway.
	cfg.Logger = discardLogger{}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("open mysql: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(8)
	db.SetConnMaxLifetime(3 * time.Minute)
	db.SetConnMaxIdleTime(time.Minute)
	s := &Store{db: sqlx.NewDb(db, "mysql"), dialect: MySQL, nowMillis: mysqlNowMillis}
	if err := s.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open mysql %s/%s: %w", cfg.Addr, cfg.DBName, err)
	}
	return s, nil
}

type discardLogger struct{}

func (discardLogger) Print(...any) {}

// OpenSQLite opens (creating it if needed) the SQLite database at path, in
// WAL mode with synchronous=FULL, foreign keys on and a busy timeout, so that several
// connections and processes can share the file. Transactions begin
// IMMEDIATE: a transaction that reads and then writes never fails with
// SQLITE_BUSY halfway.
func OpenSQLite(ctx context.Context, path string) (*Store, error) {
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
	q.Add("_pragma", "synchronous(FULL)")
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
	s := &Store{db: sqlx.NewDb(db, "sqlite"), dialect: SQLite, nowMillis: sqliteNowMillis}
	if err := s.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return s, nil
}

// Migrate applies the pending migrations (see package migrations).
func (s *Store) Migrate(ctx context.Context) error {
	_, err := migrations.Up(ctx, s.db.DB, s.dialect)
	return err
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.db.PingContext(ctx)
}

// Close closes the connection pool.
func (s *Store) Close() error {
	return s.db.Close()
}

// Dialect is MySQL ("mysql") or SQLite ("sqlite").
func (s *Store) Dialect() string {
	return s.dialect
}

// DB is the underlying pool, for migrations, tests and diagnostics.
func (s *Store) DB() *sqlx.DB {
	return s.db
}

// now reads the database clock in Unix milliseconds.
func (s *Store) now(ctx context.Context, q sqlx.QueryerContext) (int64, error) {
	var ms int64
	if err := sqlx.GetContext(ctx, q, &ms, s.nowMillis); err != nil {
		return 0, fmt.Errorf("read database clock: %w", err)
	}
	return ms, nil
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// MySQL error numbers.
const (
	mysqlDuplicateKey = 1062
	mysqlLockTimeout  = 1205
	mysqlDeadlock     = 1213
)

// isDuplicateKey reports whether err is a primary-key or unique violation.
func isDuplicateKey(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlDuplicateKey
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	}
	return false
}

// isContention reports whether err is a transient lock conflict after
// which the statement may simply be tried again.
func isContention(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlDeadlock || me.Number == mysqlLockTimeout
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED
	}
	return false
}

// rowsAffected is res.RowsAffected for the statements of this package,
// whose drivers always report it.
func rowsAffected(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

// nullString stores "" as NULL, as Leaf leaves an unset description.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// maxDescription is the width of leaf_alloc.description.
const maxDescription = 256

func validateDescription(d string) error {
	if n := len([]rune(d)); n > maxDescription {
		return fmt.Errorf("description of %d characters is longer than %d", n, maxDescription)
	}
	return nil
}
