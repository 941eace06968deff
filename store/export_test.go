package store

import "context"

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
	_, ok, err := raiseRows(ctx, tx, tags, rows)
	return ok, err
}

// Dialect is the dialect the store runs on.
func Dialect(s *Store) string { return s.dialect }
