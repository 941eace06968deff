package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/segment"
)

var _ segment.Classifier = (*Store)(nil)

// selectNotPlain lists those of the names (an IN list) that are ordered
// tags: they have the lease row of section -1 in leaf_seq_section.
const selectNotPlain = `SELECT space FROM leaf_seq_section WHERE section = -1 AND space IN (?)`

// maxNotPlainNames is the most names one read of NotPlain takes.
const maxNotPlainNames = 500

// NotPlain returns those of tags whose ids the segment allocator must not
// hand out: the ordered tags. The allocator asks once per tag, with its
// first load: one read for up to 500 names.
func (s *Store) NotPlain(ctx context.Context, tags []string) ([]string, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	asked := make(map[string]bool, len(tags))
	for _, t := range tags {
		asked[t] = true
	}
	var out []string
	err := s.call(ctx, true, func(ctx context.Context) error {
		out = out[:0]
		for rest := tags; len(rest) > 0; {
			n := min(len(rest), maxNotPlainNames)
			query, args, err := sqlx.In(selectNotPlain, rest[:n])
			if err != nil {
				return err
			}
			var names []string
			if err := sqlx.SelectContext(ctx, s.db, &names, query, args...); err != nil {
				return err
			}
			for _, name := range names {
				if asked[name] { // exactly the name, not one a collation matches
					out = append(out, name)
				}
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("which of %d tags are plain: %w", len(tags), err)
	}
	return out, nil
}
