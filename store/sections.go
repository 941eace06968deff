package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/leafid/leaf/sequence"
)

// Sections reads the lease of every section.
func (s *Store) Sections(ctx context.Context) ([]sequence.SectionRow, error) {
	var (
		now  int64
		rows []struct {
			Space     string `db:"space"`
			Section   int    `db:"section"`
			Holder    string `db:"holder"`
			Addr      string `db:"addr"`
			ExpiresMS int64  `db:"expires_ms"`
		}
	)
	err := s.call(ctx, true, func(ctx context.Context) error {
		var err error
		if now, err = s.now(ctx); err != nil {
			return err
		}
		rows = rows[:0]
		return sqlx.SelectContext(ctx, s.db, &rows, selectSections)
	})
	if err != nil {
		return nil, fmt.Errorf("read sections: %w", err)
	}
	out := make([]sequence.SectionRow, len(rows))
	for i, r := range rows {
		out[i] = sequence.SectionRow{Space: r.Space, Section: r.Section, Holder: r.Holder, Addr: r.Addr, Live: r.ExpiresMS > now}
		if out[i].Live {
			out[i].Left = time.Duration(r.ExpiresMS-now) * time.Millisecond
		}
	}
	return out, nil
}

// RenewSections extends every lease of holder by ttl from the database's
// now, in one statement.
func (s *Store) RenewSections(ctx context.Context, holder string, ttl time.Duration) error {
	ttlMS, err := ttlMillis(ttl)
	if err != nil {
		return err
	}
	// Safe to retry: a second run extends the same rows again.
	err = s.call(ctx, true, func(ctx context.Context) error {
		now, err := s.now(ctx)
		if err != nil {
			return err
		}
		_, err = s.db.ExecContext(ctx, renewSections, now+ttlMS, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("renew the sections of %q: %w", holder, err)
	}
	return nil
}

// AcquireSection takes a section whose lease ran out (or is m's) and
// answers its max_seq from the same statement.
func (s *Store) AcquireSection(ctx context.Context, space string, section int, m sequence.Member, ttl time.Duration) (int64, bool, error) {
	ttlMS, err := ttlMillis(ttl)
	if err != nil {
		return 0, false, err
	}
	q := acquireSectionMySQL
	if s.dialect == SQLite {
		q = acquireSectionSQLite
	}
	var (
		maxSeq int64
		ok     bool
	)
	// Safe to retry: a take whose answer was lost is retaken as m's own.
	err = s.call(ctx, true, func(ctx context.Context) error {
		now, err := s.now(ctx)
		if err != nil {
			return err
		}
		maxSeq, ok, err = s.updateReturning(ctx, q, m.ID, m.Addr, now+ttlMS, space, space, section, now, m.ID)
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("take section %d of space %q: %w", section, space, err)
	}
	return maxSeq, ok, nil
}

// ReleaseSection clears holder's lease of a section.
func (s *Store) ReleaseSection(ctx context.Context, space string, section int, holder string) error {
	err := s.call(ctx, true, func(ctx context.Context) error {
		_, err := s.db.ExecContext(ctx, releaseSection, space, space, section, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("release section %d of space %q: %w", section, space, err)
	}
	return nil
}

// ReleaseSections clears every lease of holder, in one statement.
func (s *Store) ReleaseSections(ctx context.Context, holder string) error {
	err := s.call(ctx, true, func(ctx context.Context) error {
		_, err := s.db.ExecContext(ctx, releaseSections, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("release the sections of %q: %w", holder, err)
	}
	return nil
}

// RaiseMax raises a section's max_seq by by while holder holds it, and
// answers the new value from the same statement.
func (s *Store) RaiseMax(ctx context.Context, space string, section int, holder string, by int64) (int64, error) {
	if err := s.takes(ctx); err != nil {
		return 0, err
	}
	q := raiseMaxMySQL
	if s.dialect == SQLite {
		q = raiseMaxSQLite
	}
	var (
		v  int64
		ok bool
	)
	// Not retried after a broken connection: the raise may have run, and
	// a second would skip a step (harmless, but not silently).
	err := s.callTaking(ctx, false, func(ctx context.Context) error {
		var err error
		v, ok, err = s.updateReturning(ctx, q, by, space, space, section, holder, by)
		return err
	})
	if err == nil && !ok {
		err = s.whyNotRaised(ctx, space, section, holder)
	}
	if err != nil {
		return 0, fmt.Errorf("raise max_seq of section %d of space %q: %w", section, space, err)
	}
	return v, nil
}

// whyNotRaised tells a lost lease from a max_seq at the int64 maximum.
func (s *Store) whyNotRaised(ctx context.Context, space string, section int, holder string) error {
	var h string
	err := s.call(ctx, true, func(ctx context.Context) error {
		return sqlx.GetContext(ctx, s.db, &h, selectSectionHolder, space, space, section)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: no such section", sequence.ErrLeaseLost)
	case err != nil:
		return err
	case h != holder:
		return sequence.ErrLeaseLost
	}
	return sequence.ErrExhausted
}
