package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/bizid"
)

// selectRows reads, for a list of names, which have a row in leaf_alloc
// (what 0), which are ordered (what 1: the lease row of section -1 in
// leaf_seq_section) and the settings of those that have some (what 2, from
// leaf_tag_format), in one statement: one read of the three tables, so
// that a tag created with settings or ordered (one transaction) is never
// seen without them. Each part is a lookup by key. Names are as stored:
// the caller keeps only the exact ones (MySQL's collations match "ORDERS"
// to "orders", and the keys ignore trailing spaces). Args: the names three
// times, each expanded by sqlx.In.
const selectRows = `SELECT biz_tag AS biz_tag, 0 AS what, NULL AS format, NULL AS reset, NULL AS time_zone, NULL AS opaque_bits, NULL AS key_id, NULL AS pruned_before
FROM leaf_alloc WHERE biz_tag IN (?)
UNION ALL
SELECT space, 1, NULL, NULL, NULL, NULL, NULL, NULL FROM leaf_seq_section WHERE section = -1 AND space IN (?)
UNION ALL
SELECT biz_tag, 2, format, reset, time_zone, opaque_bits, key_id, pruned_before FROM leaf_tag_format WHERE biz_tag IN (?)`

// maxRowNames is the most names one read of LookupTags takes.
const maxRowNames = 500

// LookupTags says what each of names is: its row, settings and whether it is
// ordered, and, for a name like the row of a period of a formatted tag
// (tag@KEY), that it is one, whether or not the period has begun. A name
// absent from the answer has no row and is no period's. One read for up
// to 500 names, and one more for those named like a period's row.
func (s *Store) LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var out map[string]bizid.Row
	err := s.call(ctx, true, func(ctx context.Context) error {
		out = make(map[string]bizid.Row, len(names))
		for rest := names; len(rest) > 0; {
			n := min(len(rest), maxRowNames)
			if err := s.readRows(ctx, rest[:n], out); err != nil {
				return err
			}
			rest = rest[n:]
		}
		periods, err := s.periodRows(ctx, names)
		for name, p := range periods {
			r := out[name]
			r.Period = &p
			out[name] = r
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read the rows of %d tags: %w", len(names), err)
	}
	return out, nil
}

// readRows reads the rows of names into out. A name the table's character
// set cannot hold has no row: where one is among names, each is read
// alone.
func (s *Store) readRows(ctx context.Context, names []string, out map[string]bizid.Row) error {
	query, args, err := sqlx.In(selectRows, names, names, names)
	if err != nil {
		return err
	}
	var rows []struct {
		settingsRow
		What int `db:"what"`
	}
	err = s.db.SelectContext(ctx, &rows, query, args...)
	if isCharsetMismatch(err) && len(names) > 1 {
		for _, name := range names {
			if err := s.readRows(ctx, []string{name}, out); err != nil {
				return err
			}
		}
		return nil
	}
	if isCharsetMismatch(err) {
		return nil
	}
	if err != nil {
		return err
	}
	asked := make(map[string]bool, len(names))
	for _, n := range names {
		asked[n] = true
	}
	found := map[string]bizid.Row{}
	ordered := map[string]bool{}
	settings := map[string]bizid.Settings{}
	for _, r := range rows {
		if !asked[r.Tag] {
			continue // a row only the collation matches
		}
		switch r.What {
		case 0:
			found[r.Tag] = bizid.Row{Kind: bizid.Plain, Settings: bizid.Settings{Tag: r.Tag}}
		case 1:
			ordered[r.Tag] = true
		case 2:
			if set := r.settings(); set.Formatted() || set.Opaque() {
				settings[r.Tag] = set
			}
		}
	}
	for name, r := range found {
		if set, ok := settings[name]; ok {
			r.Kind, r.Settings = bizid.Special, set
		}
		r.Settings.Ordered = ordered[name]
		out[name] = r
	}
	return nil
}
