package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
)

var _ sequence.Store = (*Store)(nil)

// The SQL of the sequences (leaf_seq_space, leaf_seq_section,
// leaf_seq_member). Times are Unix milliseconds by the database's clock,
// read with the dialect's nowMillis query and passed as arguments.
//
// A space is exactly its name. MySQL compares strings with trailing spaces
// ignored (PAD SPACE, utf8mb4_bin included), so "inbox " would reach the
// rows of "inbox": a statement that finds a section by a name adds
// HEX(space) = HEX(?), byte for byte on both dialects, beside the
// space = ? that the primary key serves (the tables are utf8mb4, so both
// sides are the same bytes). A space read by name is compared with the
// name asked. Member ids (the holders) are random tokens that may not end
// in a space (sequence.Options), so holder = ? is exact as it is.
const (
	insertSpace  = `INSERT INTO leaf_seq_space (space, step, sections) VALUES (?, ?, ?)`
	selectSpace  = `SELECT space, step, sections FROM leaf_seq_space WHERE space = ?`
	selectSpaces = `SELECT space, step, sections FROM leaf_seq_space ORDER BY space`

	// insertSections is followed by one "(?, ?)" per section.
	insertSections = `INSERT INTO leaf_seq_section (space, section) VALUES `

	// heartbeat* insert or refresh a member. Args: member, addr, expires_ms.
	heartbeatMySQL = `INSERT INTO leaf_seq_member (member, addr, expires_ms) VALUES (?, ?, ?)
ON DUPLICATE KEY UPDATE addr = VALUES(addr), expires_ms = VALUES(expires_ms)`
	heartbeatSQLite = `INSERT INTO leaf_seq_member (member, addr, expires_ms) VALUES (?, ?, ?)
ON CONFLICT (member) DO UPDATE SET addr = excluded.addr, expires_ms = excluded.expires_ms`
	// forgetMembers deletes the rows of members gone long ago. Args: a
	// time well before now.
	forgetMembers = `DELETE FROM leaf_seq_member WHERE expires_ms < ?`
	leaveMember   = `DELETE FROM leaf_seq_member WHERE member = ?`
	// selectMembers reads the live members. Args: now.
	selectMembers = `SELECT member, addr FROM leaf_seq_member WHERE expires_ms > ? ORDER BY member`

	selectSections = `SELECT space, section, holder, addr, expires_ms FROM leaf_seq_section ORDER BY space, section`
	// renewSections extends every lease of a holder. Args: expires_ms,
	// holder.
	renewSections = `UPDATE leaf_seq_section SET expires_ms = ? WHERE holder = ? AND holder <> ''`

	// acquireSection* take a section whose lease has run out or is the
	// member's already, and answer its max_seq from the same statement.
	// Args: holder, addr, expires_ms, space, space, section, now, holder.
	acquireSectionMySQL = `UPDATE leaf_seq_section SET holder = ?, addr = ?, expires_ms = ?,
  max_seq = LAST_INSERT_ID(max_seq)
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND (expires_ms <= ? OR holder = ?)`
	acquireSectionSQLite = `UPDATE leaf_seq_section SET holder = ?, addr = ?, expires_ms = ?
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND (expires_ms <= ? OR holder = ?)
RETURNING max_seq`

	// releaseSection clears a holder's lease. Args: space, space, section,
	// holder.
	releaseSection = `UPDATE leaf_seq_section SET holder = '', addr = '', expires_ms = 0
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND holder = ?`

	// raiseMax* raise max_seq while the holder holds the section, unless
	// that passes the int64 maximum, and answer the new value.
	// Args: by, space, space, section, holder, by.
	raiseMaxMySQL = `UPDATE leaf_seq_section SET max_seq = LAST_INSERT_ID(max_seq + ?)
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND holder = ? AND max_seq <= 9223372036854775807 - ?`
	raiseMaxSQLite = `UPDATE leaf_seq_section SET max_seq = max_seq + ?
WHERE space = ? AND HEX(space) = HEX(?) AND section = ? AND holder = ? AND max_seq <= 9223372036854775807 - ?
RETURNING max_seq`

	// selectSectionHolder reads a section's holder. Args: space, space,
	// section.
	selectSectionHolder = `SELECT holder FROM leaf_seq_section WHERE space = ? AND HEX(space) = HEX(?) AND section = ?`
)

// memberMemory is how long the row of a member gone stays.
const memberMemory = time.Hour

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

// Heartbeat records m as live for ttl and forgets members gone for long.
func (s *Store) Heartbeat(ctx context.Context, m sequence.Member, ttl time.Duration) error {
	ttlMS, err := ttlMillis(ttl)
	if err != nil {
		return err
	}
	q := heartbeatMySQL
	if s.dialect == SQLite {
		q = heartbeatSQLite
	}
	err = s.call(ctx, true, func(ctx context.Context) error {
		now, err := s.now(ctx)
		if err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, q, m.ID, m.Addr, now+ttlMS); err != nil {
			return err
		}
		_, err = s.db.ExecContext(ctx, forgetMembers, now-memberMemory.Milliseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("heartbeat of member %q: %w", m.ID, err)
	}
	return nil
}

// Leave removes a member.
func (s *Store) Leave(ctx context.Context, id string) error {
	err := s.call(ctx, true, func(ctx context.Context) error {
		_, err := s.db.ExecContext(ctx, leaveMember, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("remove member %q: %w", id, err)
	}
	return nil
}

// Members reads the live members.
func (s *Store) Members(ctx context.Context) ([]sequence.Member, error) {
	var rows []struct {
		ID   string `db:"member"`
		Addr string `db:"addr"`
	}
	err := s.call(ctx, true, func(ctx context.Context) error {
		now, err := s.now(ctx)
		if err != nil {
			return err
		}
		rows = rows[:0]
		return sqlx.SelectContext(ctx, s.db, &rows, selectMembers, now)
	})
	if err != nil {
		return nil, fmt.Errorf("read members: %w", err)
	}
	out := make([]sequence.Member, len(rows))
	for i, r := range rows {
		out[i] = sequence.Member{ID: r.ID, Addr: r.Addr}
	}
	return out, nil
}

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

// RaiseMax raises a section's max_seq by by while holder holds it, and
// answers the new value from the same statement.
func (s *Store) RaiseMax(ctx context.Context, space string, section int, holder string, by int64) (int64, error) {
	if err := s.takes(); err != nil {
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
	err := s.call(ctx, false, func(ctx context.Context) error {
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

var (
	_ sequence.OrderedStore = (*Store)(nil)
	_ sequence.TagRows      = (*Store)(nil)
)

// Ordered tags: a tag's row in leaf_alloc, and its lease row in
// leaf_seq_section under the tag's name and section -1.
const (
	insertOrderedTag = `INSERT INTO leaf_seq_section (space, section) VALUES (?, -1)`
	selectOrdered    = `SELECT space FROM leaf_seq_section WHERE section = -1 ORDER BY space`
	// selectTagOrdered counts the tag's rows in leaf_alloc (by the
	// column's collation) and its lease rows (exactly).
	// Args: tag, tag, tag.
	selectTagOrdered = `SELECT (SELECT COUNT(*) FROM leaf_alloc WHERE biz_tag = ?) AS alloc_rows,
  (SELECT COUNT(*) FROM leaf_seq_section WHERE space = ? AND HEX(space) = HEX(?) AND section = -1) AS ordered_rows`
	// ensureOrdered* create a tag's lease row unless it exists. Args: tag.
	ensureOrderedMySQL = `INSERT INTO leaf_seq_section (space, section) VALUES (?, -1)
ON DUPLICATE KEY UPDATE section = section`
	ensureOrderedSQLite = `INSERT INTO leaf_seq_section (space, section) VALUES (?, -1)
ON CONFLICT (space, section) DO NOTHING`
	// raiseRowTo sets a row's max_id from the value read to a higher one:
	// a compare-and-set. Args: new max_id, row, max_id read.
	raiseRowTo = `UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ? AND max_id = ?`
)

// CreateOrderedTag creates a tag whose ids strictly increase across the
// fleet: its leaf_alloc row and its lease row, in one transaction.
func (s *Store) CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	if err := t.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	err := s.call(ctx, false, func(ctx context.Context) error {
		if err := s.notPeriodRow(ctx, t.Name); err != nil {
			return err
		}
		tx, err := s.db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // after a commit, a no-op
		if _, err := tx.ExecContext(ctx, insertTag, t.Name, t.MaxID, t.Step, nullString(t.Description)); err != nil {
			if isDuplicateKey(err) {
				return segment.ErrTagExists
			}
			return unstorable(err)
		}
		if _, err := tx.ExecContext(ctx, insertOrderedTag, t.Name); err != nil {
			if isDuplicateKey(err) {
				return segment.ErrTagExists
			}
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	created, err := s.Tag(ctx, t.Name)
	if err != nil {
		created = t
		created.UpdateTime = time.Now().UTC().Truncate(time.Second)
	}
	return created, nil
}

// OrderedTags lists the ordered tags.
func (s *Store) OrderedTags(ctx context.Context) ([]string, error) {
	var names []string
	err := s.call(ctx, true, func(ctx context.Context) error {
		names = names[:0]
		return sqlx.SelectContext(ctx, s.db, &names, selectOrdered)
	})
	if err != nil {
		return nil, fmt.Errorf("read ordered tags: %w", err)
	}
	return names, nil
}

// TagOrdered says whether the tag has a row, and whether it is ordered,
// in one read: it is asked once per tag an instance serves. A row that
// only the column's collation matches ("ORDERS" for "orders") counts as
// existing: no ordered tag of that name can be created beside it. Only the
// lease row of exactly the name makes it ordered.
func (s *Store) TagOrdered(ctx context.Context, tag string) (exists, ordered bool, err error) {
	var r struct {
		Rows    int `db:"alloc_rows"`
		Ordered int `db:"ordered_rows"`
	}
	err = s.call(ctx, true, func(ctx context.Context) error {
		err := sqlx.GetContext(ctx, s.db, &r, selectTagOrdered, tag, tag, tag)
		if isCharsetMismatch(err) {
			r.Rows, r.Ordered = 0, 0
			return nil
		}
		return err
	})
	if err != nil {
		return false, false, fmt.Errorf("is tag %q ordered: %w", tag, err)
	}
	return r.Rows > 0, r.Ordered > 0, nil
}

// RaiseRow raises a row of an ordered tag by its step, or by less where
// limit is reached (sequence.TagRows). Without a limit it is Allocate.
// With one, the row is read, then raised from the max_id read by a
// compare-and-set: only the tag's owner raises the row, so the set finds
// it as read; another writer's raise in between only makes it read again.
// A row already past limit is sequence.ErrFull, found by the read alone.
func (s *Store) RaiseRow(ctx context.Context, row string, limit int64) (first, last int64, err error) {
	if limit <= 0 {
		a, err := s.Allocate(ctx, row, 0)
		if err != nil {
			return 0, 0, err
		}
		return a.Start(), a.MaxID - 1, nil
	}
	if err := s.takes(); err != nil {
		return 0, 0, err
	}
	// Safe to retry: a raise whose answer was lost is found by the next
	// read, and the next raise starts after it: its numbers are skipped.
	err = s.call(ctx, true, func(ctx context.Context) error {
		for range 3 {
			t, err := s.readTag(ctx, row)
			if err != nil {
				return err
			}
			if t.Step < segment.MinStep {
				return fmt.Errorf("%w: its step is %d, below %d", segment.ErrMisconfigured, t.Step, segment.MinStep)
			}
			if t.MaxID > limit {
				return fmt.Errorf("%w: max_id %d is past %d", sequence.ErrFull, t.MaxID, limit)
			}
			by := min(t.Step, limit+1-t.MaxID)
			res, err := s.db.ExecContext(ctx, raiseRowTo, t.MaxID+by, row, t.MaxID)
			if err != nil {
				return err
			}
			if n, err := rowsAffected(res); err != nil {
				return err
			} else if n == 1 {
				first, last = t.MaxID, t.MaxID+by-1
				return nil
			}
		}
		return fmt.Errorf("the row moved under three raises in a row")
	})
	if err != nil {
		return 0, 0, fmt.Errorf("raise %q up to %d: %w", row, limit, err)
	}
	return first, last, nil
}

// EnsureOrdered makes an existing tag ordered: it creates the tag's lease
// row unless it exists (sequence.OrderedStore). A formatted tag whose
// numbers must be dense becomes ordered this way when it was created
// before such tags were.
func (s *Store) EnsureOrdered(ctx context.Context, tag string) error {
	q := ensureOrderedMySQL
	if s.dialect == SQLite {
		q = ensureOrderedSQLite
	}
	err := s.call(ctx, true, func(ctx context.Context) error {
		if _, err := s.readTag(ctx, tag); err != nil {
			return err
		}
		_, err := s.db.ExecContext(ctx, q, tag)
		return err
	})
	if err != nil {
		return fmt.Errorf("make tag %q ordered: %w", tag, err)
	}
	return nil
}

// HomeRows counts the sequence spaces, ordered tags and formatted or
// opaque tags the store holds: what lives in the home store of a set
// alone (storeset.Homing).
func (s *Store) HomeRows(ctx context.Context) (int, error) {
	spaces, err := s.Spaces(ctx)
	if err != nil {
		return 0, err
	}
	ordered, err := s.OrderedTags(ctx)
	if err != nil {
		return 0, err
	}
	settings, err := s.TagSettings(ctx)
	if err != nil {
		return 0, err
	}
	return len(spaces) + len(ordered) + len(settings), nil
}
