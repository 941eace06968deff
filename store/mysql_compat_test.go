package store_test

// The tests of this file hold leaf's MySQL statements to the points where
// MySQL 8.4 and MariaDB 10.11 differ (docs/mysql-compatibility.md). Each
// runs against whichever server storetest finds; where the two servers
// answer differently, the test says what each one answers.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/migrations"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// flavour tells the two servers apart.
type flavour struct {
	mariadb bool
	version string // as VERSION() reports it
}

func flavourOf(tb testing.TB, db *sqlx.DB) flavour {
	tb.Helper()
	var v string
	if err := db.QueryRowContext(context.Background(), "SELECT VERSION()").Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return flavour{mariadb: strings.Contains(strings.ToLower(v), "mariadb"), version: v}
}

// TestLastInsertIDReachesTheClient: every range and lease leaf takes on
// MySQL is the value of LAST_INSERT_ID(expr) in the UPDATE that wrote it,
// read from that statement's own answer (the last insert id of its OK
// packet). With a trigger on the table MariaDB leaves the value out of the
// answer; the session's value, read on the same connection, is then the
// statement's.
func TestLastInsertIDReachesTheClient(t *testing.T) {
	ctx := context.Background()
	s := storetest.MySQLStore(t)
	f := flavourOf(t, s.DB())
	createTag(t, s, "seq", 1, 10)
	raise := func(t *testing.T, v int64) (answer, session int64) {
		t.Helper()
		conn, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		res, err := conn.ExecContext(ctx, "UPDATE leaf_alloc SET max_id = LAST_INSERT_ID(?) WHERE biz_tag = 'seq'", v)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			t.Fatalf("rows affected = %d, %v; want 1", n, err)
		}
		if answer, err = res.LastInsertId(); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&session); err != nil {
			t.Fatal(err)
		}
		return answer, session
	}
	values := []int64{2, 1<<53 + 1, math.MaxInt64 - 1, math.MaxInt64}

	t.Run("in the statement's answer", func(t *testing.T) {
		for _, v := range values {
			if answer, session := raise(t, v); answer != v || session != v {
				t.Errorf("LAST_INSERT_ID(%d): answer %d, session %d; want %d in both", v, answer, session, v)
			}
		}
	})

	t.Run("with a trigger on the table", func(t *testing.T) {
		if _, err := s.DB().ExecContext(ctx, "CREATE TRIGGER leaf_test_noop BEFORE UPDATE ON leaf_alloc FOR EACH ROW SET @leaf_test = 1"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := s.DB().ExecContext(ctx, "DROP TRIGGER leaf_test_noop"); err != nil {
				t.Error(err)
			}
		})
		var answers []int64
		for _, v := range values {
			answer, session := raise(t, v)
			if session != v || (answer != v && answer != 0) {
				t.Errorf("LAST_INSERT_ID(%d): answer %d, session %d; want %d in the session and %d or 0 in the answer", v, answer, session, v, v)
			}
			answers = append(answers, answer)
		}
		t.Logf("%s, with a trigger: answers %v to LAST_INSERT_ID(%v)", f.version, answers, values)
		// Through the store, which falls back to the session's value.
		storetest.RewindTag(t, s, "seq", 100)
		if a, err := s.Allocate(ctx, "seq", 0); err != nil || a.MaxID != 110 {
			t.Fatalf("Allocate with a trigger on the table = %+v, %v; want the range up to 110", a, err)
		}
	})
}

// TestServerErrors provokes each condition whose error number the store
// sorts (store/call.go) on the server itself, and checks the number it
// answers and what a call makes of it. Where MySQL 8.4 and MariaDB 10.11
// use different numbers, both are listed.
func TestServerErrors(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	s := storetest.Open(t, store.MySQL, dsn) // the tables
	f := flavourOf(t, s.DB())
	createTag(t, s, "a", 1, 10)
	createTag(t, s, "b", 1, 10)

	// A plain pool, without the store's connector, to see the server's own
	// answers; lock waits end after a second, as in the store's sessions.
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Params = map[string]string{"innodb_lock_wait_timeout": "1"}
	cfg.Logger = log.New(io.Discard, "", 0) // a killed connection is logged otherwise
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })

	tests := []struct {
		name           string
		provoke        func(t *testing.T) error
		mysql, mariadb uint16 // the server's error number; 0: none, the connection broke
		kind           string // store.ErrorKind of the error
	}{
		{"duplicate key", func(t *testing.T) error {
			_, err := db.ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('a', 1, 10)")
			return err
		}, 1062, 1062, "permanent"},
		{"no such table", func(t *testing.T) error {
			_, err := db.ExecContext(ctx, "SELECT max_id FROM leaf_missing")
			return err
		}, 1146, 1146, "permanent"},
		{"no such column", func(t *testing.T) error {
			_, err := db.ExecContext(ctx, "SELECT missing FROM leaf_alloc")
			return err
		}, 1054, 1054, "permanent"},
		{"CHECK constraint", func(t *testing.T) error {
			_, err := db.ExecContext(ctx, "INSERT INTO leaf_worker_lease (worker_id, holder, expires_ms) VALUES (65536, 'h', 0)")
			return err
		}, 3819, 4025, "permanent"},
		{"lock wait timeout", func(t *testing.T) error {
			tx := begin(t, db, nil)
			if _, err := tx.ExecContext(ctx, "SELECT max_id FROM leaf_alloc WHERE biz_tag = 'a' FOR UPDATE"); err != nil {
				t.Fatal(err)
			}
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
				t.Fatal(err)
			}
			_, err = conn.ExecContext(ctx, "UPDATE leaf_alloc SET max_id = max_id + 1 WHERE biz_tag = 'a'")
			return err
		}, 1205, 1205, "conflict"},
		{"deadlock", func(t *testing.T) error {
			tx1, tx2 := begin(t, db, nil), begin(t, db, nil)
			for _, w := range []struct {
				tx  *sql.Tx
				tag string
			}{{tx1, "a"}, {tx2, "b"}} {
				// Long enough that the deadlock, not the wait, ends it.
				if _, err := w.tx.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 30"); err != nil {
					t.Fatal(err)
				}
				if _, err := w.tx.ExecContext(ctx, "UPDATE leaf_alloc SET step = step + 1 WHERE biz_tag = ?", w.tag); err != nil {
					t.Fatal(err)
				}
			}
			// Each now asks for the other's row: the server rolls one of
			// them back, and the other goes on.
			first := make(chan error, 1)
			go func() {
				_, err := tx1.ExecContext(ctx, "UPDATE leaf_alloc SET step = step + 1 WHERE biz_tag = 'b'")
				first <- err
			}()
			_, err := tx2.ExecContext(ctx, "UPDATE leaf_alloc SET step = step + 1 WHERE biz_tag = 'a'")
			return errors.Join(err, <-first)
		}, 1213, 1213, "conflict"},
		{"write in a read-only transaction", func(t *testing.T) error {
			tx := begin(t, db, &sql.TxOptions{ReadOnly: true})
			_, err := tx.ExecContext(ctx, "UPDATE leaf_alloc SET max_id = max_id + 1 WHERE biz_tag = 'a'")
			return err
		}, 1792, 1792, "unreachable"},
		{"statement killed (KILL QUERY)", func(t *testing.T) error {
			return killDuring(t, db, "QUERY")
		}, 1317, 1317, "permanent"},
		{"connection killed (KILL CONNECTION)", func(t *testing.T) error {
			return killDuring(t, db, "CONNECTION")
		}, 0, 0, "unreachable"},
		{"server-side statement timeout", func(t *testing.T) error {
			// Leaf sets neither; an operator may.
			q := "SELECT /*+ MAX_EXECUTION_TIME(50) */ COUNT(*) FROM information_schema.COLUMNS a, information_schema.COLUMNS b, information_schema.COLUMNS c"
			if f.mariadb {
				q = "SET STATEMENT max_statement_time = 0.05 FOR SELECT SLEEP(2), (SELECT COUNT(*) FROM leaf_alloc)"
			}
			_, err := db.ExecContext(ctx, q)
			return err
		}, 3024, 1969, "permanent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.provoke(t)
			if err == nil {
				t.Fatal("no error")
			}
			want := tc.mysql
			if f.mariadb {
				want = tc.mariadb
			}
			var me *mysql.MySQLError
			switch {
			case want == 0 && errors.As(err, &me):
				t.Errorf("%s answered error %d (%v), want a broken connection", f.version, me.Number, err)
			case want != 0 && (!errors.As(err, &me) || me.Number != want):
				t.Errorf("%s answered %v, want error %d", f.version, err, want)
			}
			if got := store.ErrorKind(err); got != tc.kind {
				t.Errorf("ErrorKind(%v) = %s, want %s", err, got, tc.kind)
			}
		})
	}
}

// begin starts a transaction that is rolled back when t ends.
func begin(t *testing.T, db *sql.DB, opts *sql.TxOptions) *sql.Tx {
	t.Helper()
	tx, err := db.BeginTx(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	return tx
}

// killDuring runs a slow UPDATE on a connection of db, kills its statement
// (how is QUERY) or the connection itself (CONNECTION) from another, and
// returns the error the UPDATE got.
func killDuring(t *testing.T, db *sql.DB, how string) error {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(ctx, "UPDATE leaf_alloc SET step = step + SLEEP(5) WHERE biz_tag = 'a'")
		done <- err
	}()
	testkit.WaitFor(t, 0, "the UPDATE to run", func() bool {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'UPDATE leaf_alloc SET step = step + SLEEP%'", id).Scan(&n)
		return err == nil && n == 1
	})
	if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL %s %d", how, id)); err != nil {
		t.Fatal(err)
	}
	return <-done
}

// TestServerShutdownIsUnreachable: a statement cut short by a clean
// shutdown (error 1053 on both servers, or the connection closing first)
// counts as the database not answering.
func TestServerShutdownIsUnreachable(t *testing.T) {
	mariadbtest.Require(t)
	ctx := context.Background()
	srv := mariadbtest.StartServer(t)
	cfg, err := mysql.ParseDSN(srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = log.New(io.Discard, "", 0)
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "SELECT SLEEP(30)")
		done <- err
	}()
	testkit.WaitFor(t, 0, "the statement to run", func() bool {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(30)'").Scan(&n)
		return err == nil && n == 1
	})
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if err == nil {
		t.Fatal("the statement outlived the server")
	}
	if got := store.ErrorKind(err); got != "unreachable" {
		t.Fatalf("ErrorKind(%v) = %s, want unreachable", err, got)
	}
	t.Logf("statement during shutdown: %v", err)
}

// TestSessionSettings: what leaf sets on every MySQL session, and what it
// leaves to the server.
func TestSessionSettings(t *testing.T) {
	ctx := context.Background()
	s := storetest.MySQLStore(t)
	f := flavourOf(t, s.DB())

	var (
		tz         string
		lockWait   int64
		autocommit int
	)
	if err := s.DB().QueryRowContext(ctx, "SELECT @@session.time_zone, @@session.innodb_lock_wait_timeout, @@session.autocommit").
		Scan(&tz, &lockWait, &autocommit); err != nil {
		t.Fatal(err)
	}
	if tz != "+00:00" || lockWait != 1 || autocommit != 1 {
		t.Errorf("session time_zone %q, innodb_lock_wait_timeout %d, autocommit %d; want +00:00, 1, 1", tz, lockWait, autocommit)
	}
	// A server-side statement timeout is MariaDB's max_statement_time and
	// MySQL's max_execution_time; leaf sets neither.
	v := "max_execution_time"
	if f.mariadb {
		v = "max_statement_time"
	}
	var session, global string
	if err := s.DB().QueryRowContext(ctx, "SELECT @@session."+v+", @@global."+v).Scan(&session, &global); err != nil {
		t.Fatal(err)
	}
	if session != global {
		t.Errorf("session %s = %s, want the server's %s", v, session, global)
	}

	// The database clock of the leases: Unix milliseconds, whatever the
	// session's time zone.
	const ttl = time.Minute
	before := time.Now()
	l, err := s.Acquire(ctx, "clock", 4, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if d := l.Expires.Sub(before.Add(ttl)); d < -5*time.Second || d > 5*time.Second {
		t.Errorf("lease expires %v, %v from now plus its ttl by this machine's clock", l.Expires, d)
	}

	// Affected rows count the rows matched (clientFoundRows), also when
	// the statement writes the values the row already has.
	createTag(t, s, "t", 1, 10)
	res, err := s.DB().ExecContext(ctx, "UPDATE leaf_alloc SET step = step WHERE biz_tag = 't'")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Errorf("an UPDATE that changes nothing reports %d rows (%v), want 1", n, err)
	}

	// update_time follows every change of the row (ON UPDATE
	// CURRENT_TIMESTAMP) and reads back as the right instant.
	if _, err := s.DB().ExecContext(ctx, "UPDATE leaf_alloc SET update_time = '2001-01-01 00:00:00' WHERE biz_tag = 't'"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allocate(ctx, "t", 0); err != nil {
		t.Fatal(err)
	}
	tag, err := s.Tag(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(tag.UpdateTime); d < -5*time.Second || d > 5*time.Second {
		t.Errorf("update_time after an allocation is %v, %v away from now", tag.UpdateTime, d)
	}
}

// mysql84SQLMode is MySQL 8.4's default sql_mode.
const mysql84SQLMode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// TestMySQL84SQLMode runs the migrations and every call of the store in
// MySQL 8.4's default sql_mode, whatever the server's own default is.
func TestMySQL84SQLMode(t *testing.T) {
	cfg, err := mysql.ParseDSN(storetest.MySQL(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["sql_mode"] = "'" + mysql84SQLMode + "'"
	s := storetest.Open(t, store.MySQL, cfg.FormatDSN())
	var mode string
	if err := s.DB().QueryRowContext(context.Background(), "SELECT @@session.sql_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	got, want := strings.Split(mode, ","), strings.Split(mysql84SQLMode, ",")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("session sql_mode %q, want %q", mode, mysql84SQLMode)
	}
	exercise(t, s)
}

// TestTagNamesUnderEachCollation: migration 1 leaves the collation of
// leaf_alloc to the server (utf8mb4_general_ci on MariaDB 10.11,
// utf8mb4_0900_ai_ci on MySQL 8.4). Under each, a tag is the row of
// exactly its name, and every call works. A collation the server lacks is
// skipped; MariaDB's uca1400 NO PAD collation stands in for MySQL's there.
func TestTagNamesUnderEachCollation(t *testing.T) {
	ctx := context.Background()

	t.Run("the server's default", func(t *testing.T) {
		s := storetest.MySQLStore(t)
		var table, def string
		if err := s.DB().QueryRowContext(ctx, `SELECT TABLE_COLLATION FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leaf_alloc'`).Scan(&table); err != nil {
			t.Fatal(err)
		}
		if err := s.DB().QueryRowContext(ctx, `SELECT DEFAULT_COLLATE_NAME FROM information_schema.CHARACTER_SETS
WHERE CHARACTER_SET_NAME = 'utf8mb4'`).Scan(&def); err != nil {
			t.Fatal(err)
		}
		if table != def {
			t.Errorf("leaf_alloc has collation %s, want the server's default for utf8mb4, %s", table, def)
		}
		t.Logf("%s: leaf_alloc is %s", flavourOf(t, s.DB()).version, table)
	})

	for _, c := range []struct {
		name  string
		why   string
		noPad bool // trailing spaces count
	}{
		{"utf8mb4_general_ci", "MariaDB 10.11's default for utf8mb4", false},
		{"utf8mb4_0900_ai_ci", "MySQL 8.4's default for utf8mb4", true},
		{"utf8mb4_uca1400_nopad_ai_ci", "MariaDB's nearest to MySQL 8.4's default: UCA, accent- and case-insensitive, NO PAD", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := storetest.MySQLStore(t)
			if _, err := s.DB().ExecContext(ctx, "ALTER TABLE leaf_alloc CONVERT TO CHARACTER SET utf8mb4 COLLATE "+c.name); err != nil {
				var me *mysql.MySQLError
				if errors.As(err, &me) && me.Number == 1273 { // unknown collation
					t.Skipf("%s has no %s (%s)", flavourOf(t, s.DB()).version, c.name, c.why)
				}
				t.Fatal(err)
			}
			createTag(t, s, "orders", 1, 10)
			for _, name := range []string{"ORDERS", "Orders", "orders ", "ördérs", "orderß"} {
				if a, err := s.Allocate(ctx, name, 0); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("Allocate(%q) = %+v, %v; want ErrUnknownTag", name, a, err)
				}
				if _, err := s.Tag(ctx, name); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("Tag(%q) = %v; want ErrUnknownTag", name, err)
				}
				if _, err := s.UpdateTag(ctx, name, segment.TagUpdate{Step: ptr[int64](5)}); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("UpdateTag(%q) = %v; want ErrUnknownTag", name, err)
				}
			}
			if _, err := s.CreateTag(ctx, segment.Tag{Name: "ORDERS", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrTagExists) {
				t.Errorf("CreateTag(ORDERS) beside orders = %v; want ErrTagExists (the key is case-insensitive)", err)
			}
			// A row of Leaf's whose name differs by trailing spaces exists
			// only where they count, and is a tag of its own there.
			_, err := s.DB().ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('orders ', 1000, 10)")
			switch {
			case c.noPad && err != nil:
				t.Fatalf("a row 'orders ' beside 'orders' under NO PAD: %v", err)
			case c.noPad:
				if a, err := s.Allocate(ctx, "orders ", 0); err != nil || a.Start() != 1000 {
					t.Errorf("Allocate('orders ') = %+v, %v; want the range from 1000", a, err)
				}
				if a, err := s.Allocate(ctx, "orders", 0); err != nil || a.Start() != 1 {
					t.Errorf("Allocate(orders) = %+v, %v; want the range from 1", a, err)
				}
			case err == nil:
				t.Fatal("a row 'orders ' beside 'orders' under PAD SPACE")
			}
			tag, err := s.Tag(ctx, "orders")
			if err != nil || tag.Step != 10 {
				t.Fatalf("the row was changed through another spelling: %+v, %v", tag, err)
			}
			exercise(t, s)
		})
	}
}

// exercise runs every MySQL statement of the store once, through the
// store's calls, and checks their answers.
func exercise(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	const tag = "exercise"
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := s.CreateTag(ctx, segment.Tag{Name: tag, MaxID: 1, Step: 10, Description: "d"})
	step("CreateTag", err)
	if _, err := s.CreateTag(ctx, segment.Tag{Name: tag, MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrTagExists) {
		t.Fatalf("CreateTag again = %v, want ErrTagExists", err)
	}
	a, err := s.Allocate(ctx, tag, 0)
	step("Allocate", err)
	if a.MaxID != 11 {
		t.Fatalf("Allocate = %+v, want max_id 11", a)
	}
	a, err = s.AllocateAbove(ctx, tag, 5, 100)
	step("AllocateAbove", err)
	if a.MaxID != 105 {
		t.Fatalf("AllocateAbove = %+v, want max_id 105", a)
	}
	done, err := s.HandBack(ctx, tag, 105, 102)
	step("HandBack", err)
	if !done {
		t.Fatal("HandBack changed nothing")
	}
	u, err := s.UpdateTag(ctx, tag, segment.TagUpdate{Step: ptr[int64](20), MaxID: ptr[int64](200), Description: ptr("e")})
	step("UpdateTag", err)
	if u.Step != 20 || u.MaxID != 200 || u.Description != "e" {
		t.Fatalf("UpdateTag = %+v", u)
	}
	if _, err := s.UpdateTag(ctx, tag, segment.TagUpdate{MaxID: ptr[int64](150)}); !errors.Is(err, segment.ErrInvalidMaxID) {
		t.Fatalf("UpdateTag lowering max_id = %v, want ErrInvalidMaxID", err)
	}
	tags, err := s.Tags(ctx)
	step("Tags", err)
	if !slices.ContainsFunc(tags, func(x segment.Tag) bool { return x.Name == tag && x.MaxID == 200 }) {
		t.Fatalf("Tags = %+v, want %s at 200", tags, tag)
	}
	step("CheckSchema", s.CheckSchema(ctx))

	const ttl = time.Minute
	l, err := s.Acquire(ctx, "exercise-1", 1, ttl)
	step("Acquire", err)
	l, err = s.Renew(ctx, l, 123, ttl)
	step("Renew", err)
	if l.LastTimestamp != 123 {
		t.Fatalf("Renew = %+v, want last timestamp 123", l)
	}
	step("Release", s.Release(ctx, l, 150))
	other, err := s.Acquire(ctx, "exercise-2", 1, ttl) // takes the expired id
	step("Acquire the released id", err)
	if other.WorkerID != l.WorkerID || other.LastTimestamp != 150 {
		t.Fatalf("Acquire after release = %+v, want worker id %d with last timestamp 150", other, l.WorkerID)
	}
	if _, err := s.Renew(ctx, l, 160, ttl); !errors.Is(err, snowflake.ErrLeaseLost) {
		t.Fatalf("Renew of a lease taken over = %v, want ErrLeaseLost", err)
	}
}

// TestMySQLStatementsUseCommonSQL: the MySQL statements of the store and
// the migrations use no syntax that only one of MySQL 8.4 and MariaDB
// 10.11 understands. CI runs on MariaDB, so nothing else would catch such a
// statement before it met MySQL.
func TestMySQLStatementsUseCommonSQL(t *testing.T) {
	stmts := map[string]string{} // where -> SQL
	fset := token.NewFileSet()
	for _, file := range []string{"queries.go", filepath.Join("..", "migrations", "migrations.go")} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i >= len(vs.Values) || strings.Contains(strings.ToLower(name.Name), "sqlite") {
					continue
				}
				var text strings.Builder
				ast.Inspect(vs.Values[i], func(n ast.Node) bool {
					if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						text.WriteString(s)
					}
					return true
				})
				stmts[file+": "+name.Name] = text.String()
			}
			return true
		})
	}
	fsys := os.DirFS(filepath.Join("..", "migrations", migrations.MySQL)) // the files migrations embeds
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		var lines []string
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				lines = append(lines, line)
			}
		}
		stmts["migrations/mysql/"+path] = strings.Join(lines, "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) < 20 {
		t.Fatalf("found only %d statements: %v", len(stmts), stmts)
	}
	forbidden := []struct {
		re  *regexp.Regexp
		why string
	}{
		{regexp.MustCompile(`(?i)\bRETURNING\b`), "MySQL 8.4 has no RETURNING; MariaDB 10.11 has it on INSERT and DELETE only"},
		{regexp.MustCompile(`(?i)\b(ADD|DROP|MODIFY|CHANGE)\s+(COLUMN\s+|INDEX\s+|KEY\s+|CONSTRAINT\s+)?IF\s+(NOT\s+)?EXISTS\b`), "IF [NOT] EXISTS inside ALTER TABLE is MariaDB's"},
		{regexp.MustCompile(`(?i)\bDROP\s+CHECK\b`), "DROP CHECK is MySQL's; both servers drop a check with DROP CONSTRAINT"},
		{regexp.MustCompile(`(?i)\bCREATE\s+OR\s+REPLACE\s+TABLE\b`), "CREATE OR REPLACE TABLE is MariaDB's"},
		{regexp.MustCompile(`(?i)\bSET\s+STATEMENT\b`), "SET STATEMENT ... FOR is MariaDB's"},
		{regexp.MustCompile(`(?i)\bSEQUENCE\b`), "sequences are MariaDB's"},
		{regexp.MustCompile(`(?i)\bmax_statement_time\b`), "MariaDB's variable (MySQL 8.4's max_execution_time bounds SELECTs only)"},
		{regexp.MustCompile(`(?i)\bmax_execution_time\b`), "MySQL's variable"},
		{regexp.MustCompile(`(?i)\bsuper_read_only\b`), "MySQL's variable; read_only is on whenever it is"},
		{regexp.MustCompile(`(?i)\buca1400`), "MariaDB's collations"},
		{regexp.MustCompile(`(?i)_0900_`), "MySQL's collations"},
	}
	for where, q := range stmts {
		for _, f := range forbidden {
			if m := f.re.FindString(q); m != "" {
				t.Errorf("%s uses %q: %s", where, m, f.why)
			}
		}
	}
}
