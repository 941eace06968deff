package store

import (
	"context"
	"fmt"
	"math"

	"github.com/leafid/leaf/segment"
)

// Allocate raises the tag's max_id by step (the row's own step when
// step <= 0) and returns the range that this raise covers, so concurrent
// callers, in this process or another, get disjoint ranges. The range comes
// from the statement that raised max_id and from nothing else (see
// queries.go); a statement that failed, or whose answer was lost with its
// connection, yields no range.
//
// A tag is only the row of that exact name (MySQL's collations would match
// "ORDERS" to "orders"); any other is segment.ErrUnknownTag, found by a
// read, so that no name without a row ever runs an UPDATE. A row with a
// step below 1 is segment.ErrMisconfigured. Near the int64 maximum the
// step is cut to the ids left, so the last ones are issued too; a row
// already there is segment.ErrExhausted.
func (s *Store) Allocate(ctx context.Context, tag string, step int64) (segment.Allocation, error) {
	return s.allocate(ctx, tag, step, math.MinInt64, 0)
}

// AllocateAbove is Allocate after raising max_id to at least floor, in the
// same statement: the range starts at floor or above. It moves a row
// forward past a database that went back in time.
func (s *Store) AllocateAbove(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	return s.allocate(ctx, tag, step, floor, 0)
}

// allocate raises max_id to at least floor (math.MinInt64: no floor, Leaf's
// own statement) and then by step, or by atLeast where that is more.
func (s *Store) allocate(ctx context.Context, tag string, step, floor, atLeast int64) (segment.Allocation, error) {
	var a segment.Allocation
	if err := s.takes(ctx); err != nil {
		return a, err
	}
	// Safe to retry: a raise whose answer was lost only wastes its range.
	err := s.callTaking(ctx, true, func(ctx context.Context) error {
		var (
			row    string
			dbStep int64
		)
		if err := s.db.QueryRowContext(ctx, selectStep, tag).Scan(&row, &dbStep); err != nil {
			return lookupError(err)
		}
		if row != tag {
			return segment.ErrUnknownTag
		}
		// The step is always passed explicitly, so a concurrent change of
		// the row's step cannot shift the range. The cut near the int64
		// maximum comes below, from the statement's refusal.
		used, err := segment.LoadStep(step, dbStep, 0)
		if err != nil {
			return err
		}
		a, err = s.raise(ctx, tag, max(used, atLeast), dbStep, floor)
		return err
	})
	if err != nil {
		return segment.Allocation{}, fmt.Errorf("allocate %q: %w", tag, err)
	}
	return a, nil
}

// raise raises the row by used (after raising it to floor, unless floor
// is math.MinInt64) in one statement. A raise refused at the int64 maximum
// is tried again with the step cut to the ids left, as long as some are;
// the row may move in between, so a few times.
func (s *Store) raise(ctx context.Context, tag string, used, dbStep, floor int64) (segment.Allocation, error) {
	for range 3 {
		var (
			maxID int64
			ok    bool
			err   error
		)
		if floor == math.MinInt64 {
			maxID, ok, err = s.updateReturning(ctx, s.sql.allocate, used, tag, used)
		} else {
			maxID, ok, err = s.updateReturning(ctx, s.sql.allocateAbove, floor, used, tag, floor, used)
		}
		if err != nil {
			return segment.Allocation{}, err
		}
		if ok {
			return segment.Allocation{MaxID: maxID, Step: used, DBStep: dbStep}, nil
		}
		left, err := s.idsLeft(ctx, tag, floor)
		if err != nil {
			return segment.Allocation{}, err
		}
		if left >= used {
			return segment.Allocation{}, fmt.Errorf("no row updated for step %d with %d ids left", used, left)
		}
		used = left
	}
	return segment.Allocation{}, fmt.Errorf("no row updated near the int64 maximum")
}

// HandBack sets the tag's max_id back from end to first, only while it is
// still end: the unused tail of the last range this process took returns
// to the row, so a restart continues where it stopped. It reports whether
// the row was changed; a row that moved on is left alone.
func (s *Store) HandBack(ctx context.Context, tag string, end, first int64) (bool, error) {
	if first >= end {
		return false, fmt.Errorf("hand back %q: first unused id %d is not below the end %d", tag, first, end)
	}
	var done bool
	// Not retried after a broken connection: if the first run set max_id
	// back and another process then took a range that happens to end at
	// end, a second run would hand that range out again.
	err := s.call(ctx, false, func(ctx context.Context) error {
		res, err := s.db.ExecContext(ctx, handBack, first, tag, end)
		if err != nil {
			return err
		}
		n, err := rowsAffected(res)
		done = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("hand back %q: %w", tag, err)
	}
	return done, nil
}

// idsLeft is how many ids a raise of the row may still take before max_id
// reaches the int64 maximum; none is segment.ErrExhausted.
func (s *Store) idsLeft(ctx context.Context, tag string, floor int64) (int64, error) {
	t, err := s.readTag(ctx, tag)
	if err != nil {
		return 0, err
	}
	base := max(t.MaxID, floor)
	if base <= 0 {
		return math.MaxInt64, nil
	}
	left := math.MaxInt64 - base
	if left <= 0 {
		return 0, fmt.Errorf("%w: max_id is %d", segment.ErrExhausted, max(t.MaxID, floor))
	}
	return left, nil
}
