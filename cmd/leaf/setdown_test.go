package main

// `leaf serve --store …` with a store that does not answer at the start.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/tcpproxy"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/migrations"
	"github.com/leafid/leaf/store"
)

// readyz reads the instance's /readyz.
func (a *testApp) readyz(t *testing.T) (int, readyBody) {
	t.Helper()
	code, body := testkit.MustGet(t, a.base+"/readyz")
	var r readyBody
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("readyz = %d %s: %v", code, body, err)
	}
	return code, r
}

// TestServeStoreDownAtStart: an instance starts while one store of its set
// does not answer: it serves from the others, /readyz shows that store
// degraded, and once the store answers it is migrated (or, with
// --migrate=false, its schema checked), shown ok, and used again.
func TestServeStoreDownAtStart(t *testing.T) {
	for _, migrate := range []bool{true, false} {
		t.Run(fmt.Sprintf("migrate=%v", migrate), func(t *testing.T) {
			inEmptyDir(t)
			defer clusterClient.CloseIdleConnections()
			s := testStores(t, []string{store.MySQL, store.SQLite}, 3)
			a, b, c := s[0], s[1], s[2]
			leafOK(t, storesEnv(a, b, c), "store", "init")
			leafOK(t, storesEnv(a, b, c), "tag", "add", "orders", "--step", "100")
			// Store a lacks the record of its latest migration: a migration
			// run once it answers applies it again (it is idempotent, as
			// every migration of leaf's so far).
			latest, err := migrations.Latest(migrations.MySQL)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.open(t).DB().Exec("DELETE FROM "+migrations.VersionTable+" WHERE version_id = ?", latest); err != nil {
				t.Fatal(err)
			}

			cfg, err := mysql.ParseDSN(a.dsn)
			if err != nil {
				t.Fatal(err)
			}
			proxy := tcpproxy.Start(t, cfg.Addr)
			proxy.Cut()
			cfg.Addr = proxy.Addr()
			down := a
			down.dsn = cfg.FormatDSN()

			// Ranges by the row's step and its doubling alone: the next
			// range is soon due, and comes from store a once it answers.
			inst := startApp(t, storesEnv(down, b, c), "--snowflake=false", fmt.Sprintf("--migrate=%v", migrate), "--ride-through", "0")
			code, ready := inst.readyz(t)
			if r := ready.check("store:a"); code != http.StatusOK || ready.Status != "degraded" || r.Status != "degraded" ||
				!strings.Contains(r.Reason, "has not answered since") {
				t.Fatalf("readyz with store a down = %d %+v", code, ready)
			}
			for _, name := range []string{"store:b", "store:c"} {
				if r := ready.check(name); r.Status != "ok" {
					t.Fatalf("readyz check %s = %+v", name, r)
				}
			}
			var all seen
			for range 5 {
				ids, err := fetchIDs(inst.base, "orders", 50)
				all.add(inst.base, ids, err)
			}
			all.check(t)
			logs := inst.logs.String()
			if !strings.Contains(logs, `msg="store open, not answering: the other stores serve until it answers" store=a`) {
				t.Fatalf("the store down at the start is not logged:\n%s", logs)
			}

			proxy.Pass()
			defer func() {
				if t.Failed() {
					t.Log(inst.logs.String())
				}
			}()
			testkit.WaitFor(t, 0, "store a ok in /readyz", func() bool {
				_, ready := inst.readyz(t)
				return ready.Status == "ready" && ready.check("store:a").Status == "ok"
			})
			logs = inst.logs.String()
			want := `msg="store answering: migrated" store=a`
			if !migrate {
				want = `msg="store answering: its schema is the one this version needs" store=a`
			}
			if !strings.Contains(logs, want) {
				t.Fatalf("logged no %s:\n%s", want, logs)
			}
			raw, err := sql.Open("mysql", a.dsn) // not migrated, as a.open would
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			var applied int
			if err := raw.QueryRow("SELECT COUNT(*) FROM "+migrations.VersionTable+" WHERE version_id = ? AND is_applied", latest).Scan(&applied); err != nil {
				t.Fatal(err)
			}
			if migrate != (applied == 1) {
				t.Fatalf("migration %d recorded %d times in store a with --migrate=%v", latest, applied, migrate)
			}

			// The instance prefers a: once it answers, ranges come from it,
			// in its class.
			sa := a.open(t)
			before, err := sa.Tag(context.Background(), "orders")
			if err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, 0, "a range from store a", func() bool {
				ids, err := fetchIDs(inst.base, "orders", 100)
				all.add(inst.base, ids, err)
				row, err := sa.Tag(context.Background(), "orders")
				return err == nil && row.MaxID > before.MaxID
			})
			all.check(t)
			if err := inst.stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestServeEveryStoreDown: with no store answering the set cannot be
// checked, and serve does not start; the password is shown nowhere.
func TestServeEveryStoreDown(t *testing.T) {
	inEmptyDir(t)
	s := testStores(t, []string{store.MySQL}, 2)
	leafOK(t, storesEnv(s...), "store", "init")
	for i := range s {
		cfg, err := store.ParseMySQLDSN(s[i].dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Addr, cfg.Passwd = "127.0.0.1:1", "s3cret"
		s[i].dsn = cfg.FormatDSN()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logs := &testkit.SyncBuffer{}
	err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, storesEnv(s...).get, io.Discard, logs)
	if err == nil || !strings.Contains(err.Error(), "no store answered") {
		t.Fatalf("serve with every store down = %v, want a failed start saying no store answered", err)
	}
	if strings.Contains(logs.String()+err.Error(), "s3cret") {
		t.Fatalf("the password is shown: %v\n%s", err, logs)
	}
}
