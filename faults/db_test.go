package faults

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// sqlTimeout bounds every statement the suite runs itself.
const sqlTimeout = 30 * time.Second

// openDB opens a pool on dsn for the suite's own statements; tb.Cleanup
// closes it.
func openDB(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		tb.Fatalf("parse dsn: %v", err)
	}
	cfg.Timeout = 5 * time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	db := sql.OpenDB(c)
	tb.Cleanup(func() { db.Close() })
	return db
}

// mustExec runs a statement and fails tb if it fails.
func mustExec(tb testing.TB, db *sql.DB, query string, args ...any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sqlTimeout)
	defer cancel()
	if _, err := db.ExecContext(ctx, query, args...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

// createTags inserts rows of leaf_alloc that start at 1 with step.
func createTags(tb testing.TB, db *sql.DB, step int64, tags ...string) {
	tb.Helper()
	for _, tag := range tags {
		mustExec(tb, db, `INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, 1, ?, 'fault suite')`, tag, step)
	}
}

// maxIDs reads max_id of every row of leaf_alloc.
func maxIDs(tb testing.TB, db *sql.DB) map[string]int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sqlTimeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT biz_tag, max_id FROM leaf_alloc`)
	if err != nil {
		tb.Fatalf("read leaf_alloc: %v", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var tag string
		var v int64
		if err := rows.Scan(&tag, &v); err != nil {
			tb.Fatal(err)
		}
		out[tag] = v
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// leaseExpiries reads expires_ms of every row of leaf_worker_lease, by
// worker id.
func leaseExpiries(tb testing.TB, db *sql.DB) map[int64]int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sqlTimeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT worker_id, expires_ms FROM leaf_worker_lease`)
	if err != nil {
		tb.Fatalf("read leaf_worker_lease: %v", err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var id, exp int64
		if err := rows.Scan(&id, &exp); err != nil {
			tb.Fatal(err)
		}
		out[id] = exp
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// withAddr is dsn with its address replaced.
func withAddr(tb testing.TB, dsn, addr string) string {
	tb.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		tb.Fatalf("parse dsn: %v", err)
	}
	cfg.Addr = addr
	return cfg.FormatDSN()
}
