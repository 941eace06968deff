package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// EnsurePeriod creates the row of the tag's period key unless it exists
// (bizid.Store).
func (s *Store) EnsurePeriod(ctx context.Context, tag, key string) error {
	q := ensurePeriodSQLite
	if s.dialect == MySQL {
		q = ensurePeriodMySQL
	}
	row := bizid.RowName(tag, key)
	desc := "period " + key + " of " + tag
	if len(desc) > segment.MaxDescriptionLen {
		desc = "period " + key
	}
	err := s.call(ctx, true, func(ctx context.Context) error {
		res, err := s.db.ExecContext(ctx, q, row, desc, tag, tag, key)
		if err != nil {
			return unstorable(err)
		}
		if n, err := rowsAffected(res); err != nil || n > 0 {
			return err
		}
		// Nothing written: the row exists, or the period is closed.
		var pruned string
		if err := s.db.GetContext(ctx, &pruned, selectPruned, tag); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: %q has no settings", segment.ErrUnknownTag, tag)
			}
			return err
		}
		if key < pruned {
			return fmt.Errorf("%w: %s is before %s", bizid.ErrPeriodClosed, key, pruned)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ensure period %q: %w", row, err)
	}
	return nil
}

// PrunePeriods raises the tag's pruned mark to before, then deletes the
// rows of its periods below it (bizid.Store). The mark is raised first,
// by a statement of its own: from then on no statement creates those rows
// again.
func (s *Store) PrunePeriods(ctx context.Context, tag, before string) (int, error) {
	deleted := 0
	err := s.call(ctx, true, func(ctx context.Context) error {
		if _, err := s.db.ExecContext(ctx, raisePruned, before, tag, before); err != nil {
			return err
		}
		var pruned string
		if err := s.db.GetContext(ctx, &pruned, selectPruned, tag); err != nil {
			return err
		}
		names, err := s.rowsWithPrefix(ctx, tag+bizid.RowSep, pruned)
		if err != nil {
			return err
		}
		q := deleteRowSQLite
		if s.dialect == MySQL {
			q = deleteRowMySQL
		}
		for _, name := range names {
			key := name[len(tag)+len(bizid.RowSep):]
			if len(key) != len(pruned) || key >= pruned || strings.Trim(key, "0123456789") != "" {
				continue
			}
			res, err := s.db.ExecContext(ctx, q, name, name)
			if err != nil {
				return err
			}
			n, err := rowsAffected(res)
			if err != nil {
				return err
			}
			deleted += int(n)
		}
		return nil
	})
	if err != nil {
		return deleted, fmt.Errorf("prune periods of %q: %w", tag, err)
	}
	return deleted, nil
}

// maxPeriodTags is the most tags one read of periodRows asks about.
const maxPeriodTags = 500

// periodRows returns, of names, those that are the row of a period of a
// formatted tag that resets (bizid.SplitRowName, Settings.PeriodKey), each
// with its tag, within a call.
func (s *Store) periodRows(ctx context.Context, names []string) (map[string]bizid.PeriodRowError, error) {
	byTag := map[string][]bizid.PeriodRowError{}
	var tags []string
	for _, n := range names {
		tag, key, ok := bizid.SplitRowName(n)
		if !ok {
			continue
		}
		if _, seen := byTag[tag]; !seen {
			tags = append(tags, tag)
		}
		byTag[tag] = append(byTag[tag], bizid.PeriodRowError{Row: n, Tag: tag, Key: key})
	}
	out := map[string]bizid.PeriodRowError{}
	for len(tags) > 0 {
		n := min(len(tags), maxPeriodTags)
		query, args, err := sqlx.In(selectFormats, tags[:n])
		if err != nil {
			return nil, err
		}
		var rows []settingsRow
		err = s.db.SelectContext(ctx, &rows, query, args...)
		if err != nil && !isCharsetMismatch(err) {
			return nil, err
		}
		for _, r := range rows {
			for _, p := range byTag[r.Tag] { // exactly the tag: none for a spelling the collation matched
				if r.settings().PeriodKey(p.Key) {
					out[p.Row] = p
				}
			}
		}
		tags = tags[n:]
	}
	return out, nil
}

// refusePeriodRow refuses, within a call, a new tag or settings named like
// the row of a period of a formatted tag: its rows are made by that tag
// and issued only as its texts.
func (s *Store) refusePeriodRow(ctx context.Context, name string) error {
	rows, err := s.periodRows(ctx, []string{name})
	if err != nil {
		return err
	}
	if p, ok := rows[name]; ok {
		return fmt.Errorf("%w: %q is the name of the row of period %s of formatted tag %q, which that tag makes and issues as its texts",
			segment.ErrInvalidTag, name, p.Key, p.Tag)
	}
	return nil
}

// rowsWithPrefix returns the names of the rows that begin with exactly
// prefix and, when upTo is not "", sort below prefix+upTo.
func (s *Store) rowsWithPrefix(ctx context.Context, prefix, upTo string) ([]string, error) {
	names, err := s.rowsFrom(ctx, prefix, upTo)
	if err != nil {
		return nil, err
	}
	kept := names[:0]
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			kept = append(kept, n)
		}
	}
	return kept, nil
}

// periodLikeRows returns the names of the rows that the column's
// collation puts among the period rows of tag (tag@...): those of exactly
// that prefix, and under a case-insensitive Leaf table "TAG@20261123" too,
// which would stand in the way of the row "tag@20261123" (its key is the
// same). A tag that resets is not created beside any of them.
func (s *Store) periodLikeRows(ctx context.Context, tag string) ([]string, error) {
	return s.rowsFrom(ctx, tag+bizid.RowSep, "")
}

// rowsFrom returns the names of the rows the column's collation sorts at
// or after prefix and below its end: below prefix+upTo, or, when upTo is
// "", below the prefix with its last byte raised by one.
func (s *Store) rowsFrom(ctx context.Context, prefix, upTo string) ([]string, error) {
	to := prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
	if upTo != "" {
		to = prefix + upTo
	}
	var names []string
	if err := s.db.SelectContext(ctx, &names, selectRowsBetween, prefix, to); err != nil {
		if isCharsetMismatch(err) {
			return nil, nil
		}
		return nil, err
	}
	return names, nil
}
