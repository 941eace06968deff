package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/segment"
)

var _ segment.BatchAllocator = (*Store)(nil)

// AllocateBatch takes the first range of each of tags, as Allocate(ctx,
// tag, 0) would, in one transaction of three statements whatever their
// number: a read that locks the rows, one compare-and-set that raises all
// of them, and the commit.
//
// Each range is fixed before the raise: the compare-and-set sets each row
// from the max_id read to that plus the row's step, only where the row
// still has the max_id read, and it must match every row it names. So
// the range of a row is proved by the statement that raised it, not by a
// read after it, and the ranges are handed out only once the commit
// succeeded. On a multi-primary cluster a transaction may end silently
// before its last statements (see queries.go); the raise then runs on its
// own, and its answer still proves the ranges: a row that moved in
// between is not matched, and the batch is run again, the ranges of the
// rows it did raise lost rather than issued.
//
// Only rows of exactly the names asked are raised; any other name is
// segment.ErrUnknownTag in its result, as are the rows of Allocate's other
// refusals in theirs.
func (s *Store) AllocateBatch(ctx context.Context, tags []string) ([]segment.BatchResult, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	seen := make(map[string]bool, len(tags))
	for _, tag := range tags {
		if seen[tag] {
			return nil, fmt.Errorf("allocate %d tags: %q is asked twice", len(tags), tag)
		}
		seen[tag] = true
	}
	if err := s.takes(); err != nil {
		return nil, err
	}
	var out []segment.BatchResult
	// Safe to retry: a transaction whose answer was lost only wastes its
	// ranges.
	err := s.call(ctx, true, func(ctx context.Context) error {
		for range attempts {
			res, err := s.raiseBatch(ctx, tags)
			if err != nil || res != nil {
				out = res
				return err
			}
		}
		return fmt.Errorf("rows kept moving during %d raises", attempts)
	})
	if err != nil {
		return nil, fmt.Errorf("allocate %d tags: %w", len(tags), err)
	}
	return out, nil
}

// batchRow is a row as the batch reads it.
type batchRow struct {
	Name  string `db:"biz_tag"`
	MaxID int64  `db:"max_id"`
	Step  int64  `db:"step"`
}

// raiseBatch runs the transaction of AllocateBatch once. It returns nil
// and no error when the compare-and-set did not match every row it named:
// nothing is handed out then, and the caller runs it again.
func (s *Store) raiseBatch(ctx context.Context, tags []string) ([]segment.BatchResult, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() // after a commit it does nothing
	rows, err := s.lockRows(ctx, tx, tags)
	if err != nil {
		return nil, err
	}
	out, ok, err := raiseRows(ctx, tx, tags, rows)
	if err != nil || !ok {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return out, nil
}

// raiseRows raises, in one compare-and-set, the rows of tags as read in
// rows, and returns each tag's result. ok is false when the statement did
// not match every row it named: some moved since they were read.
func raiseRows(ctx context.Context, tx *sqlx.Tx, tags []string, rows map[string]batchRow) (out []segment.BatchResult, ok bool, err error) {
	out = make([]segment.BatchResult, len(tags))
	var (
		set   strings.Builder
		where strings.Builder
		args  []any
		conds []any
	)
	set.WriteString(raiseRowsSet)
	raised := 0
	for i, tag := range tags {
		r, ok := rows[tag]
		if !ok {
			out[i].Err = fmt.Errorf("allocate %q: %w", tag, segment.ErrUnknownTag)
			continue
		}
		step, err := segment.LoadStep(0, r.Step, r.MaxID)
		if err != nil {
			out[i].Err = fmt.Errorf("allocate %q: %w", tag, err)
			continue
		}
		out[i].Allocation = segment.Allocation{MaxID: r.MaxID + step, Step: step, DBStep: r.Step}
		set.WriteString(raiseRowsWhen)
		if raised > 0 {
			where.WriteString(" OR ")
		}
		where.WriteString(raiseRowsRow)
		args = append(args, tag, r.MaxID+step)
		conds = append(conds, tag, r.MaxID)
		raised++
	}
	if raised == 0 {
		return out, true, nil
	}
	res, err := tx.ExecContext(ctx, set.String()+raiseRowsWhere+where.String(), append(args, conds...)...)
	if err != nil {
		return nil, false, err
	}
	n, err := rowsAffected(res)
	if err != nil {
		return nil, false, err
	}
	return out, n == int64(raised), nil
}

// lockRows reads and locks the rows of exactly the names asked, by name.
// A name the column's character set cannot hold makes the whole read fail
// on MySQL; the names are then read one by one, and that one is not found.
func (s *Store) lockRows(ctx context.Context, tx *sqlx.Tx, names []string) (map[string]batchRow, error) {
	read := func(names []string) ([]batchRow, error) {
		query, args, err := sqlx.In(s.sql.selectRowsLocked, names)
		if err != nil {
			return nil, err
		}
		var rows []batchRow
		err = tx.SelectContext(ctx, &rows, query, args...)
		return rows, err
	}
	rows, err := read(names)
	if isCharsetMismatch(err) {
		rows = rows[:0]
		for _, name := range names {
			one, err := read([]string{name})
			if isCharsetMismatch(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			rows = append(rows, one...)
		}
	} else if err != nil {
		return nil, err
	}
	byName := make(map[string]batchRow, len(rows))
	asked := make(map[string]bool, len(names))
	for _, n := range names {
		asked[n] = true
	}
	for _, r := range rows {
		if asked[r.Name] { // a row a collation matched is not the name asked
			byName[r.Name] = r
		}
	}
	return byName, nil
}
