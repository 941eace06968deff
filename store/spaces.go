package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/leafid/leaf/sequence"
)

// sectionsPerInsert bounds the rows of one INSERT of sections.
const sectionsPerInsert = 500

type spaceRow struct {
	Name     string `db:"space"`
	Step     int64  `db:"step"`
	Sections int    `db:"sections"`
}

func (r spaceRow) space() sequence.Space {
	return sequence.Space{Name: r.Name, Step: r.Step, Sections: r.Sections}
}

// CreateSpace creates the space and all its sections in one transaction.
func (s *Store) CreateSpace(ctx context.Context, sp sequence.Space) (sequence.Space, error) {
	if err := sp.Validate(); err != nil {
		return sequence.Space{}, fmt.Errorf("create space %q: %w", sp.Name, err)
	}
	// Not retried after a broken connection: the transaction may have
	// committed, and a second one would call the space taken.
	err := s.call(ctx, false, func(ctx context.Context) error {
		tx, err := s.db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // after a commit, a no-op
		if _, err := tx.ExecContext(ctx, insertSpace, sp.Name, sp.Step, sp.Sections); err != nil {
			if isDuplicateKey(err) {
				return sequence.ErrSpaceExists
			}
			if isCharsetMismatch(err) {
				return fmt.Errorf("%w: characters the table cannot store", sequence.ErrInvalidSpace)
			}
			return err
		}
		for lo := 0; lo < sp.Sections; lo += sectionsPerInsert {
			hi := min(lo+sectionsPerInsert, sp.Sections)
			var b strings.Builder
			b.WriteString(insertSections)
			args := make([]any, 0, 2*(hi-lo))
			for i := lo; i < hi; i++ {
				if i > lo {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?)")
				args = append(args, sp.Name, i)
			}
			if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return sequence.Space{}, fmt.Errorf("create space %q: %w", sp.Name, err)
	}
	return sp, nil
}

// Space reads one space.
func (s *Store) Space(ctx context.Context, name string) (sequence.Space, error) {
	var r spaceRow
	err := s.call(ctx, true, func(ctx context.Context) error {
		err := sqlx.GetContext(ctx, s.db, &r, selectSpace, name)
		if errors.Is(err, sql.ErrNoRows) || isCharsetMismatch(err) || err == nil && r.Name != name {
			return sequence.ErrUnknownSpace // none, or one only padding matched
		}
		return err
	})
	if err != nil {
		return sequence.Space{}, fmt.Errorf("read space %q: %w", name, err)
	}
	return r.space(), nil
}

// Spaces reads every space.
func (s *Store) Spaces(ctx context.Context) ([]sequence.Space, error) {
	var rows []spaceRow
	err := s.call(ctx, true, func(ctx context.Context) error {
		rows = rows[:0]
		return sqlx.SelectContext(ctx, s.db, &rows, selectSpaces)
	})
	if err != nil {
		return nil, fmt.Errorf("read spaces: %w", err)
	}
	out := make([]sequence.Space, len(rows))
	for i, r := range rows {
		out[i] = r.space()
	}
	return out, nil
}
