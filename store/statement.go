package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// now reads the database clock in Unix milliseconds.
func (s *Store) now(ctx context.Context) (int64, error) {
	var ms int64
	if err := s.db.GetContext(ctx, &ms, s.nowMillis); err != nil {
		return 0, fmt.Errorf("read database clock: %w", err)
	}
	return ms, nil
}

// updateReturning runs an UPDATE that changes at most one row and returns
// one integer from it, in the same statement: on MySQL the value of its
// LAST_INSERT_ID(expr), on SQLite the column of its RETURNING clause. ok is
// false when no row matched. The statement runs on its own (autocommit),
// so its success is its commit.
func (s *Store) updateReturning(ctx context.Context, query string, args ...any) (v int64, ok bool, err error) {
	if s.dialect == SQLite {
		err := s.db.QueryRowContext(ctx, query, args...).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		return v, err == nil, err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close()
	res, err := conn.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, false, err
	}
	n, err := rowsAffected(res)
	if err != nil || n == 0 {
		return 0, false, err
	}
	if n != 1 {
		return 0, false, fmt.Errorf("%d rows updated, want 1", n)
	}
	if v, err = res.LastInsertId(); err != nil {
		return 0, false, fmt.Errorf("last insert id: %w", err)
	}
	if v == 0 {
		// MariaDB leaves the value out of the statement's answer when the
		// table has a trigger; the session still holds what the
		// statement computed (a trigger's own changes are undone when it
		// ends), so ask for it on the same connection.
		if err := conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&v); err != nil {
			return 0, false, fmt.Errorf("last insert id: %w", err)
		}
	}
	return v, true, nil
}

// rowsAffected is res.RowsAffected for the statements of this package,
// whose drivers always report it.
func rowsAffected(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

// nullString stores "" as NULL, as Leaf leaves an unset description.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}
