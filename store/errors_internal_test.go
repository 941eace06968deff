package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/segment"
)

var (
	errDeadlock = &mysql.MySQLError{Number: mysqlDeadlock, Message: "Deadlock found when trying to get lock"}
	errLockWait = &mysql.MySQLError{Number: mysqlLockTimeout, Message: "Lock wait timeout exceeded"}
	errNotReady = &mysql.MySQLError{Number: mysqlUnknownCom, Message: "WSREP has not yet prepared node for application use"}
	errDupKey   = &mysql.MySQLError{Number: mysqlDuplicateKey, Message: "Duplicate entry"}
)

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want kind
	}{
		{errDeadlock, conflict},
		{fmt.Errorf("wrapped: %w", errLockWait), conflict},
		{errNotReady, unreachable},
		{mysql.ErrInvalidConn, unreachable},
		{&mysql.MySQLError{Number: mysqlReadOnly}, unreachable},
		{&mysql.MySQLError{Number: mysqlReadOnlyTx, Message: "Cannot execute statement in a READ ONLY transaction."}, unreachable},
		{&mysql.MySQLError{Number: mysqlOffline, Message: "The server is currently in offline mode"}, unreachable},
		{&mysql.MySQLError{Number: mysqlGRRolledBack, Message: "Plugin instructed the server to rollback the current transaction."}, conflict},
		{&mysql.MySQLError{Number: mysqlReadOnlyMode, Message: "Running in read-only mode"}, unreachable},
		{&mysql.MySQLError{Number: mysqlTooManyConns, Message: "Too many connections"}, unreachable},
		{&mysql.MySQLError{Number: mysqlQueryShutdown, Message: "Server shutdown in progress"}, unreachable},
		{&mysql.MySQLError{Number: mysqlConnKilled, Message: "Connection was killed"}, unreachable},
		{&mysql.MySQLError{Number: mysqlServerGone}, unreachable},
		{&mysql.MySQLError{Number: mysqlServerLost}, unreachable},
		{&mysql.MySQLError{Number: 1317, Message: "Query execution was interrupted"}, permanent},
		{&mysql.MySQLError{Number: 3024, Message: "Query execution was interrupted, maximum statement execution time exceeded"}, permanent},
		{&mysql.MySQLError{Number: 1969, Message: "Query execution was interrupted (max_statement_time exceeded)"}, permanent},
		{errors.Join(fmt.Errorf("node a: %w: read_only is ON", errNotWritable)), unreachable},
		{errDupKey, permanent},
		{segment.ErrUnknownTag, permanent},
	}
	for _, tc := range tests {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
