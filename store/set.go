package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/storeset"
)

var _ storeset.Store = (*Store)(nil)

// Record returns what the store says about itself: its identity and its
// copy of the set of stores.
func (s *Store) Record(ctx context.Context) (storeset.Record, error) {
	var r storeset.Record
	err := s.call(ctx, true, func(ctx context.Context) error {
		var (
			state string
			set   sql.NullString
		)
		if err := s.db.QueryRowContext(ctx, selectRecord).Scan(&r.StoreID, &r.Version, &state, &set); err != nil {
			return err
		}
		r.State = storeset.State(state)
		r.Set = nil
		if set.Valid {
			r.Set = []byte(set.String)
		}
		return nil
	})
	if err != nil {
		return storeset.Record{}, fmt.Errorf("read the store's record: %w", err)
	}
	return r, nil
}

// SetRecord replaces the store's version, state and set with to's, only
// while they are still from's. It reports whether it did.
func (s *Store) SetRecord(ctx context.Context, from, to storeset.Record) (bool, error) {
	var done bool
	// Not retried after a broken connection: a second run would find the
	// record changed by the first and report false.
	err := s.call(ctx, false, func(ctx context.Context) error {
		res, err := s.db.ExecContext(ctx, updateRecord, to.Version, string(to.State), string(to.Set), from.Version, string(from.State))
		if err != nil {
			return err
		}
		n, err := rowsAffected(res)
		done = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("write the store's record: %w", err)
	}
	return done, nil
}

// AllocateIn takes the tag's next range of class c, at or above floor, while
// the store is active under set version version: the range starts at the
// first id of the class at or above both the row's max_id and floor, and
// holds at most step ids (the row's own step when step <= 0), fewer where
// its block ends. It is a compare-and-set of max_id, tried again when
// another caller moved the row first. It returns storeset.ErrSetChanged
// when the store is not active under version, and the errors of Allocate.
// found is the max_id the row had before the range was taken.
func (s *Store) AllocateIn(ctx context.Context, tag string, step, floor int64, c segment.Class, version int64) (a segment.Allocation, found int64, err error) {
	if err := s.takes(ctx); err != nil {
		return a, 0, err
	}
	// Safe to retry: a move whose answer was lost only wastes its range.
	err = s.callTaking(ctx, true, func(ctx context.Context) error {
		for range attempts * 4 {
			var (
				row           string
				maxID, dbStep int64
			)
			if err := s.db.QueryRowContext(ctx, selectRow, tag).Scan(&row, &maxID, &dbStep); err != nil {
				return lookupError(err)
			}
			if row != tag {
				return segment.ErrUnknownTag
			}
			used, err := segment.LoadStep(step, dbStep, 0)
			if err != nil {
				return err
			}
			start, size, err := c.Range(max(maxID, floor), used)
			if err != nil {
				return err
			}
			res, err := s.db.ExecContext(ctx, moveInClass, start+size, tag, maxID, version)
			if err != nil {
				return err
			}
			n, err := rowsAffected(res)
			if err != nil {
				return err
			}
			if n == 1 {
				a, found = segment.Allocation{MaxID: start + size, Step: size, DBStep: dbStep}, maxID
				return nil
			}
			if err := s.activeAt(ctx, version); err != nil {
				return err
			}
			// another caller moved the row first: read it again
		}
		return fmt.Errorf("the row kept moving under %d attempts", attempts*4)
	})
	if err != nil {
		return segment.Allocation{}, 0, fmt.Errorf("allocate %q: %w", tag, err)
	}
	return a, found, nil
}

// activeAt returns storeset.ErrSetChanged unless the store is active
// under set version version: what a compare-and-set that did not match
// checks, to tell a set that changed from a row that moved.
func (s *Store) activeAt(ctx context.Context, version int64) error {
	var (
		v     int64
		state string
	)
	if err := s.db.QueryRowContext(ctx, selectVersion).Scan(&v, &state); err != nil {
		return err
	}
	if v != version || storeset.State(state) != storeset.Active {
		return fmt.Errorf("%w: the store is %s at version %d, not active at %d", storeset.ErrSetChanged, state, v, version)
	}
	return nil
}

// Highest returns the highest max_id of any row.
func (s *Store) Highest(ctx context.Context) (int64, error) {
	var h int64
	err := s.call(ctx, true, func(ctx context.Context) error {
		return s.db.GetContext(ctx, &h, selectHighest)
	})
	if err != nil {
		return 0, fmt.Errorf("read the highest max_id: %w", err)
	}
	return h, nil
}

// Marks returns the marks this store holds of the tags of store storeID:
// the highest max_id recorded for each; a tag with none is left out.
//
// On MySQL the key of leaf_marks ignores trailing spaces (PAD SPACE), so
// "a" and "a " (two tags of a Leaf table under a NO PAD collation) share
// one mark, which RecordMarks raises for either: each is answered that
// mark. A mark is a floor, never a number handed out, so the higher one
// only moves a tag's next range forward, and no tag is left without its
// own mark.
func (s *Store) Marks(ctx context.Context, storeID string, tags []string) (map[string]int64, error) {
	out := make(map[string]int64)
	if len(tags) == 0 {
		return out, nil
	}
	padded := map[string][]string{} // on MySQL: the tags asked, by their name without trailing spaces
	if s.dialect == MySQL {
		for _, t := range tags {
			k := strings.TrimRight(t, " ")
			padded[k] = append(padded[k], t)
		}
	}
	err := s.call(ctx, true, func(ctx context.Context) error {
		clear(out)
		query, args, err := sqlx.In(selectMarks, storeID, tags)
		if err != nil {
			return err
		}
		rows, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				tag string
				m   int64
			)
			if err := rows.Scan(&tag, &m); err != nil {
				return err
			}
			if s.dialect != MySQL {
				out[tag] = m
				continue
			}
			for _, t := range padded[strings.TrimRight(tag, " ")] {
				out[t] = max(out[t], m)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read the marks of store %s: %w", storeID, err)
	}
	return out, nil
}

// HighestMark returns the highest mark this store holds of any tag of
// store storeID, 0 for none.
func (s *Store) HighestMark(ctx context.Context, storeID string) (int64, error) {
	var h int64
	err := s.call(ctx, true, func(ctx context.Context) error {
		return s.db.GetContext(ctx, &h, selectHighestMark, storeID)
	})
	if err != nil {
		return 0, fmt.Errorf("read the highest mark of store %s: %w", storeID, err)
	}
	return h, nil
}

// maxRecorded is the most marks one statement of RecordMarks raises:
// three values each, within SQLite's 32,766 variables a statement (a
// second's marks of more than 10,922 tags in one statement failed there,
// and were kept to fail again).
const maxRecorded = 1000

// RecordMarks raises this store's marks of the tags of store storeID to at
// least marks, in one statement per maxRecorded marks; a mark is never
// lowered.
func (s *Store) RecordMarks(ctx context.Context, storeID string, marks map[string]int64) error {
	tags := slices.Sorted(maps.Keys(marks)) // a fixed order: concurrent writers lock rows alike
	for len(tags) > 0 {
		part := tags[:min(len(tags), maxRecorded)]
		tags = tags[len(part):]
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(part)), ", ")
		args := make([]any, 0, 3*len(part))
		for _, t := range part {
			args = append(args, storeID, t, marks[t])
		}
		query := fmt.Sprintf(s.sql.recordMarks, values)
		// Safe to retry: raising to a maximum twice changes nothing.
		err := s.call(ctx, true, func(ctx context.Context) error {
			_, err := s.db.ExecContext(ctx, query, args...)
			return err
		})
		if err != nil {
			return fmt.Errorf("record the marks of store %s: %w", storeID, err)
		}
	}
	return nil
}

// maxLowered is the most marks one statement of LowerMarks sets back on
// MySQL.
const maxLowered = 500

// LowerMarks sets this store's marks of the tags of store storeID back,
// each from From to To, only where the mark is still From: the rows were
// handed back (see storeset.Stores.HandBack), and a mark that moved
// meanwhile is left as it is. The caller leaves out tags whose mark
// another tag shares (see Marks). On MySQL it takes one statement per
// maxLowered marks; on SQLite, where a statement costs no round trip, one
// statement per mark in one transaction: SQLite runs a long list of ORs
// slowly (500 marks set back in 7 to 10 ms one by one, in 19 to 132 ms as
// one statement, on the 2-core development machine).
func (s *Store) LowerMarks(ctx context.Context, storeID string, marks map[string]storeset.MarkBack) error {
	tags := slices.Sorted(maps.Keys(marks)) // a fixed order: concurrent writers lock rows alike
	lower := s.lowerMarksMySQL
	if s.dialect != MySQL {
		lower = s.lowerMarksSQLite
	}
	for len(tags) > 0 {
		part := tags[:min(len(tags), maxLowered)]
		tags = tags[len(part):]
		// Safe to retry: a mark set back is To, which it leaves.
		if err := s.call(ctx, true, func(ctx context.Context) error { return lower(ctx, storeID, part, marks) }); err != nil {
			return fmt.Errorf("set back %d marks of store %s: %w", len(marks), storeID, err)
		}
	}
	return nil
}

// lowerMarksMySQL sets back the marks of tags in one statement.
func (s *Store) lowerMarksMySQL(ctx context.Context, storeID string, tags []string, marks map[string]storeset.MarkBack) error {
	var (
		set, where strings.Builder
		args       []any
		conds      = []any{storeID}
	)
	for i, tag := range tags {
		set.WriteString(lowerMarksWhen)
		if i > 0 {
			where.WriteString(" OR ")
		}
		where.WriteString(lowerMarksRow)
		args = append(args, tag, marks[tag].To)
		conds = append(conds, tag, marks[tag].To, marks[tag].From)
	}
	_, err := s.db.ExecContext(ctx, lowerMarksSet+set.String()+lowerMarksWhere+where.String()+")", append(args, conds...)...)
	return err
}

// lowerMarksSQLite sets back the marks of tags one statement each, in one
// transaction.
func (s *Store) lowerMarksSQLite(ctx context.Context, storeID string, tags []string, marks map[string]storeset.MarkBack) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after a commit it does nothing
	for _, tag := range tags {
		if _, err := tx.ExecContext(ctx, lowerMark, marks[tag].To, storeID, tag, marks[tag].To, marks[tag].From); err != nil {
			return err
		}
	}
	return tx.Commit()
}
