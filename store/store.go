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
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

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
//
// Every call has a deadline (Options.Timeout) and is retried when a retry
// can help; while the database does not answer, calls fail at once with an
// error wrapping segment.ErrStoreUnavailable, and a probe brings the store
// back when it answers again (see Health).
type Store struct {
	db        *sqlx.DB
	dialect   string
	nowMillis string // the dialect's query for the database clock
	sql       dialectSQL
	timeout   time.Duration
	health    *health
	probeFunc func(context.Context) error // asks whether the database can take writes
	nodes     *nodes                      // MySQL only

	closing context.Context // cancelled by Close: ends the probes
	stop    context.CancelFunc
	bg      sync.WaitGroup // the probe loop and confirmations; Close waits for them
}

// Options tune a Store. Zero fields take the defaults.
type Options struct {
	// Addrs are the nodes of a synchronous MySQL cluster (MariaDB Galera,
	// MySQL Group Replication), host:port each, used in their order: the
	// store moves to the next when the node in use stops answering or may
	// not take writes. Empty means the DSN's own address. Never list
	// asynchronous replicas: a replica that missed the last writes would
	// hand out ids again (README, "High availability"). Ignored by SQLite.
	Addrs []string
	// Timeout bounds each call, retries included; 0 means DefaultTimeout
	// on MySQL and 10 s on SQLite, whose writers queue for the file.
	Timeout time.Duration
	// OnHealth, when set, is called when the database stops answering and
	// when it answers again, in that order, never concurrently.
	OnHealth func(Health)
}

// dialectSQL holds the statements whose text differs by dialect.
type dialectSQL struct {
	allocate, allocateAbove, takeExpiredLease, renewLease string
}

var (
	mysqlSQL  = dialectSQL{allocateMySQL, allocateAboveMySQL, takeExpiredLeaseMySQL, renewLeaseMySQL}
	sqliteSQL = dialectSQL{allocateSQLite, allocateAboveSQLite, takeExpiredLeaseSQLite, renewLeaseSQLite}
)

// DefaultTimeout bounds one call of the store, retries included: the
// default of Options.Timeout on MySQL.
const DefaultTimeout = 2 * time.Second

// sqliteBusyTimeout is how long a SQLite writer waits for another.
const sqliteBusyTimeout = 10 * time.Second

// OpenMySQL connects to MySQL with a go-sql-driver DSN
// (user:pass@tcp(host:3306)/db) and pings it. It always sets
// parseTime=true, clientFoundRows=true and interpolateParams=true, and,
// unless the DSN chooses a time_zone or loc itself, runs the session in
// UTC so that TIMESTAMP columns read back as the right instant. The
// driver's own logging is discarded. Errors never contain the password.
func OpenMySQL(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("open mysql: parse dsn: %w", err)
	}
	cfg.ParseTime = true
	// RowsAffected counts matched rows, not changed ones: a renewal that
	// writes the same values still proves the row is ours.
	cfg.ClientFoundRows = true
	// One round trip per statement instead of prepare, execute and close.
	cfg.InterpolateParams = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, ok := cfg.Params["time_zone"]; !ok && (cfg.Loc == nil || cfg.Loc == time.UTC) {
		cfg.Params["time_zone"] = "'+00:00'"
	}
	// A row lock held by someone else comes back as error 1205 after a
	// second, which is retried, instead of outlasting the call's deadline.
	if _, ok := cfg.Params["innodb_lock_wait_timeout"]; !ok {
		cfg.Params["innodb_lock_wait_timeout"] = "1"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	// The driver would print connection trouble to stderr; a library does
	// not log, and the errors reach the caller anyway.
	cfg.Logger = discardLogger{}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ns, err := newNodes(cfg, opts.Addrs, timeout)
	if err != nil {
		return nil, fmt.Errorf("open mysql: %w", err)
	}
	db := sql.OpenDB(ns)
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(8)
	db.SetConnMaxLifetime(3 * time.Minute)
	db.SetConnMaxIdleTime(time.Minute)
	s := newStore(sqlx.NewDb(db, "mysql"), MySQL, opts)
	s.nodes = ns
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open mysql %s/%s: %w", strings.Join(nodeAddrs(ns), ","), cfg.DBName, err)
	}
	return s, nil
}

func nodeAddrs(ns *nodes) []string {
	out := make([]string, len(ns.list))
	for i, n := range ns.list {
		out[i] = n.addr
	}
	return out
}

type discardLogger struct{}

func (discardLogger) Print(...any) {}

// OpenSQLite opens (creating it if needed) the SQLite database at path, in
// WAL mode with synchronous=FULL, foreign keys on and a busy timeout, so that several
// connections and processes can share the file. Transactions begin
// IMMEDIATE: a transaction that reads and then writes never fails with
// SQLITE_BUSY halfway. opts.Addrs is ignored.
func OpenSQLite(ctx context.Context, path string, opts Options) (*Store, error) {
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
	s := newStore(sqlx.NewDb(db, "sqlite"), SQLite, opts)
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return s, nil
}

// newStore wraps db and starts its probe loop.
func newStore(db *sqlx.DB, dialect string, opts Options) *Store {
	s := &Store{db: db, dialect: dialect, timeout: opts.Timeout, health: newHealth(opts.OnHealth)}
	s.probeFunc = s.probe
	switch {
	case s.timeout > 0:
	case dialect == SQLite:
		s.timeout = sqliteBusyTimeout // writers queue for the file
	default:
		s.timeout = DefaultTimeout
	}
	if dialect == MySQL {
		s.nowMillis, s.sql = mysqlNowMillis, mysqlSQL
	} else {
		s.nowMillis, s.sql = sqliteNowMillis, sqliteSQL
	}
	s.closing, s.stop = context.WithCancel(context.Background())
	s.bg.Add(1)
	go s.probeLoop(s.closing)
	return s
}

// Migrate applies the pending migrations (see package migrations) and
// returns those it applied, oldest first.
func (s *Store) Migrate(ctx context.Context) ([]migrations.Applied, error) {
	return migrations.Up(ctx, s.db.DB, s.dialect)
}

// CheckSchema reads no row but names every column the store uses, so it
// fails with a *segment.NotMigratedError on a database that lacks a
// migration this version needs (`leaf serve --migrate=false` on a new
// database, say). It creates nothing.
func (s *Store) CheckSchema(ctx context.Context) error {
	return s.call(ctx, true, func(ctx context.Context) error {
		for _, q := range []string{
			`SELECT biz_tag, max_id, step, description, update_time FROM leaf_alloc WHERE 1 = 0`,
			`SELECT worker_id, holder, instance, expires_ms, last_timestamp_ms FROM leaf_worker_lease WHERE 1 = 0`,
		} {
			rows, err := s.db.QueryContext(ctx, q)
			if err != nil {
				return err
			}
			rows.Close()
		}
		return nil
	})
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.db.PingContext(ctx)
}

// Close stops the probes and closes the connection pool.
func (s *Store) Close() error {
	s.stop()
	s.bg.Wait()
	return s.db.Close()
}

// Timeout is the deadline of each call.
func (s *Store) Timeout() time.Duration { return s.timeout }

// Addr is the address of the MySQL node in use, or "" for SQLite.
func (s *Store) Addr() string {
	if s.nodes == nil {
		return ""
	}
	return s.nodes.Addr()
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
func (s *Store) now(ctx context.Context) (int64, error) {
	var ms int64
	if err := s.db.GetContext(ctx, &ms, s.nowMillis); err != nil {
		return 0, fmt.Errorf("read database clock: %w", err)
	}
	return ms, nil
}

// updateReturning runs an UPDATE that changes at most one row and returns
// one integer from it, in the same statement: on MySQL the value of its
// LAST_INSERT_ID(expr), on SQLite the column of its RETURNING clause. ok is
// false when no row matched. The statement runs on its own (autocommit),
// so its success is its commit.
func (s *Store) updateReturning(ctx context.Context, query string, args ...any) (v int64, ok bool, err error) {
	if s.dialect == SQLite {
		err := s.db.QueryRowContext(ctx, query, args...).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		return v, err == nil, err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close()
	res, err := conn.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, false, err
	}
	n, err := rowsAffected(res)
	if err != nil || n == 0 {
		return 0, false, err
	}
	if n != 1 {
		return 0, false, fmt.Errorf("%d rows updated, want 1", n)
	}
	if v, err = res.LastInsertId(); err != nil {
		return 0, false, fmt.Errorf("last insert id: %w", err)
	}
	if v == 0 {
		// MariaDB leaves the value out of the statement's answer when the
		// table has a trigger; the session still holds what the
		// statement computed (a trigger's own changes are undone when it
		// ends), so ask for it on the same connection.
		if err := conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&v); err != nil {
			return 0, false, fmt.Errorf("last insert id: %w", err)
		}
	}
	return v, true, nil
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
