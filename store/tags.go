package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// Tag returns the tag's row, or segment.ErrUnknownTag.
func (s *Store) Tag(ctx context.Context, tag string) (segment.Tag, error) {
	var t segment.Tag
	err := s.call(ctx, true, func(ctx context.Context) error {
		var err error
		t, err = s.readTag(ctx, tag)
		return err
	})
	if err != nil {
		return segment.Tag{}, fmt.Errorf("read tag %q: %w", tag, err)
	}
	return t, nil
}

// readTag reads the row of exactly this name, within a call.
func (s *Store) readTag(ctx context.Context, tag string) (segment.Tag, error) {
	var row tagRow
	if err := s.db.GetContext(ctx, &row, selectTag, tag); err != nil {
		return segment.Tag{}, lookupError(err)
	}
	if row.Name != tag {
		return segment.Tag{}, segment.ErrUnknownTag
	}
	return row.tag(), nil
}

// FindTags returns those of names that have a row of exactly that name,
// in one read. A name the column's character set cannot hold makes the
// whole read fail on MySQL; the names are then read one by one, and that
// name is not found.
func (s *Store) FindTags(ctx context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var found []string
	err := s.call(ctx, true, func(ctx context.Context) error {
		found = found[:0]
		query, args, err := sqlx.In(selectTagNames, names)
		if err != nil {
			return err
		}
		var stored []string
		err = sqlx.SelectContext(ctx, s.db, &stored, query, args...)
		if isCharsetMismatch(err) {
			return s.findTagsOneByOne(ctx, names, &found)
		}
		if err != nil {
			return err
		}
		asked := make(map[string]bool, len(names))
		for _, n := range names {
			asked[n] = true
		}
		for _, n := range stored {
			if asked[n] {
				found = append(found, n)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find tags: %w", err)
	}
	return found, nil
}

// findTagsOneByOne is FindTags by one read per name, within a call.
func (s *Store) findTagsOneByOne(ctx context.Context, names []string, found *[]string) error {
	for _, n := range names {
		_, err := s.readTag(ctx, n)
		switch {
		case err == nil:
			*found = append(*found, n)
		case !errors.Is(err, segment.ErrUnknownTag):
			return err
		}
	}
	return nil
}

// lookupError is the error of a read of one row by name: no row, or a
// name the column's character set cannot hold (a latin1 table asked for
// "订单"), is segment.ErrUnknownTag.
func lookupError(err error) error {
	if errors.Is(err, sql.ErrNoRows) || isCharsetMismatch(err) {
		return segment.ErrUnknownTag
	}
	return err
}

// Tags returns every tag, ordered by name byte by byte (whatever the
// collation of the column).
func (s *Store) Tags(ctx context.Context) ([]segment.Tag, error) {
	var rows []tagRow
	err := s.call(ctx, true, func(ctx context.Context) error {
		rows = rows[:0]
		return sqlx.SelectContext(ctx, s.db, &rows, selectTags)
	})
	if err != nil {
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
// returns a *segment.ExistsError (segment.ErrTagExists) when the name,
// or one that differs from it only in case, is taken, and
// segment.ErrInvalidTag for the name of a row of a period of a formatted
// tag (tag@KEY): those rows are the tag's to make. Whether the row was
// created is the INSERT's own answer; the row is read back only to show it.
func (s *Store) CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	return s.createTag(ctx, t, nil)
}

// createTag is CreateTag with what then adds in the same transaction
// (nil: nothing more).
func (s *Store) createTag(ctx context.Context, t segment.Tag, then func(ctx context.Context, tx *sqlx.Tx) error) (segment.Tag, error) {
	if err := t.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	// Not retried after a broken connection: the INSERT may have run, and
	// a second one would call the caller's own new tag taken.
	err := s.call(ctx, false, func(ctx context.Context) error {
		if err := s.refusePeriodRow(ctx, t.Name); err != nil {
			return err
		}
		tx, err := s.db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // after a commit, a no-op
		if err := s.insertNewTag(ctx, tx, t); err != nil {
			return err
		}
		if then != nil {
			if err := then(ctx, tx); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	created, err := s.Tag(ctx, t.Name)
	if err != nil { // created all the same: show what was inserted
		created = t
		created.UpdateTime = time.Now().UTC().Truncate(time.Second)
	}
	return created, nil
}

// UpdateTag changes the fields of u that are set, atomically, after
// u.Validate, and returns the tag as stored. max_id may only be raised (or
// set to its current value), anything else is segment.ErrInvalidMaxID. A
// missing row is segment.ErrUnknownTag.
func (s *Store) UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error) {
	var (
		step, maxID sql.NullInt64
		setDesc     bool
		desc        sql.NullString
	)
	if err := u.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, err)
	}
	if u.Step != nil {
		step = sql.NullInt64{Int64: *u.Step, Valid: true}
	}
	if u.MaxID != nil {
		maxID = sql.NullInt64{Int64: *u.MaxID, Valid: true}
	}
	if u.Description != nil {
		setDesc, desc = true, nullString(*u.Description)
	}
	var updated segment.Tag
	// Not retried after a broken connection: if the first run raised
	// max_id and an allocation raised it further, a second run would refuse
	// the raise that worked.
	err := s.call(ctx, false, func(ctx context.Context) error {
		// Only the row of exactly this name: the UPDATE's own WHERE
		// follows the column's collation.
		if _, err := s.readTag(ctx, name); err != nil {
			return err
		}
		res, err := s.db.ExecContext(ctx, updateTag, step, setDesc, desc, maxID, name, maxID)
		if err != nil {
			return unstorable(err)
		}
		n, err := rowsAffected(res)
		if err != nil {
			return err
		}
		// Whether the row changed is the UPDATE's answer; the row is read
		// to show it, or to say why nothing changed.
		updated, err = s.readTag(ctx, name)
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
