package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"
)

// RaiseRowLosing is RaiseRow whose first lose compare-and-sets are made
// and their answers lost: the call sees a dropped connection.
func RaiseRowLosing(ctx context.Context, s *Store, row string, limit int64, lose int) (first, last int64, err error) {
	return s.raiseRow(ctx, row, limit, 0, func(ctx context.Context, q string, args ...any) (sql.Result, error) {
		res, err := s.db.ExecContext(ctx, q, args...)
		if err == nil && lose > 0 {
			lose--
			return nil, driver.ErrBadConn
		}
		return res, err
	})
}

// ErrorKind is how a call treats err: "conflict" (run it again),
// "unreachable" (the database or the node did not take it) or "permanent"
// (the statement's answer).
func ErrorKind(err error) string {
	switch classify(err) {
	case conflict:
		return "conflict"
	case unreachable:
		return "unreachable"
	}
	return "permanent"
}

// RaiseAsRead runs the compare-and-set of AllocateBatch on rows as if they
// had been read with the given max_ids, in a transaction it rolls back,
// and reports whether the statement matched every row.
func RaiseAsRead(ctx context.Context, s *Store, maxIDs map[string]int64) (bool, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	rows := map[string]batchRow{}
	var tags []string
	for tag, maxID := range maxIDs {
		rows[tag] = batchRow{Name: tag, MaxID: maxID, Step: 10}
		tags = append(tags, tag)
	}
	_, ok, err := raiseRows(ctx, tx, tags, rows, nextRange, "")
	return ok, err
}

// Dialect is the dialect the store runs on.
func Dialect(s *Store) string { return s.dialect }

// OpenSQLiteSynchronous is OpenSQLite with PRAGMA synchronous set to
// synchronous (OFF, NORMAL, FULL or EXTRA) instead of FULL.
func OpenSQLiteSynchronous(ctx context.Context, path string, opts Options, synchronous string) (*Store, error) {
	return openSQLite(ctx, path, opts, synchronous)
}

// JudgeMySQL is judgeMySQL: what a node's global variables and status
// (names in lower case) say of its commits.
func JudgeMySQL(vars, status map[string]string) (durable bool, why string, fixes []Fix) {
	return judgeMySQL(vars, status)
}

// JudgeSQLite is judgeSQLite.
func JudgeSQLite(memory bool, mode string, synchronous int) (durable bool, why string, fixes []Fix) {
	return judgeSQLite(memory, mode, synchronous)
}

// SetDurabilityEvery makes the stores opened from now on read their
// settings again every d, until the test ends.
func SetDurabilityEvery(tb interface{ Cleanup(func()) }, d time.Duration) {
	old := durabilityEvery
	durabilityEvery = d
	tb.Cleanup(func() { durabilityEvery = old })
}

// SeeStarts makes s read every node's start through f, which returns the
// start and durability s is to see instead of those read: a test restarts
// a database, or makes it one that can forget, without touching it. A start
// f moves is another run: its run id, if the node has one, moves with it.
func SeeStarts(s *Store, f func(node string, started int64, durable bool) (int64, bool)) {
	view := func(n nodeStart) nodeStart {
		started, durable := f(n.Node, n.Started, n.Durable)
		if started != n.Started && n.Run != "" {
			n.Run = fmt.Sprintf("%.16s%016x", n.Run, started)
		}
		n.Started, n.Durable = started, durable
		return n
	}
	s.starts.seen.Store(&view)
}

// DropConnections closes the idle connections of s's pool, as a database
// that restarted breaks them: the next call connects again.
func DropConnections(s *Store) {
	s.db.SetMaxIdleConns(0)
	s.db.SetMaxIdleConns(8)
}

// PlanRestart is planRestart over rows of leaf_db_start and readings, each
// (node, started, durable) and the run ids of each, if any (runs: node ->
// the recorded run, the read run); it returns the nodes to write and
// whether every row jumps.
func PlanRestart(record map[string][2]int64, readings []StartReading, runs map[string][2]string) (write []string, jump bool) {
	rec := map[string]startRow{}
	for k, v := range record {
		rec[k] = startRow{Started: v[0], Durable: v[1] != 0, Run: runs[k][0]}
	}
	var rs []nodeStart
	for _, r := range readings {
		rs = append(rs, nodeStart{Node: r.Node, Started: r.Started, Durable: r.Durable, Run: runs[r.Node][1]})
	}
	p := planRestart(rec, rs)
	for _, n := range p.write {
		write = append(write, n.Node)
	}
	return write, p.jump
}

// StartReading is a reading of a node's start, for PlanRestart.
type StartReading struct {
	Node    string
	Started int64
	Durable bool
}
