package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/jmoiron/sqlx"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
)

var (
	_ sequence.OrderedStore = (*Store)(nil)
	_ sequence.TagRows      = (*Store)(nil)
)

// Ordered tags: a tag's row in leaf_alloc, and its lease row in
// leaf_seq_section under the tag's name and section -1, found by that
// name byte for byte as a space's sections are (see sequence.go).
const (
	insertOrderedTag = `INSERT INTO leaf_seq_section (space, section) VALUES (?, -1)`
	selectOrdered    = `SELECT space FROM leaf_seq_section WHERE section = -1 ORDER BY space`
	// ensureOrdered* create a tag's lease row unless it exists. Args: tag.
	ensureOrderedMySQL = `INSERT INTO leaf_seq_section (space, section) VALUES (?, -1)
ON DUPLICATE KEY UPDATE section = section`
	ensureOrderedSQLite = `INSERT INTO leaf_seq_section (space, section) VALUES (?, -1)
ON CONFLICT (space, section) DO NOTHING`
	// raiseRowTo sets a row's max_id from the value read to a higher one:
	// a compare-and-set. Args: new max_id, row, max_id read.
	raiseRowTo = `UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ? AND max_id = ?`
)

// CreateOrderedTag creates a tag whose ids strictly increase across the
// fleet: its leaf_alloc row and its lease row, in one transaction.
func (s *Store) CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	return s.createTag(ctx, t, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, insertOrderedTag, t.Name); err != nil {
			if isDuplicateKey(err) {
				return segment.ErrTagExists
			}
			return err
		}
		return nil
	})
}

// OrderedTags lists the ordered tags.
func (s *Store) OrderedTags(ctx context.Context) ([]string, error) {
	var names []string
	err := s.call(ctx, true, func(ctx context.Context) error {
		names = names[:0]
		return sqlx.SelectContext(ctx, s.db, &names, selectOrdered)
	})
	if err != nil {
		return nil, fmt.Errorf("read ordered tags: %w", err)
	}
	return names, nil
}

// RaiseRow raises a row of an ordered tag by its step, or by atLeast where
// that is more, and by less where limit is reached (sequence.TagRows): the
// row is read, then raised from the max_id read by a compare-and-set. Only
// the tag's owner raises the row, so the set finds it as read; another
// writer's raise in between only makes it read again. A row already past
// limit (0: none) is sequence.ErrFull, found by the read alone.
//
// A raise whose answer was lost (the connection dropped, the call tried
// again) is found by the next read: the row at exactly the value that set
// would have made. That range is this owner's, taken and never issued, and
// it is the one returned, rather than a second range above it, which would
// skip it in a tag that promises no gap. With a compare-and-set a lost raise
// commits only on the row as read, so no other value can be mistaken for it.
func (s *Store) RaiseRow(ctx context.Context, row string, limit, atLeast int64) (first, last int64, err error) {
	return s.raiseRow(ctx, row, limit, atLeast, s.db.ExecContext)
}

// raiseRow is RaiseRow with exec running the compare-and-set.
func (s *Store) raiseRow(ctx context.Context, row string, limit, atLeast int64,
	exec func(context.Context, string, ...any) (sql.Result, error)) (first, last int64, err error) {
	if err := s.takes(ctx); err != nil {
		return 0, 0, err
	}
	var lost struct{ from, to int64 } // a set whose answer was lost; to is 0 when none was
	err = s.callTaking(ctx, true, func(ctx context.Context) error {
		for range 3 {
			t, err := s.readTag(ctx, row)
			if err != nil {
				return err
			}
			if lost.to != 0 && t.MaxID == lost.to {
				first, last = lost.from, lost.to-1 // it was made
				return nil
			}
			lost.to = 0
			by, err := rowRaise(t, limit, atLeast)
			if err != nil {
				return err
			}
			res, err := exec(ctx, raiseRowTo, t.MaxID+by, row, t.MaxID)
			if err != nil {
				lost.from, lost.to = t.MaxID, t.MaxID+by
				return err
			}
			if n, err := rowsAffected(res); err != nil {
				lost.from, lost.to = t.MaxID, t.MaxID+by
				return err
			} else if n == 1 {
				first, last = t.MaxID, t.MaxID+by-1
				return nil
			}
		}
		return fmt.Errorf("the row moved under three raises in a row")
	})
	if err != nil {
		return 0, 0, fmt.Errorf("raise %q: %w", row, err)
	}
	return first, last, nil
}

// rowRaise is how far RaiseRow raises row t: its step, or atLeast where
// that is more, cut at limit (0: none) and at the int64 maximum.
func rowRaise(t segment.Tag, limit, atLeast int64) (int64, error) {
	if t.Step < segment.MinStep {
		return 0, fmt.Errorf("%w: its step is %d, below %d", segment.ErrMisconfigured, t.Step, segment.MinStep)
	}
	if limit > 0 && t.MaxID > limit {
		return 0, fmt.Errorf("%w: max_id %d is past %d", sequence.ErrFull, t.MaxID, limit)
	}
	if t.MaxID == math.MaxInt64 {
		return 0, segment.ErrExhausted
	}
	by := min(max(t.Step, atLeast), math.MaxInt64-t.MaxID)
	if limit > 0 {
		by = min(by, limit+1-t.MaxID)
	}
	return by, nil
}

// EnsureOrdered makes an existing tag ordered: it creates the tag's lease
// row unless it exists (sequence.OrderedStore). A formatted tag whose
// numbers must be dense becomes ordered this way when it was created
// before such tags were.
func (s *Store) EnsureOrdered(ctx context.Context, tag string) error {
	q := ensureOrderedMySQL
	if s.dialect == SQLite {
		q = ensureOrderedSQLite
	}
	err := s.call(ctx, true, func(ctx context.Context) error {
		if _, err := s.readTag(ctx, tag); err != nil {
			return err
		}
		_, err := s.db.ExecContext(ctx, q, tag)
		return err
	})
	if err != nil {
		return fmt.Errorf("make tag %q ordered: %w", tag, err)
	}
	return nil
}
