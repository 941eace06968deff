package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/storeset"
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
	if err := distinct(tags); err != nil {
		return nil, err
	}
	if err := s.takes(ctx); err != nil {
		return nil, err
	}
	var out []segment.BatchResult
	// Safe to retry: a transaction whose answer was lost only wastes its
	// ranges.
	err := s.callTaking(ctx, true, func(ctx context.Context) error {
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

// AllocateBatchIn does for each of tags, all different, what
// AllocateIn(ctx, tag, 0, floors[i], c, version) does, in one transaction
// of three statements whatever their number, as AllocateBatch: a read that
// locks the rows, one compare-and-set that raises all of them to the ends
// of their ranges of class c, only while the store is still active under
// version, and the commit. It returns one result per tag, in the order of
// tags, with the max_id its row was found at; storeset.ErrSetChanged for
// the whole call when the store is not active under version. An error of
// the whole call means that no range is handed out.
func (s *Store) AllocateBatchIn(ctx context.Context, tags []string, floors []int64, c segment.Class, version int64) ([]storeset.ClassResult, error) {
	if len(floors) != len(tags) {
		return nil, fmt.Errorf("allocate %d tags: %d floors", len(tags), len(floors))
	}
	if err := distinct(tags); err != nil {
		return nil, err
	}
	if len(tags) == 0 {
		return nil, nil
	}
	if err := s.takes(ctx); err != nil {
		return nil, err
	}
	plan := func(i int, r batchRow) (segment.Allocation, error) {
		used, err := segment.LoadStep(0, r.Step, 0)
		if err != nil {
			return segment.Allocation{}, err
		}
		start, size, err := c.Range(max(r.MaxID, floors[i]), used)
		if err != nil {
			return segment.Allocation{}, err
		}
		return segment.Allocation{MaxID: start + size, Step: size, DBStep: r.Step}, nil
	}
	var out []storeset.ClassResult
	// Safe to retry: a transaction whose answer was lost only wastes its
	// ranges.
	err := s.callTaking(ctx, true, func(ctx context.Context) error {
		for range attempts {
			ok, err := s.inBatch(ctx, tags, func(tx *sqlx.Tx, rows map[string]batchRow) (ok bool, err error) {
				out, ok, err = raiseRows(ctx, tx, tags, rows, plan, raiseRowsInSet, version)
				return ok, err
			})
			if err != nil || ok {
				return err
			}
			if err := s.activeAt(ctx, version); err != nil {
				return err
			}
			// rows moved between the read and the raise: run it again
		}
		return fmt.Errorf("rows kept moving during %d raises", attempts)
	})
	if err != nil {
		return nil, fmt.Errorf("allocate %d tags: %w", len(tags), err)
	}
	return out, nil
}

// distinct refuses a list of tags that names one twice.
func distinct(tags []string) error {
	seen := make(map[string]bool, len(tags))
	for _, tag := range tags {
		if seen[tag] {
			return fmt.Errorf("allocate %d tags: %q is asked twice", len(tags), tag)
		}
		seen[tag] = true
	}
	return nil
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
	var out []segment.BatchResult
	ok, err := s.inBatch(ctx, tags, func(tx *sqlx.Tx, rows map[string]batchRow) (bool, error) {
		res, ok, err := raiseRows(ctx, tx, tags, rows, nextRange, "")
		for _, r := range res {
			out = append(out, r.BatchResult)
		}
		return ok, err
	})
	if err != nil || !ok {
		return nil, err
	}
	return out, nil
}

// inBatch runs raise in a transaction over the rows of tags, read and
// locked, and commits when it reports true.
func (s *Store) inBatch(ctx context.Context, tags []string, raise func(*sqlx.Tx, map[string]batchRow) (bool, error)) (bool, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() // after a commit it does nothing
	rows, err := s.lockRows(ctx, tx, tags)
	if err != nil {
		return false, err
	}
	ok, err := raise(tx, rows)
	if err != nil || !ok {
		return false, err
	}
	return true, tx.Commit()
}

// nextRange is the range Allocate(ctx, tag, 0) takes of row r: the row's
// own step from its max_id.
func nextRange(_ int, r batchRow) (segment.Allocation, error) {
	step, err := segment.LoadStep(0, r.Step, r.MaxID)
	if err != nil {
		return segment.Allocation{}, err
	}
	return segment.Allocation{MaxID: r.MaxID + step, Step: step, DBStep: r.Step}, nil
}

// raiseRows raises, in one compare-and-set, the rows of tags as read in
// rows, each to the end of the range plan gives it (tags[i]'s plan is
// plan(i, row)), and returns each tag's result with the max_id it was
// found at. The statement also holds cond, with condArgs, when it is not
// empty. ok is false when the statement did not match every row it named:
// some moved since they were read, or cond did not hold.
func raiseRows(ctx context.Context, tx *sqlx.Tx, tags []string, rows map[string]batchRow,
	plan func(i int, r batchRow) (segment.Allocation, error), cond string, condArgs ...any) (out []storeset.ClassResult, ok bool, err error) {
	out = make([]storeset.ClassResult, len(tags))
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
		a, err := plan(i, r)
		if err != nil {
			out[i].Err = fmt.Errorf("allocate %q: %w", tag, err)
			continue
		}
		out[i].Allocation, out[i].Found = a, r.MaxID
		set.WriteString(raiseRowsWhen)
		if raised > 0 {
			where.WriteString(" OR ")
		}
		where.WriteString(raiseRowsRow)
		args = append(args, tag, a.MaxID)
		conds = append(conds, tag, r.MaxID)
		raised++
	}
	if raised == 0 {
		return out, true, nil
	}
	query := set.String() + raiseRowsWhere + where.String() + ")" + cond
	res, err := tx.ExecContext(ctx, query, slices.Concat(args, conds, condArgs)...)
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
