package store

import (
	"context"
	"time"
)

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
