package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/leafid/leaf/sequence"
)

// memberMemory is how long the row of a member gone stays.
const memberMemory = time.Hour

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
