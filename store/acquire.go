package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leafid/leaf/sequence"
)

// acquireChunk bounds the sections one statement takes; SQLite's is lower
// (its bound on an expression's depth, and a statement costs no round
// trip there).
const (
	acquireChunk       = 1000
	acquireChunkSQLite = 200
)

// AcquireSections takes for m, for ttl, each of secs whose lease has run
// out, was cleared, or is m's already, and answers the max_seq of each it
// holds after (sequence.Store). Per acquireChunk sections it runs the
// database's clock and one UPDATE, which answers the rows it took on
// SQLite (RETURNING) and is followed on MySQL by a read of the rows m
// holds: once a row is m's, only m raises its max_seq, so the read finds
// what the take did.
func (s *Store) AcquireSections(ctx context.Context, secs []sequence.SectionID, m sequence.Member, ttl time.Duration) ([]sequence.Acquired, error) {
	ttlMS, err := ttlMillis(ttl)
	if err != nil {
		return nil, err
	}
	out := make([]sequence.Acquired, len(secs))
	size := acquireChunk
	if s.dialect == SQLite {
		size = acquireChunkSQLite
	}
	for lo := 0; lo < len(secs); lo += size {
		chunk := secs[lo:min(lo+size, len(secs))]
		var got map[sequence.SectionID]int64
		// Safe to retry: a take whose answer was lost is retaken as m's own.
		err := s.call(ctx, true, func(ctx context.Context) error {
			now, err := s.now(ctx)
			if err != nil {
				return err
			}
			got, err = s.acquireChunk(ctx, chunk, m, now, now+ttlMS)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("take %d sections: %w", len(chunk), err)
		}
		for i, id := range chunk {
			out[lo+i].MaxSeq, out[lo+i].OK = got[id]
		}
	}
	return out, nil
}

// acquireChunk runs the take of AcquireSections for a chunk and returns
// the max_seq of each section of it m holds.
func (s *Store) acquireChunk(ctx context.Context, chunk []sequence.SectionID, m sequence.Member, now, expires int64) (map[sequence.SectionID]int64, error) {
	match, keys := sectionsMatch(chunk)
	update := `UPDATE leaf_seq_section SET holder = ?, addr = ?, expires_ms = ?
WHERE (expires_ms <= ? OR holder = ?) AND (` + match + `)`
	args := append([]any{m.ID, m.Addr, expires, now, m.ID}, keys...)
	var rows []struct {
		Space   string `db:"space"`
		Section int    `db:"section"`
		MaxSeq  int64  `db:"max_seq"`
	}
	if s.dialect == SQLite {
		if err := s.db.SelectContext(ctx, &rows, update+"\nRETURNING space, section, max_seq", args...); err != nil {
			return nil, err
		}
	} else {
		if _, err := s.db.ExecContext(ctx, update, args...); err != nil {
			return nil, err
		}
		read := `SELECT space, section, max_seq FROM leaf_seq_section WHERE holder = ? AND (` + match + `)`
		if err := s.db.SelectContext(ctx, &rows, read, append([]any{m.ID}, keys...)...); err != nil {
			return nil, err
		}
	}
	got := make(map[sequence.SectionID]int64, len(rows))
	for _, r := range rows {
		got[sequence.SectionID{Space: r.Space, Section: r.Section}] = r.MaxSeq
	}
	return got, nil
}

// sectionsMatch is a condition that matches the rows of ids exactly (a
// name's bytes, whatever the collation), and its arguments.
func sectionsMatch(ids []sequence.SectionID) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, 3*len(ids))
	for i, id := range ids {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString("(space = ? AND HEX(space) = HEX(?) AND section = ?)")
		args = append(args, id.Space, id.Space, id.Section)
	}
	return b.String(), args
}
