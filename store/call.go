package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/leafid/leaf/segment"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one call of the store, retries included.
	DefaultTimeout = 2 * time.Second
	// probeUp is how often a store that answers is checked when nothing
	// else calls it; probeDown how often one that failed is checked for
	// its return. The first bounds how long an outage can go unnoticed
	// while no range is needed; the second how soon service resumes.
	probeUp   = 5 * time.Second
	probeDown = 200 * time.Millisecond
	// attempts is how often one call is tried: a conflict between cluster
	// nodes, a lock wait or a dead pooled connection is retried at once
	// (after a short random pause for conflicts), a few times, before it
	// counts as failed.
	attempts = 4
	// conflictPause is the largest pause before retrying a conflict.
	conflictPause = 20 * time.Millisecond
)

// Health is the state of the store as its calls see it.
type Health struct {
	// Up is false from the first call that found the database unreachable
	// (refused, timed out, connection lost, or no node that may take
	// writes) until a probe gets an answer again.
	Up bool
	// Since is when the state began.
	Since time.Time
	// Err is why it went down; when it comes back up, why it was down.
	Err error
	// Failed counts the calls refused or failed while down; on recovery,
	// all of them.
	Failed uint64
	// DownFor is, on recovery, how long the store was down.
	DownFor time.Duration
}

// health tracks whether the database answers. While it is down every call
// fails at once with segment.ErrStoreUnavailable, and the calls in flight
// when it went down are cancelled: nothing waits on a database known not
// to answer. A probe loop brings it back up.
type health struct {
	onChange func(Health)
	changeMu sync.Mutex    // held across a change and its onChange call, so changes are reported in order
	wake     chan struct{} // tells the probe loop the store just went down

	mu       sync.Mutex // protects the fields below
	up       bool
	checking bool // a call ran out of time: until a probe decides, calls are refused
	since    time.Time
	err      error
	failed   uint64
	gen      context.Context // cancelled when the store goes down
	cancel   context.CancelFunc
}

func newHealth(onChange func(Health)) *health {
	h := &health{onChange: onChange, up: true, since: time.Now(), wake: make(chan struct{}, 1)}
	h.gen, h.cancel = context.WithCancel(context.Background())
	return h
}

// state returns the current health.
func (h *health) state() Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Health{Up: h.up, Since: h.since, Err: h.err, Failed: h.failed}
}

// admit returns the context that calls starting now run under (cancelled
// if the store goes down or comes under suspicion), or an error while the
// store is down or being checked.
func (h *health) admit() (context.Context, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !h.up:
		h.failed++
		return nil, fmt.Errorf("%w: down since %s: %w", segment.ErrStoreUnavailable,
			h.since.UTC().Format(time.RFC3339Nano), h.err)
	case h.checking:
		return nil, fmt.Errorf("%w: a call got no answer in time; checking the database", segment.ErrStoreUnavailable)
	}
	return h.gen, nil
}

// suspect puts the store under suspicion after a call ran out of time:
// the calls in flight are cancelled and new ones refused, so that nothing
// waits on a database that may not answer, but nothing is reported until
// a probe decides (down, or cleared). It reports whether the store was up
// and not already under suspicion.
func (h *health) suspect() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.up || h.checking {
		return false
	}
	h.checking = true
	h.cancel()
	return true
}

// cleared ends a suspicion that a probe found groundless.
func (h *health) cleared() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.up && h.checking {
		h.checking = false
		h.gen, h.cancel = context.WithCancel(context.Background())
	}
}

// isUp reports whether the store is up, for the fast paths below.
func (h *health) isUp() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.up
}

// down records that the database did not answer. It is called on failures
// only, so it need not spare changeMu as answered does.
func (h *health) down(err error) {
	h.changeMu.Lock()
	defer h.changeMu.Unlock()
	h.mu.Lock()
	if !h.up {
		h.failed++
		h.mu.Unlock()
		return
	}
	h.up, h.checking, h.since, h.err, h.failed = false, false, time.Now(), err, 1
	h.cancel()
	st := Health{Up: false, Since: h.since, Err: err, Failed: 1}
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	h.notify(st)
}

// answered records that the database answered.
func (h *health) answered() {
	if h.isUp() {
		return
	}
	h.changeMu.Lock()
	defer h.changeMu.Unlock()
	h.mu.Lock()
	if h.up {
		h.mu.Unlock()
		return
	}
	now := time.Now()
	st := Health{Up: true, Since: now, Err: h.err, Failed: h.failed, DownFor: now.Sub(h.since)}
	h.up, h.since, h.err, h.failed = true, now, nil, 0
	h.gen, h.cancel = context.WithCancel(context.Background())
	h.mu.Unlock()
	h.notify(st)
}

func (h *health) notify(st Health) {
	if h.onChange != nil {
		h.onChange(st)
	}
}

// Health returns the state of the database as the store's calls found it.
func (s *Store) Health() Health { return s.health.state() }

// kind sorts the errors of a call by what a retry can do about them.
type kind int

const (
	// permanent errors are the statement's answer: a duplicate key, a
	// constraint, a syntax error. Retrying changes nothing.
	permanent kind = iota
	// conflict: a deadlock, a certification conflict between cluster
	// nodes (1213 on Galera, 3101 on MySQL Group Replication) or a lock
	// wait timeout (1205). The statement changed nothing; run it again.
	conflict
	// unreachable: the connection broke, or the node refuses statements
	// (not in the cluster's primary component, read only). The statement
	// may have run if the connection broke after it was sent.
	unreachable
)

// MySQL error numbers.
const (
	mysqlDuplicateKey  = 1062
	mysqlLockTimeout   = 1205
	mysqlDeadlock      = 1213
	mysqlTooManyConns  = 1040
	mysqlUnknownCom    = 1047 // Galera: "WSREP has not yet prepared node for application use"
	mysqlReadOnly      = 1290 // --read-only, --super-read-only
	mysqlReadOnlyMode  = 1836 // the server runs read only (innodb_read_only)
	mysqlReadOnlyTx    = 1792 // a write in a read-only transaction (transaction_read_only on)
	mysqlOffline       = 3032 // MySQL's offline_mode refuses ordinary users
	mysqlGRRolledBack  = 3101 // MySQL Group Replication: failed certification, rolled back
	mysqlServerGone    = 2006
	mysqlServerLost    = 2013
	mysqlQueryShutdown = 1053 // the server is shutting down
	mysqlConnKilled    = 1927 // connection was killed
	mysqlNoSuchTable   = 1146
	mysqlNoSuchColumn  = 1054

	// A value the column's character set cannot hold (a latin1 table).
	mysqlBadString      = 1366 // Incorrect string value, on a write
	mysqlMixCollations2 = 1267 // Illegal mix of collations, on a comparison
	mysqlMixCollations3 = 1270
	mysqlMixCollationsN = 1271
)

func classify(err error) kind {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case mysqlDeadlock, mysqlLockTimeout, mysqlGRRolledBack:
			return conflict
		case mysqlTooManyConns, mysqlUnknownCom, mysqlReadOnly, mysqlReadOnlyMode, mysqlReadOnlyTx,
			mysqlOffline, mysqlServerGone, mysqlServerLost, mysqlQueryShutdown, mysqlConnKilled:
			return unreachable
		}
		return permanent
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return conflict
		}
		return permanent
	}
	var ne net.Error
	switch {
	case errors.Is(err, errNotWritable), errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn),
		errors.Is(err, sql.ErrConnDone), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &ne):
		return unreachable
	}
	return permanent
}

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

// isCharsetMismatch reports whether err is MySQL refusing a string that the
// column's character set cannot hold.
func isCharsetMismatch(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case mysqlBadString, mysqlMixCollations2, mysqlMixCollations3, mysqlMixCollationsN:
		return true
	}
	return false
}

// unstorable turns a write refused for its characters into the input
// error of the field: the table's character set (latin1, say, where Leaf's
// script ran on a server with that default) cannot hold them. The
// server's message names the column.
func unstorable(err error) error {
	if !isCharsetMismatch(err) {
		return err
	}
	field, sentinel := "description", segment.ErrInvalidDescription
	if strings.Contains(err.Error(), "biz_tag") {
		field, sentinel = "tag name", segment.ErrInvalidTag
	}
	return fmt.Errorf("%w: the %s has characters that the character set of table leaf_alloc cannot store (convert it to utf8mb4)", sentinel, field)
}

// call runs fn, one or more statements, under the store's deadline and
// retries it when a retry can help: always after a conflict, and after a
// broken connection when safe is true (fn may then run twice; it must do
// no harm, such as a range taken and never used). It fails at once while
// the database is known to be down, and takes it down when the database
// does not answer within the deadline or keeps breaking connections.
//
// Errors that say the database is unavailable wrap
// segment.ErrStoreUnavailable; the caller's own cancellation is returned as
// it is; every other error is the statement's answer.
func (s *Store) call(ctx context.Context, safe bool, fn func(ctx context.Context) error) error {
	gen, err := s.health.admit()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	stop := context.AfterFunc(gen, cancel) // the store went down meanwhile
	defer stop()

	var k kind
	for try := 1; ; try++ {
		err = fn(cctx)
		if err == nil {
			s.health.answered()
			return nil
		}
		k = classify(err)
		if cctx.Err() != nil || try == attempts || k == permanent || (k == unreachable && !safe) {
			break
		}
		if k == conflict {
			pause := time.Duration(rand.Int64N(int64(conflictPause))) + time.Millisecond
			select {
			case <-cctx.Done():
			case <-time.After(pause):
			}
		}
	}

	switch {
	case ctx.Err() != nil: // the caller gave up: says nothing of the database
		return err
	case gen.Err() != nil:
		return fmt.Errorf("%w: the database stopped answering during the call: %w", segment.ErrStoreUnavailable, err)
	case cctx.Err() != nil:
		// One slow statement (a row locked by someone else, say) is not an
		// outage: the store goes down only when a probe cannot get an
		// answer either. Until the probe decides, nothing waits on the
		// database.
		s.confirm(fmt.Errorf("no answer within %v: %w", s.timeout, err))
		return fmt.Errorf("%w: no answer within %v: %w", segment.ErrStoreUnavailable, s.timeout, err)
	}
	switch k {
	case unreachable:
		if safe { // retried, and it still breaks
			s.health.down(err)
		}
		return fmt.Errorf("%w: %w", segment.ErrStoreUnavailable, err)
	case conflict:
		s.health.answered()
		return fmt.Errorf("%w: conflict persisted over %d attempts: %w", segment.ErrStoreUnavailable, attempts, err)
	}
	s.health.answered()
	return notMigrated(err)
}

// notMigrated names the missing table when err says one does not exist:
// MySQL's "Table 'db.leaf_alloc' doesn't exist", SQLite's "no such table:
// leaf_alloc".
func notMigrated(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == mysqlNoSuchTable {
		table := me.Message
		if i := strings.IndexByte(table, '\''); i >= 0 {
			table = table[i+1:]
			if j := strings.IndexByte(table, '\''); j >= 0 {
				table = table[:j]
			}
			if k := strings.LastIndexByte(table, '.'); k >= 0 {
				table = table[k+1:]
			}
		}
		return fmt.Errorf("%w: %w", &segment.NotMigratedError{Table: table}, err)
	}
	if errors.As(err, &me) && me.Number == mysqlNoSuchColumn {
		return fmt.Errorf("%w: %w", &segment.NotMigratedError{Detail: me.Message}, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		msg := se.Error()
		if _, table, ok := strings.Cut(msg, "no such table: "); ok {
			table, _, _ = strings.Cut(table, " ")
			return fmt.Errorf("%w: %w", &segment.NotMigratedError{Table: table}, err)
		}
		if _, col, ok := strings.Cut(msg, "no such column: "); ok {
			return fmt.Errorf("%w: %w", &segment.NotMigratedError{Detail: "no such column " + col}, err)
		}
	}
	return err
}

// confirmTimeout bounds the probe that decides whether a call that timed
// out met a database that does not answer at all.
const confirmTimeout = 500 * time.Millisecond

// confirm puts the store under suspicion after a call ran out of time and
// probes the database in the background: it takes the store down with
// cause if the probe gets no answer either, and clears the suspicion
// otherwise. The caller does not wait for it; one probe runs at a time.
func (s *Store) confirm(cause error) {
	if !s.health.suspect() {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(s.closing, min(confirmTimeout, s.timeout))
		defer cancel()
		err := s.probeFunc(ctx)
		switch {
		case s.closing.Err() != nil:
		case err != nil:
			s.health.down(cause)
		default:
			s.health.cleared()
		}
	}()
}

// probeLoop checks the database until ctx is cancelled: rarely while it
// answers, often while it does not (at once when it has just gone down),
// so that service resumes soon after it returns.
func (s *Store) probeLoop(ctx context.Context) {
	defer s.bg.Done()
	for {
		every := probeUp
		if !s.health.isUp() {
			every = probeDown
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.health.wake:
			t.Stop()
			continue // gone down just now: wait the short period from here
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, s.timeout)
		err := s.probeFunc(pctx)
		timedOut := pctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			s.health.answered()
		case timedOut:
			s.health.down(fmt.Errorf("no answer within %v: %w", s.timeout, err))
		case classify(err) == unreachable:
			s.health.down(err)
		}
	}
}

// probe asks the database whether it can take writes: on MySQL, whether
// the node in use is not read only and, on Galera, ready and synced (the
// connector moves on to the next node if not); on SQLite, whether the file
// answers.
func (s *Store) probe(ctx context.Context) error {
	if s.dialect == SQLite {
		var one int
		return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*nodeConn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		if err := writable(ctx, c.conn); err != nil {
			c.nodes.leave(c.idx)
			return err
		}
		return nil
	})
}
