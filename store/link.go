package store

import (
	"context"
	"database/sql"
	"errors"
)

// LinkEncrypted reports whether a connection to the MySQL node in use
// speaks TLS (its session's Ssl_cipher is set): a DSN with tls=preferred
// falls back to clear text where the server speaks no TLS, and the caller
// says so. SQLite has no link: true.
func (s *Store) LinkEncrypted(ctx context.Context) (bool, error) {
	if s.dialect != MySQL {
		return true, nil
	}
	var name, cipher string
	err := s.db.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return cipher != "", err
}
