package store

import (
	"context"
	"crypto/rand"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/leafid/leaf/segment"
)

// verifyStart checks the start of the node that c is connected to (idx in
// the list of nodes; -1 for SQLite) against what this store verified, and
// when it differs, checks every node's start against leaf_db_start
// (restart.go) on c before c is used. A database not yet migrated to
// leaf_db_start is let through here: takes checks again before any number.
func (s *Store) verifyStart(ctx context.Context, c driver.Conn, idx int64) error {
	q, ok := c.(driver.QueryerContext)
	if !ok {
		return fmt.Errorf("unexpected driver connection %T", c)
	}
	own, err := s.readStart(ctx, q, false)
	if err != nil {
		return fmt.Errorf("read the database's start: %w", err)
	}
	own = s.starts.view(own)
	s.starts.mu.Lock()
	defer s.starts.mu.Unlock()
	if s.starts.ok.Load() && s.starts.verifiedLocked(own) {
		return nil
	}
	readings, err := s.readStarts(ctx, q, idx)
	if err == nil {
		err = s.checkStarts(ctx, rawConn{c}, readings)
	}
	return err
}

// verifyConn is nodes.verify: verifyStart for a new connection of the
// pool, which lets a database without leaf_db_start through (leaf serve
// migrates after it connects).
func (s *Store) verifyConn(ctx context.Context, idx int64, c driver.Conn) error {
	err := s.verifyStart(ctx, c, idx)
	var nm *segment.NotMigratedError
	if errors.As(err, &nm) {
		return nil
	}
	return err
}

// readStarts reads every node's start and settings: the node of idx on
// q, the others on connections of their own; a node that does not answer
// is left out, and is checked when a connection to it is made.
func (s *Store) readStarts(ctx context.Context, q driver.QueryerContext, idx int64) ([]nodeStart, error) {
	own, err := s.readStart(ctx, q, true)
	if err != nil {
		return nil, fmt.Errorf("read the database's start: %w", err)
	}
	out := []nodeStart{s.starts.view(own)}
	if s.nodes == nil {
		return out, nil
	}
	for i, n := range s.nodes.list {
		if int64(i) == idx {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, s.nodes.budget)
		c, err := n.conn.Connect(cctx)
		if err == nil {
			var r nodeStart
			if oq, ok := c.(driver.QueryerContext); ok {
				if r, err = s.readStart(cctx, oq, true); err == nil && r.Node != own.Node {
					out = append(out, s.starts.view(r))
				}
			}
			c.Close()
		}
		cancel()
	}
	return out, nil
}

// readStart reads the name and start time of the node q is connected to
// and, when full, whether its settings keep every acknowledged commit.
func (s *Store) readStart(ctx context.Context, q driver.QueryerContext, full bool) (nodeStart, error) {
	if s.dialect == SQLite {
		return s.readSQLiteStart(ctx, q, full)
	}
	var n nodeStart
	var now int64
	err := queryRows(ctx, q, `SELECT CONCAT(@@hostname, ':', @@port), UNIX_TIMESTAMP()`, func(v []driver.Value) {
		n.Node, now = text(v[0]), toInt(v[1])
	})
	var uptime int64
	if err == nil {
		err = queryRows(ctx, q, `SHOW GLOBAL STATUS LIKE 'Uptime'`, func(v []driver.Value) { uptime = toInt(v[1]) })
	}
	if err != nil {
		return n, err
	}
	n.Started = now - uptime
	n.Run = readRun(ctx, q)
	if full {
		d := judgeNode(ctx, q)
		if d.Err != nil {
			return n, d.Err
		}
		n.Durable, n.Why = d.Durable, d.Why
	}
	return n, nil
}

// readRun reads the identity of the node's current run from leaf_db_run,
// a MEMORY table that every start of the server empties; the first reader
// of a run writes a random one (INSERT IGNORE: of two instances racing,
// one writes, and both read what it wrote). It is "" where the table
// cannot be used: a database not migrated yet, or a server that refuses
// the write (read only); the start time then stands for the run.
//
// A member of a MySQL Group Replication group is never asked: the first
// time a MEMORY table is opened after a restart, MySQL writes an implicit
// TRUNCATE of it to the binary log under a transaction of the member's
// own, which the group does not have, and the member can no longer join
// it; and the group refuses a write to a table that is not InnoDB.
func readRun(ctx context.Context, q driver.QueryerContext) string {
	group := false
	if err := queryRows(ctx, q, `SHOW GLOBAL VARIABLES LIKE 'group_replication_group_name'`,
		func(v []driver.Value) { group = text(v[1]) != "" }); err != nil {
		return ""
	}
	if group {
		return ""
	}
	read := func() string {
		run := ""
		if err := queryRows(ctx, q, `SELECT run FROM leaf_db_run WHERE id = 1`, func(v []driver.Value) { run = text(v[0]) }); err != nil {
			return ""
		}
		return run
	}
	if run := read(); run != "" {
		return run
	}
	c, ok := q.(driver.Conn)
	if !ok {
		return ""
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	if _, err := (rawConn{c}).exec(ctx, `INSERT IGNORE INTO leaf_db_run (id, run) VALUES (1, ?)`, hex.EncodeToString(b[:])); err != nil {
		return ""
	}
	return read()
}

// readSQLiteStart reads a SQLite file's "start": the boot of the machine,
// the one crash that can take a commit synchronous=NORMAL acknowledged.
func (s *Store) readSQLiteStart(ctx context.Context, q driver.QueryerContext, full bool) (nodeStart, error) {
	host, _ := os.Hostname()
	n := nodeStart{Node: "machine " + host, Started: bootTime()}
	if !full {
		return n, nil
	}
	var mode string
	var sync int64
	err := queryRows(ctx, q, "PRAGMA journal_mode", func(v []driver.Value) { mode = text(v[0]) })
	if err == nil {
		err = queryRows(ctx, q, "PRAGMA synchronous", func(v []driver.Value) { sync = toInt(v[0]) })
	}
	if err != nil {
		return n, err
	}
	n.Durable, n.Why, _ = judgeSQLite(s.memory, strings.ToLower(mode), int(sync))
	return n, nil
}

// bootTime is when the machine booted (Unix seconds), from Linux's
// /proc/stat; 0 where it cannot be read, which never reads as a restart.
func bootTime() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// toInt reads an integer column as the drivers return it.
func toInt(v driver.Value) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case bool:
		if v {
			return 1
		}
		return 0
	}
	n, _ := strconv.ParseFloat(strings.TrimSpace(text(v)), 64)
	return int64(n)
}

// rawConn runs statements on a driver connection: the checks of the
// starts run inside the pool's Connect, where the pool cannot be used.
type rawConn struct{ c driver.Conn }

// driverConn is the connection under a pool's: a node's own for MySQL.
func driverConn(dc any) (driver.Conn, int64, error) {
	switch c := dc.(type) {
	case *nodeConn:
		return c.conn, c.idx, nil
	case driver.Conn:
		return c, -1, nil
	}
	return nil, 0, fmt.Errorf("unexpected driver connection %T", dc)
}

func (r rawConn) begin(ctx context.Context) (driver.Tx, error) {
	b, ok := r.c.(driver.ConnBeginTx)
	if !ok {
		return nil, fmt.Errorf("driver connection %T cannot begin a transaction", r.c)
	}
	return b.BeginTx(ctx, driver.TxOptions{})
}

func named(args []any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// exec runs a statement and returns the rows it matched.
func (r rawConn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	e, ok := r.c.(driver.ExecerContext)
	if !ok {
		return 0, fmt.Errorf("driver connection %T cannot execute", r.c)
	}
	res, err := e.ExecContext(ctx, query, named(args))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// query calls row with each row of a statement without arguments.
func (r rawConn) query(ctx context.Context, query string, row func([]any)) error {
	q, ok := r.c.(driver.QueryerContext)
	if !ok {
		return fmt.Errorf("driver connection %T cannot query", r.c)
	}
	return queryRows(ctx, q, query, func(v []driver.Value) {
		a := make([]any, len(v))
		for i := range v {
			a[i] = v[i]
		}
		row(a)
	})
}

// int reads one integer.
func (r rawConn) int(ctx context.Context, query string) (int64, error) {
	var n int64
	err := r.query(ctx, query, func(v []any) { n = toInt(v[0]) })
	return n, err
}
