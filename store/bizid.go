package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

var _ bizid.Store = (*Store)(nil)

// leaf_tag_format: the settings of formatted and opaque tags, and the
// period rows of leaf_alloc (bizid's package comment), whose calls are in
// periods.go.
const (
	settingsColumns = `biz_tag, format, reset, time_zone, opaque_bits, key_id, pruned_before`

	selectSettings = `SELECT f.biz_tag, f.format, f.reset, f.time_zone, f.opaque_bits, f.key_id, f.pruned_before,
  (SELECT COUNT(*) FROM leaf_seq_section s WHERE s.space = f.biz_tag AND HEX(s.space) = HEX(f.biz_tag) AND s.section = -1) AS ordered
FROM leaf_tag_format f`
	insertSettings = `INSERT INTO leaf_tag_format (` + settingsColumns + `) VALUES (?, ?, ?, ?, ?, ?, '')`
	// setTimeZone changes the zone of a formatted tag whose format and
	// reset are still those the change was checked against. Args: zone,
	// tag, format, reset.
	setTimeZone = `UPDATE leaf_tag_format SET time_zone = ? WHERE biz_tag = ? AND format = ? AND reset = ?`

	// ensurePeriod* create a period's row from its tag's row (its step,
	// max_id 1) unless it exists, and only while the period is not
	// before the tag's pruned mark: one statement, which reads the mark
	// with a lock (InnoDB's INSERT ... SELECT; SQLite's one writer), so
	// that a prune that raised it first is seen. An existing row is left
	// as it is: no write over its numbers. Args: row, description, tag,
	// tag, key.
	ensurePeriodMySQL = `INSERT INTO leaf_alloc (biz_tag, max_id, step, description)
SELECT ?, 1, a.step, ? FROM leaf_alloc a, leaf_tag_format f
WHERE a.biz_tag = ? AND f.biz_tag = ? AND f.pruned_before <= ?
ON DUPLICATE KEY UPDATE max_id = leaf_alloc.max_id`
	ensurePeriodSQLite = `INSERT INTO leaf_alloc (biz_tag, max_id, step, description)
SELECT ?, 1, a.step, ? FROM leaf_alloc a, leaf_tag_format f
WHERE a.biz_tag = ? AND f.biz_tag = ? AND f.pruned_before <= ?
ON CONFLICT(biz_tag) DO NOTHING`

	// selectFormats reads the format and reset of those of a list of
	// names that are formatted tags, as stored: the caller keeps exact
	// names. Args: the names, expanded by sqlx.In.
	selectFormats = `SELECT biz_tag, format, reset FROM leaf_tag_format WHERE format <> '' AND biz_tag IN (?)`

	selectPruned = `SELECT pruned_before FROM leaf_tag_format WHERE biz_tag = ?`
	// raisePruned raises the mark, never lowers it. Args: key, tag, key.
	raisePruned = `UPDATE leaf_tag_format SET pruned_before = ? WHERE biz_tag = ? AND pruned_before < ?`
	// selectRowsBetween reads the names of the rows in [from, to) by the
	// column's collation; the caller keeps those of exactly its prefix,
	// or all when it looks for rows in the way of new ones.
	selectRowsBetween = `SELECT biz_tag FROM leaf_alloc WHERE biz_tag >= ? AND biz_tag < ?`
	// deleteRow* delete the row of exactly this name: MySQL's collations
	// would match "ORDERS@20261123" to "orders@20261123".
	deleteRowMySQL  = `DELETE FROM leaf_alloc WHERE biz_tag = ? AND CAST(biz_tag AS BINARY) = CAST(? AS BINARY)`
	deleteRowSQLite = `DELETE FROM leaf_alloc WHERE biz_tag = ? AND biz_tag = ?`
)

type settingsRow struct {
	Tag          string         `db:"biz_tag"`
	Format       sql.NullString `db:"format"`
	Reset        sql.NullString `db:"reset"`
	TimeZone     sql.NullString `db:"time_zone"`
	OpaqueBits   sql.NullInt64  `db:"opaque_bits"`
	KeyID        sql.NullString `db:"key_id"`
	PrunedBefore sql.NullString `db:"pruned_before"`
	Ordered      int            `db:"ordered"`
}

func (r settingsRow) settings() bizid.Settings {
	return bizid.Settings{
		Tag: r.Tag, Format: r.Format.String, Reset: bizid.Reset(r.Reset.String), TimeZone: r.TimeZone.String,
		OpaqueBits: int(r.OpaqueBits.Int64), KeyID: r.KeyID.String, PrunedBefore: r.PrunedBefore.String,
		Ordered: r.Ordered > 0,
	}
}

// TagSettings returns the settings of every formatted or opaque tag
// (bizid.Store).
func (s *Store) TagSettings(ctx context.Context) ([]bizid.Settings, error) {
	var rows []settingsRow
	err := s.call(ctx, true, func(ctx context.Context) error {
		rows = rows[:0]
		return s.db.SelectContext(ctx, &rows, selectSettings)
	})
	if err != nil {
		return nil, fmt.Errorf("read tag settings: %w", err)
	}
	out := make([]bizid.Settings, len(rows))
	for i, r := range rows {
		out[i] = r.settings()
	}
	return out, nil
}

// CreateSpecialTag creates a tag and its settings in one transaction,
// after t.Validate and set.Validate, and, for a tag served by one owner
// (an ordered or capped formatted tag), its lease row too. It returns segment.ErrTagExists when
// the name is taken, and refuses a tag that resets when rows named like
// its periods (tag@...) exist already: they would be taken for its
// periods.
func (s *Store) CreateSpecialTag(ctx context.Context, t segment.Tag, set bizid.Settings) (segment.Tag, error) {
	set.Tag = t.Name
	if err := t.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	if err := set.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	err := s.call(ctx, false, func(ctx context.Context) error {
		if err := s.refusePeriodRow(ctx, t.Name); err != nil {
			return err
		}
		if set.Formatted() && set.Reset != bizid.Never {
			names, err := s.periodLikeRows(ctx, t.Name)
			if err != nil {
				return err
			}
			if len(names) > 0 {
				return fmt.Errorf("%w: rows named like this tag's periods exist already (%q)", bizid.ErrInvalidFormat, names[0])
			}
		}
		tx, err := s.db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := s.insertNewTag(ctx, tx, t); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, insertSettings, t.Name, set.Format, string(set.Reset), set.TimeZone, set.OpaqueBits, set.KeyID); err != nil {
			if isDuplicateKey(err) {
				return segment.ErrTagExists
			}
			return unstorable(err)
		}
		if set.Owned() {
			// Served by one owner from its creation on (bizid.Tag.Owned).
			if _, err := tx.ExecContext(ctx, insertOrderedTag, t.Name); err != nil {
				if isDuplicateKey(err) {
					return segment.ErrTagExists
				}
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	return s.Tag(ctx, t.Name)
}

// SetTagSettings gives a tag settings by a change that bizid.CheckChange
// allowed: settings for a tag that had none, or a formatted tag's new time
// zone. A change that raced with another is refused with bizid.ErrFixed.
func (s *Store) SetTagSettings(ctx context.Context, old bizid.Settings, had bool, set bizid.Settings) error {
	if err := set.Validate(); err != nil {
		return fmt.Errorf("set settings of tag %q: %w", set.Tag, err)
	}
	err := s.call(ctx, false, func(ctx context.Context) error {
		if _, err := s.readTag(ctx, set.Tag); err != nil {
			return err
		}
		if !had {
			if err := s.refusePeriodRow(ctx, set.Tag); err != nil {
				return err
			}
			if set.Formatted() && set.Reset != bizid.Never {
				names, err := s.periodLikeRows(ctx, set.Tag)
				if err != nil {
					return err
				}
				if len(names) > 0 {
					return fmt.Errorf("%w: rows named like this tag's periods exist already (%q)", bizid.ErrInvalidFormat, names[0])
				}
			}
			return s.insertSettings(ctx, set)
		}
		res, err := s.db.ExecContext(ctx, setTimeZone, set.TimeZone, set.Tag, old.Format, string(old.Reset))
		if err != nil {
			return err
		}
		if n, err := rowsAffected(res); err != nil {
			return err
		} else if n == 0 && old.TimeZone != set.TimeZone {
			return fmt.Errorf("%w: the tag's settings changed meanwhile", bizid.ErrFixed)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set settings of tag %q: %w", set.Tag, err)
	}
	return nil
}

// insertSettings gives a tag that had none its settings and, for a tag
// served by one owner from now on (a capped or ordered format), its lease
// row, in one transaction: no first load of the allocator ever takes a
// range of its row, which would use the numbers of a capped format up.
func (s *Store) insertSettings(ctx context.Context, set bizid.Settings) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after a commit, a no-op
	_, err = tx.ExecContext(ctx, insertSettings, set.Tag, set.Format, string(set.Reset), set.TimeZone, set.OpaqueBits, set.KeyID)
	if isDuplicateKey(err) {
		return fmt.Errorf("%w: the tag was given settings meanwhile", bizid.ErrFixed)
	}
	if err != nil {
		return err
	}
	if set.Owned() {
		q := ensureOrderedMySQL
		if s.dialect == SQLite {
			q = ensureOrderedSQLite
		}
		if _, err := tx.ExecContext(ctx, q, set.Tag); err != nil {
			return err
		}
	}
	return tx.Commit()
}
