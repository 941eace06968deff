package store_test

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/mysqltest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestRestartCrashLoop: a server of its own that acknowledges commits
// before they are on disk (innodb_flush_log_at_trx_commit=0; on MySQL also
// sync_binlog=0) is killed with SIGKILL and started again over and over,
// its starts 0.5 s, 1 s and 3 s apart (under 2 s, two readings of "now
// minus Uptime" look like one run), while two instances take ranges of one
// tag after each start. Every range taken must be disjoint from every
// other: each start is known by the id of its run (leaf_db_run, which a
// start empties), so after each one, however soon, the rows move forward
// past what the lost commits handed out. Run on MariaDB and on Oracle's
// MySQL.
func TestRestartCrashLoop(t *testing.T) {
	t.Run("mariadb", func(t *testing.T) {
		mariadbtest.Require(t)
		srv := mariadbtest.StartServerWith(t, "innodb_flush_log_at_trx_commit=0")
		crashLoop(t, srv, srv.Database(t, "leaf"))
	})
	t.Run("mysql", func(t *testing.T) {
		mysqltest.Require(t)
		srv := mysqltest.StartServer(t, "innodb_flush_log_at_trx_commit=0", "sync_binlog=0")
		if err := srv.Exec(context.Background(), "CREATE DATABASE leaf"); err != nil {
			t.Fatal(err)
		}
		crashLoop(t, srv, srv.DSN("leaf"))
	})
}

// crashLoop is TestRestartCrashLoop on a server and leaf's database on it.
func crashLoop(t *testing.T, srv interface {
	Kill() error
	Start() error
}, dsn string) {
	setup := storetest.Open(t, store.MySQL, dsn)
	if _, err := setup.CreateTag(context.Background(), segment.Tag{Name: "t", Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	setup.Close()
	time.Sleep(2 * time.Second) // the tag's row on disk: InnoDB writes its log out every second

	var jumps atomic.Int64
	ss := []*store.Store{
		openRestartStore(t, store.MySQL, dsn, "", &jumps),
		openRestartStore(t, store.MySQL, dsn, "", &jumps),
	}
	var taken []segment.Allocation
	runs := map[string]int{} // the run recorded after each round, and its round
	take := func(round int) {
		defer func() {
			db, err := sql.Open("mysql", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var run string
			if err := db.QueryRow("SELECT run FROM leaf_db_start").Scan(&run); err != nil || run == "" {
				t.Fatalf("round %d: the recorded run %q, %v", round, run, err)
			}
			if r, ok := runs[run]; ok {
				t.Errorf("round %d: the run %s recorded after round %d too: a start not told apart", round, run, r)
			}
			runs[run] = round
		}()
		for i, s := range ss {
			for range 3 {
				// Loads fail while the store waits for the record of a
				// new start to be on disk; the allocator tries again.
				deadline := time.Now().Add(30 * time.Second)
				for {
					a, err := s.Allocate(context.Background(), "t", 10)
					if err == nil {
						taken = append(taken, a)
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("round %d: store %d: %v", round, i, err)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
	}
	// restart kills the server and starts it again, and counts the starts
	// that came back with the row behind a range already taken: the
	// crashes that lost commits.
	lost := 0
	restart := func() {
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var row int64
		if err := db.QueryRow("SELECT max_id FROM leaf_alloc WHERE biz_tag = 't'").Scan(&row); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(taken, func(a segment.Allocation) bool { return a.MaxID > row }) {
			lost++
		}
	}
	take(0)
	gaps := []time.Duration{500 * time.Millisecond, time.Second, 3 * time.Second, 500 * time.Millisecond, time.Second}
	for i, gap := range gaps {
		began := time.Now()
		restart()
		take(i + 1)
		// The next crash comes gap after this start: what was committed
		// since may still be in the log buffer, and is then lost.
		time.Sleep(time.Until(began.Add(gap)))
	}
	restart()
	take(len(gaps) + 1)

	slices.SortFunc(taken, func(a, b segment.Allocation) int { return cmp.Compare(a.Start(), b.Start()) })
	twice := 0
	for i := 1; i < len(taken); i++ {
		if prev, cur := taken[i-1], taken[i]; cur.Start() < prev.MaxID {
			twice += int(min(prev.MaxID, cur.MaxID) - cur.Start())
			t.Errorf("ranges %d..%d and %d..%d overlap", prev.Start(), prev.MaxID-1, cur.Start(), cur.MaxID-1)
		}
	}
	restarts := len(gaps) + 1
	t.Logf("%d restarts, %d of them with commits lost, %d jumps (one at the first sight of a database that can forget), %d ranges, %d ids twice",
		restarts, lost, jumps.Load(), len(taken), twice)
	if got := jumps.Load(); got < int64(restarts)+1 {
		t.Errorf("%d jumps after %d restarts and the first sight, want one each", got, restarts)
	}
}
