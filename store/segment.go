package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/segment"
)

// tagRow is one row of leaf_alloc.
type tagRow struct {
	Name        string         `db:"biz_tag"`
	MaxID       int64          `db:"max_id"`
	Step        int64          `db:"step"`
	Description sql.NullString `db:"description"`
	UpdateTime  time.Time      `db:"update_time"`
}

func (r tagRow) tag() segment.Tag {
	return segment.Tag{
		Name:        r.Name,
		MaxID:       r.MaxID,
		Step:        r.Step,
		Description: r.Description.String,
		UpdateTime:  r.UpdateTime.UTC(),
	}
}

// Allocate raises the tag's max_id by step (the row's own step when
// step <= 0) and reads it back in the same transaction, so concurrent
// callers, in this process or another, get disjoint ranges. It returns
// segment.ErrUnknownTag for a missing row and segment.ErrOverflow, leaving
// the row unchanged, when max_id would pass the int64 maximum.
func (s *Store) Allocate(ctx context.Context, tag string, step int64) (segment.Allocation, error) {
	var a segment.Allocation
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var (
			res sql.Result
			err error
		)
		if step > 0 {
			res, err = tx.ExecContext(ctx, allocateByStep, step, tag, step)
		} else {
			res, err = tx.ExecContext(ctx, allocateByRowStep, tag)
		}
		if err != nil {
			return err
		}
		n, err := rowsAffected(res)
		if err != nil {
			return err
		}
		var row tagRow
		if err := sqlx.GetContext(ctx, tx, &row, selectTag, tag); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return segment.ErrUnknownTag
			}
			return err
		}
		used := step
		if used <= 0 {
			used = row.Step
		}
		if n == 0 {
			switch {
			case used <= 0:
				return fmt.Errorf("%w: the row's step is %d", segment.ErrInvalidStep, row.Step)
			case row.MaxID > math.MaxInt64-used:
				return fmt.Errorf("%w: max_id %d + step %d", segment.ErrOverflow, row.MaxID, used)
			default:
				return fmt.Errorf("no row updated for max_id %d, step %d", row.MaxID, used)
			}
		}
		a = segment.Allocation{MaxID: row.MaxID, Step: used, DBStep: row.Step}
		return nil
	})
	if err != nil {
		return segment.Allocation{}, fmt.Errorf("allocate %q: %w", tag, err)
	}
	return a, nil
}

// Tag returns the tag's row, or segment.ErrUnknownTag.
func (s *Store) Tag(ctx context.Context, tag string) (segment.Tag, error) {
	t, err := s.tag(ctx, s.db, tag)
	if err != nil {
		return segment.Tag{}, fmt.Errorf("read tag %q: %w", tag, err)
	}
	return t, nil
}

func (s *Store) tag(ctx context.Context, q sqlx.QueryerContext, tag string) (segment.Tag, error) {
	var row tagRow
	if err := sqlx.GetContext(ctx, q, &row, selectTag, tag); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return segment.Tag{}, segment.ErrUnknownTag
		}
		return segment.Tag{}, err
	}
	return row.tag(), nil
}

// Tags returns every tag, ordered by name byte by byte (whatever the
// collation of the column).
func (s *Store) Tags(ctx context.Context) ([]segment.Tag, error) {
	var rows []tagRow
	if err := sqlx.SelectContext(ctx, s.db, &rows, selectTags); err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	tags := make([]segment.Tag, len(rows))
	for i, r := range rows {
		tags[i] = r.tag()
	}
	slices.SortStableFunc(tags, func(a, b segment.Tag) int { return strings.Compare(a.Name, b.Name) })
	return tags, nil
}

// CreateTag inserts a tag after t.Validate and returns it as stored. It
// returns segment.ErrTagExists when the name is taken.
func (s *Store) CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	if err := t.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	if err := validateDescription(t.Description); err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	var created segment.Tag
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, insertTag, t.Name, t.MaxID, t.Step, nullString(t.Description)); err != nil {
			if isDuplicateKey(err) {
				return segment.ErrTagExists
			}
			return err
		}
		var err error
		created, err = s.tag(ctx, tx, t.Name)
		return err
	})
	if err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	return created, nil
}

// UpdateTag changes the fields of u that are set, atomically, and returns
// the tag as stored. The step must be within segment.MinStep..MaxStep;
// max_id may only be raised (or set to its current value), anything else
// is segment.ErrInvalidMaxID. A missing row is segment.ErrUnknownTag.
func (s *Store) UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error) {
	var (
		step, maxID sql.NullInt64
		setDesc     bool
		desc        sql.NullString
	)
	if u.Step != nil {
		if err := segment.ValidateStep(*u.Step); err != nil {
			return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, err)
		}
		step = sql.NullInt64{Int64: *u.Step, Valid: true}
	}
	if u.MaxID != nil {
		if *u.MaxID < 1 {
			return segment.Tag{}, fmt.Errorf("update tag %q: %w: %d is below 1", name, segment.ErrInvalidMaxID, *u.MaxID)
		}
		maxID = sql.NullInt64{Int64: *u.MaxID, Valid: true}
	}
	if u.Description != nil {
		if err := validateDescription(*u.Description); err != nil {
			return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, err)
		}
		setDesc, desc = true, nullString(*u.Description)
	}
	var updated segment.Tag
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, updateTag, step, setDesc, desc, maxID, name, maxID)
		if err != nil {
			return err
		}
		n, err := rowsAffected(res)
		if err != nil {
			return err
		}
		updated, err = s.tag(ctx, tx, name)
		if err != nil {
			return err
		}
		if n == 0 {
			if maxID.Valid && maxID.Int64 < updated.MaxID {
				return fmt.Errorf("%w: %d is below the current %d; max_id may only be raised",
					segment.ErrInvalidMaxID, maxID.Int64, updated.MaxID)
			}
			return fmt.Errorf("no row updated")
		}
		return nil
	})
	if err != nil {
		return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, err)
	}
	return updated, nil
}
