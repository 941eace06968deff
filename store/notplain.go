package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/segment"
)

var _ segment.Classifier = (*Store)(nil)

// selectKinds lists those of the names (two IN lists of the same names)
// that are not plain: the ordered tags, which have the lease row of
// section -1 in leaf_seq_section (kind 2, segment.Refused), and the
// formatted and opaque tags, which have settings in leaf_tag_format (kind
// 1, segment.Special).
const selectKinds = `SELECT space AS name, 2 AS kind FROM leaf_seq_section WHERE section = -1 AND space IN (?)
UNION ALL
SELECT biz_tag AS name, 1 AS kind FROM leaf_tag_format WHERE (format <> '' OR opaque_bits <> 0) AND biz_tag IN (?)`

// maxClassifyNames is the most names one read of Classify takes.
const maxClassifyNames = 500

// Classify says which of tags are not plain, and what they are. The
// segment allocator asks once per tag, with its first load: one read for
// up to 500 names, and one more for those named like the row of a period
// (tag@KEY). Such a row of a formatted tag that resets is Special: its
// numbers go out only as that tag's texts (bizid), never by its own name.
func (s *Store) Classify(ctx context.Context, tags []string) (map[string]segment.Kind, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	asked := make(map[string]bool, len(tags))
	for _, t := range tags {
		asked[t] = true
	}
	var out map[string]segment.Kind
	err := s.call(ctx, true, func(ctx context.Context) error {
		out = make(map[string]segment.Kind)
		for rest := tags; len(rest) > 0; {
			n := min(len(rest), maxClassifyNames)
			query, args, err := sqlx.In(selectKinds, rest[:n], rest[:n])
			if err != nil {
				return err
			}
			var rows []struct {
				Name string `db:"name"`
				Kind int    `db:"kind"`
			}
			if err := sqlx.SelectContext(ctx, s.db, &rows, query, args...); err != nil {
				return err
			}
			for _, r := range rows {
				if asked[r.Name] { // exactly the name, not one a collation matches
					out[r.Name] = max(out[r.Name], segment.Kind(r.Kind))
				}
			}
			rest = rest[n:]
		}
		rows, err := s.periodRows(ctx, tags)
		for name := range rows {
			out[name] = max(out[name], segment.Special)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("which of %d tags are plain: %w", len(tags), err)
	}
	return out, nil
}
