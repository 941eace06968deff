package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/leafid/leaf/segment"
)

// kind sorts the errors of a call by what a retry can do about them.
type kind int

const (
	// permanent errors are the statement's answer: a duplicate key, a
	// constraint, a syntax error. Retrying changes nothing.
	permanent kind = iota
	// conflict: a deadlock, a certification conflict between cluster
	// nodes (1213 on Galera, 3101 on MySQL Group Replication) or a lock
	// wait timeout (1205). The statement changed nothing; run it again.
	conflict
	// unreachable: the connection broke, or the node refuses statements
	// (not in the cluster's primary component, read only). The statement
	// may have run if the connection broke after it was sent.
	unreachable
)

// MySQL error numbers.
const (
	mysqlDuplicateKey  = 1062
	mysqlLockTimeout   = 1205
	mysqlDeadlock      = 1213
	mysqlTooManyConns  = 1040
	mysqlUnknownCom    = 1047 // Galera: "WSREP has not yet prepared node for application use"
	mysqlReadOnly      = 1290 // --read-only, --super-read-only
	mysqlReadOnlyMode  = 1836 // the server runs read only (innodb_read_only)
	mysqlReadOnlyTx    = 1792 // a write in a read-only transaction (transaction_read_only on)
	mysqlOffline       = 3032 // MySQL's offline_mode refuses ordinary users
	mysqlGRRolledBack  = 3101 // MySQL Group Replication: failed certification, rolled back
	mysqlServerGone    = 2006
	mysqlServerLost    = 2013
	mysqlQueryShutdown = 1053 // the server is shutting down
	mysqlConnKilled    = 1927 // connection was killed
	mysqlNoSuchTable   = 1146
	mysqlNoSuchColumn  = 1054

	// A value the column's character set cannot hold (a latin1 table).
	mysqlBadString      = 1366 // Incorrect string value, on a write
	mysqlMixCollations2 = 1267 // Illegal mix of collations, on a comparison
	mysqlMixCollations3 = 1270
	mysqlMixCollationsN = 1271
	mysqlCannotConvert  = 3854 // MySQL 8.0 and later, on a comparison: "Cannot convert string"
)

func classify(err error) kind {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case mysqlDeadlock, mysqlLockTimeout, mysqlGRRolledBack:
			return conflict
		case mysqlTooManyConns, mysqlUnknownCom, mysqlReadOnly, mysqlReadOnlyMode, mysqlReadOnlyTx,
			mysqlOffline, mysqlServerGone, mysqlServerLost, mysqlQueryShutdown, mysqlConnKilled:
			return unreachable
		}
		return permanent
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return conflict
		}
		return permanent
	}
	var ne net.Error
	switch {
	case errors.Is(err, errNotWritable), errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn),
		errors.Is(err, sql.ErrConnDone), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &ne):
		return unreachable
	}
	return permanent
}

// isDuplicateKey reports whether err is a primary-key or unique violation.
func isDuplicateKey(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlDuplicateKey
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	}
	return false
}

// isCharsetMismatch reports whether err is MySQL refusing a string that the
// column's character set cannot hold.
func isCharsetMismatch(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case mysqlBadString, mysqlMixCollations2, mysqlMixCollations3, mysqlMixCollationsN, mysqlCannotConvert:
		return true
	}
	return false
}

// unstorable turns a write refused for its characters into the input
// error of the field: the table's character set (latin1, say, where Leaf's
// script ran on a server with that default) cannot hold them. The
// server's message names the column.
func unstorable(err error) error {
	if !isCharsetMismatch(err) {
		return err
	}
	field, sentinel := "description", segment.ErrInvalidDescription
	if strings.Contains(err.Error(), "biz_tag") {
		field, sentinel = "tag name", segment.ErrInvalidTag
	}
	return fmt.Errorf("%w: the %s has characters that the character set of table leaf_alloc cannot store (convert it to utf8mb4)", sentinel, field)
}

// notMigratedError names the missing table when err says one does not exist:
// MySQL's "Table 'db.leaf_alloc' doesn't exist", SQLite's "no such table:
// leaf_alloc".
func notMigratedError(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == mysqlNoSuchTable {
		table := me.Message
		if i := strings.IndexByte(table, '\''); i >= 0 {
			table = table[i+1:]
			if j := strings.IndexByte(table, '\''); j >= 0 {
				table = table[:j]
			}
			if k := strings.LastIndexByte(table, '.'); k >= 0 {
				table = table[k+1:]
			}
		}
		return fmt.Errorf("%w: %w", &segment.NotMigratedError{Table: table}, err)
	}
	if errors.As(err, &me) && me.Number == mysqlNoSuchColumn {
		return fmt.Errorf("%w: %w", &segment.NotMigratedError{Detail: me.Message}, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		msg := se.Error()
		if _, table, ok := strings.Cut(msg, "no such table: "); ok {
			table, _, _ = strings.Cut(table, " ")
			return fmt.Errorf("%w: %w", &segment.NotMigratedError{Table: table}, err)
		}
		if _, col, ok := strings.Cut(msg, "no such column: "); ok {
			return fmt.Errorf("%w: %w", &segment.NotMigratedError{Detail: "no such column " + col}, err)
		}
	}
	return err
}
