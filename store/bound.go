package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/leafid/leaf/segment"
)

// The bounds tags declare (leaf_tag_bound): the largest id each may issue.
const (
	selectBounds = `SELECT biz_tag, max_id FROM leaf_tag_bound`
	// setBound* write a tag's bound. Args: tag, bound.
	setBoundMySQL = `INSERT INTO leaf_tag_bound (biz_tag, max_id) VALUES (?, ?)
ON DUPLICATE KEY UPDATE max_id = VALUES(max_id)`
	setBoundSQLite = `INSERT INTO leaf_tag_bound (biz_tag, max_id) VALUES (?, ?)
ON CONFLICT (biz_tag) DO UPDATE SET max_id = excluded.max_id, update_time = CURRENT_TIMESTAMP`
	deleteBound = `DELETE FROM leaf_tag_bound WHERE biz_tag = ?`
)

// TagBounds reads every tag's declared bound, by the tag's exact name.
func (s *Store) TagBounds(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Tag   string `db:"biz_tag"`
		MaxID int64  `db:"max_id"`
	}
	err := s.call(ctx, true, func(ctx context.Context) error {
		rows = rows[:0]
		return s.db.SelectContext(ctx, &rows, selectBounds)
	})
	if err != nil {
		return nil, fmt.Errorf("read tag bounds: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Tag] = r.MaxID
	}
	return out, nil
}

// SetTagBound declares bound the largest id tag may issue; 0 removes its
// bound. The tag must exist, and its name not end in a space (the table's
// collation would take it for the name without: see
// docs/mysql-compatibility.md).
func (s *Store) SetTagBound(ctx context.Context, tag string, bound int64) error {
	if bound < 0 {
		return fmt.Errorf("%w: a bound of %d: want 1 or more (0 removes it)", segment.ErrInvalidMaxID, bound)
	}
	if strings.HasSuffix(tag, " ") {
		return fmt.Errorf("%w: a tag whose name ends in a space takes no bound", segment.ErrInvalidTag)
	}
	q := setBoundMySQL
	if s.dialect == SQLite {
		q = setBoundSQLite
	}
	err := s.call(ctx, true, func(ctx context.Context) error {
		if _, err := s.readTag(ctx, tag); err != nil {
			return err
		}
		if bound == 0 {
			_, err := s.db.ExecContext(ctx, deleteBound, tag)
			return err
		}
		_, err := s.db.ExecContext(ctx, q, tag, bound)
		return err
	})
	if err != nil {
		return fmt.Errorf("bound tag %q: %w", tag, err)
	}
	return nil
}

// TagBound is tag's declared bound, 0 when it has none.
func (s *Store) TagBound(ctx context.Context, tag string) (int64, error) {
	bounds, err := s.TagBounds(ctx)
	if err != nil {
		return 0, err
	}
	return bounds[tag], nil
}
