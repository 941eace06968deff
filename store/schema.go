package store

import (
	"context"

	"github.com/leafid/leaf/migrations"
)

// Migrate applies the pending migrations (see package migrations) and
// returns those it applied, oldest first.
func (s *Store) Migrate(ctx context.Context) ([]migrations.Applied, error) {
	return migrations.Up(ctx, s.db.DB, s.dialect)
}

// CheckSchema reads no row but names every column the store uses, so it
// fails with a *segment.NotMigratedError on a database that lacks a
// migration this version needs (`leaf serve --migrate=false` on a new
// database, say). It creates nothing.
func (s *Store) CheckSchema(ctx context.Context) error {
	return s.call(ctx, true, func(ctx context.Context) error {
		for _, q := range []string{
			`SELECT biz_tag, max_id, step, description, update_time FROM leaf_alloc WHERE 1 = 0`,
			`SELECT worker_id, holder, instance, expires_ms, last_timestamp_ms FROM leaf_worker_lease WHERE 1 = 0`,
			`SELECT biz_tag, format, reset, time_zone, opaque_bits, key_id, pruned_before FROM leaf_tag_format WHERE 1 = 0`,
			`SELECT space, step, sections FROM leaf_seq_space WHERE 1 = 0`,
			`SELECT space, section, max_seq, holder, addr, expires_ms FROM leaf_seq_section WHERE 1 = 0`,
			`SELECT member, addr, expires_ms FROM leaf_seq_member WHERE 1 = 0`,
			`SELECT node, started, run, durable, jumped_ms FROM leaf_db_start WHERE 1 = 0`,
		} {
			rows, err := s.db.QueryContext(ctx, q)
			if err != nil {
				return err
			}
			rows.Close()
		}
		return nil
	})
}
