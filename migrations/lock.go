package migrations

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3/lock"
)

// mysqlLocker serialises migrations with a row in a table of its own,
// leaf_migration_lock, taken with one INSERT (or, once its holder's time is
// up, one conditional UPDATE) whose own answer says who holds it. A named
// lock (GET_LOCK) would not do: a Galera cluster does not replicate it, so
// instances starting on three nodes would each hold "the" lock. The lock
// table is per database, so two databases on one server migrate
// independently. A holder that dies keeps the row until mysqlLockTTL has
// passed by the database's clock; a live one deletes it when done.
type mysqlLocker struct {
	token string
}

var _ lock.SessionLocker = (*mysqlLocker)(nil)

const (
	mysqlLockTable = `CREATE TABLE IF NOT EXISTS leaf_migration_lock (
  id int NOT NULL,
  holder varchar(64) NOT NULL,
  expires_ms bigint NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB`
	mysqlNowMs       = `(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)`
	mysqlLockInsert  = `INSERT INTO leaf_migration_lock (id, holder, expires_ms) VALUES (1, ?, ` + mysqlNowMs + ` + ?)`
	mysqlLockTakeOld = `UPDATE leaf_migration_lock SET holder = ?, expires_ms = ` + mysqlNowMs + ` + ?
WHERE id = 1 AND expires_ms < ` + mysqlNowMs
	mysqlUnlock = `DELETE FROM leaf_migration_lock WHERE id = 1 AND holder = ?`
	// mysqlLockWait is how long a second instance waits for the first to
	// finish migrating.
	mysqlLockWait = 5 * time.Minute
	// mysqlLockTTL is how long a lock holder that died blocks the others.
	mysqlLockTTL = time.Minute
	// mysqlLockPoll is how often a waiting instance tries again.
	mysqlLockPoll = 200 * time.Millisecond
)

func (l *mysqlLocker) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, mysqlLockTable); err != nil {
		return fmt.Errorf("create migration lock table: %w", err)
	}
	l.token = rand.Text()
	ttl := mysqlLockTTL.Milliseconds()
	deadline := time.Now().Add(mysqlLockWait)
	for {
		_, err := conn.ExecContext(ctx, mysqlLockInsert, l.token, ttl)
		if err == nil {
			return nil
		}
		var me *mysql.MySQLError
		if !errors.As(err, &me) || (me.Number != mysqlDuplicate && me.Number != mysqlConflict) {
			return fmt.Errorf("take migration lock: %w", err)
		}
		if me.Number == mysqlDuplicate { // held: taken over only once its time is up
			res, err := conn.ExecContext(ctx, mysqlLockTakeOld, l.token, ttl)
			if err != nil && !(errors.As(err, &me) && me.Number == mysqlConflict) {
				return fmt.Errorf("take migration lock: %w", err)
			}
			if err == nil {
				if n, err := res.RowsAffected(); err == nil && n == 1 {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("take migration lock: not granted within %v", mysqlLockWait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("take migration lock: %w", ctx.Err())
		case <-time.After(mysqlLockPoll):
		}
	}
}

func (l *mysqlLocker) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, mysqlUnlock, l.token); err != nil {
		return fmt.Errorf("release migration lock: %w", err)
	}
	return nil
}
