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
