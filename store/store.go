// Package store keeps leaf's state in MySQL, MariaDB (Galera too) or an
// embedded SQLite file, and implements what the other rooms declare they
// need of it:
//
//   - the rows of leaf_alloc and their ranges (segment.Store, tags.go,
//     ranges.go, batch.go), with the rule of a new tag's name whatever its
//     case (newtag.go), and what many names are at once, for the
//     service's tag registry (rows.go);
//   - the settings and period rows of formatted and opaque tags (bizid.go,
//     periods.go), ordered tags (ordered.go), sequence spaces and sections
//     (spaces.go, sections.go, sequence.go), snowflake worker-id leases
//     (lease.go, acquire.go) and the live instances (members.go);
//   - a store's record and marks as a member of a set (storeset.Store,
//     set.go, home.go);
//   - what keeps a database's faults from the callers: a health that fails
//     calls at once while the database does not answer (health.go,
//     probe.go), the nodes of a cluster and the one that may take writes
//     (nodes.go, writable.go), whether a commit the database acknowledged
//     survives a crash (durability.go), and the move past what a database
//     that forgot commits may hand out again (restart.go).
//
// One implementation serves both dialects; only the few statements whose
// SQL differs come in two versions (queries.go). Driver errors are
// translated into the errors of the domain packages, so callers compare
// with errors.Is whatever database is behind.
package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/migrations"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/tlsfiles"
)

// Dialects: the kinds of database a Store runs on, as storetest.Open takes
// them.
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
	memory    bool                        // SQLite's :memory:

	// What the database's settings say of its commits (durability.go).
	durabilityMu   sync.Mutex // serialises the readings, so that changes are reported in order
	durability     atomic.Pointer[Durability]
	onDurability   func(Durability)
	requireDurable bool

	// What was last seen of the database's start (restart.go).
	starts starts

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
	// hand out ids again (docs/high-availability.md). Ignored by SQLite.
	Addrs []string
	// Timeout bounds each call, retries included; 0 means DefaultTimeout
	// on MySQL and SQLite's busy timeout on SQLite, whose writers queue for
	// the file (DefaultTimeouts says both).
	Timeout time.Duration
	// OnHealth, when set, is called when the database stops answering and
	// when it answers again, in that order, never concurrently.
	OnHealth func(Health)
	// AllowDown lets OpenMySQL return a store whose database does not
	// answer (refused, timed out, no node that may take writes) instead of
	// an error: the store starts down, as if it had just stopped
	// answering, and its probe brings it up once the database answers.
	// An answer that refuses (a wrong password, a database that does not
	// exist) still fails the open. Ignored by SQLite.
	AllowDown bool
	// CheckDurability reads, once the store is open and then every minute,
	// the settings that decide whether a commit the database acknowledged
	// survives a crash (durability.go), on every node; Durability returns
	// the last verdict.
	CheckDurability bool
	// RequireDurable refuses the calls that hand out numbers (ranges,
	// sequence raises, worker leases) while the last verdict says the
	// database can forget a commit, or before one was read: they fail with
	// an error wrapping segment.ErrStoreUnavailable and ErrNotDurable. It
	// implies CheckDurability.
	RequireDurable bool
	// OnDurability, when set, is called with the first verdict and with
	// each that differs from the one before, never concurrently.
	OnDurability func(Durability)
	// RestartJump, when above 0, turns on the check of the database's
	// start (restart.go): before any number is taken from a node that
	// started again since leaf last saw it, while its settings (then or
	// now) say it can forget a commit, every row that hands out numbers is
	// moved forward by RestartJump, once per restart whichever instance
	// finds it; and no snowflake worker id is leased from the store until
	// a lease's length after that. leaf serve gives it --failover-jump.
	RestartJump int64
	// OnRestartJump, when set, is called by the instance that moved the
	// rows, once per restart found.
	OnRestartJump func(RestartJump)
	// TLS, when set, makes every connection to MySQL speak TLS, the
	// server's certificate verified by a CA of the operator's, whatever
	// the DSN's tls= says (but tls=false, which it refuses); never clear.
	// Ignored by SQLite.
	TLS *TLS
}

// TLS is the link to MySQL over TLS verified by the operator's CA.
type TLS struct {
	// CA verifies the servers' certificates, read again when its file
	// changes.
	CA *tlsfiles.CA
	// ServerName is the name their certificates are verified for; empty
	// means each node's host.
	ServerName string
}

// DefaultTimeout bounds one call of the store, retries included: the
// default of Options.Timeout on MySQL.
const DefaultTimeout = 2 * time.Second

// DefaultTimeouts says in words what an Options.Timeout of 0 means, for
// help texts and documents.
func DefaultTimeouts() string {
	return fmt.Sprintf("%v on MySQL, %v on SQLite", DefaultTimeout, sqliteBusyTimeout)
}

// newStore wraps db and starts its probe loop.
func newStore(db *sqlx.DB, dialect string, opts Options) *Store {
	s := &Store{db: db, dialect: dialect, timeout: opts.Timeout, health: newHealth(opts.OnHealth),
		onDurability: opts.OnDurability, requireDurable: opts.RequireDurable,
		starts: starts{jump: max(opts.RestartJump, 0), onJump: opts.OnRestartJump}}
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

// DB is the underlying pool. It is exported for tests that write or read
// rows behind the store's back: storetest's helpers and the database tests
// of segment, snowflake and cmd/leaf.
func (s *Store) DB() *sqlx.DB {
	return s.db
}
