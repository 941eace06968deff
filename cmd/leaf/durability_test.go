package main

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/testkit"
)

// durabilityStatus is /status.json's "durability".
type durabilityStatus struct {
	Durability []struct {
		Store   string `json:"store"`
		Node    string `json:"node"`
		Durable *bool  `json:"durable"`
		Why     string `json:"why"`
	} `json:"durability"`
}

// durabilityOf reads what the instance says of its store's durability:
// its readiness check, its status line and its gauge.
func durabilityOf(t *testing.T, a *testApp) (check struct{ Name, Status, Reason string }, status durabilityStatus, gauge string) {
	t.Helper()
	_, ready := a.readyz(t)
	check = ready.check("durability")
	if err := a.fetchJSON("/status.json", &status); err != nil {
		t.Fatal(err)
	}
	_, metrics := testkit.MustGet(t, a.base+"/metrics")
	for line := range strings.SplitSeq(metrics, "\n") {
		if strings.HasPrefix(line, "leaf_store_durable{") {
			gauge += line + "\n"
		}
	}
	return check, status, strings.TrimSpace(gauge)
}

// TestServeReportsDurability: an instance reads its store's settings at
// the start and says what they risk: on a SQLite file (leaf's own
// synchronous=FULL in WAL mode) all is well; an in-memory database can
// forget everything, which degrades readiness (never fails it), shows on
// /status.json and as leaf_store_durable 0, and is logged once with what
// to change. Ids are still served: only --require-durable refuses.
func TestServeReportsDurability(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		a := startApp(t, env{"LEAF_SQLITE_PATH": filepath.Join(t.TempDir(), "leaf.db")}, "--snowflake=false")
		check, status, gauge := durabilityOf(t, a)
		if check.Status != "ok" {
			t.Errorf("durability check %+v, want ok", check)
		}
		if len(status.Durability) != 1 || status.Durability[0].Durable == nil || !*status.Durability[0].Durable ||
			!strings.Contains(status.Durability[0].Why, "synchronous=FULL, journal_mode=wal") {
			t.Errorf("status %+v, want one durable line naming synchronous=FULL in WAL mode", status)
		}
		if gauge != `leaf_store_durable{store=""} 1` {
			t.Errorf("gauge %q, want 1", gauge)
		}
		if logs := a.logs.String(); strings.Count(logs, "settings keep every commit it acknowledged") != 1 {
			t.Errorf("want one INFO line about the settings:\n%s", logs)
		}
	})
	t.Run("memory", func(t *testing.T) {
		a := startApp(t, env{"LEAF_SQLITE_PATH": ":memory:", "LEAF_ADMIN_TOKEN": namesToken}, "--snowflake=false")
		code, ready := a.readyz(t)
		check, status, gauge := durabilityOf(t, a)
		if code != http.StatusOK || ready.Status != "degraded" || check.Status != "degraded" ||
			!strings.Contains(check.Reason, "the database can forget commits it acknowledged: the database is in memory") ||
			!strings.Contains(check.Reason, "give --sqlite-path a file") {
			t.Errorf("readyz %d %s, durability check %+v; want 200 degraded, the reason and what to change", code, ready.Status, check)
		}
		if len(status.Durability) != 1 || status.Durability[0].Durable == nil || *status.Durability[0].Durable {
			t.Errorf("status %+v, want one line, not durable", status)
		}
		if gauge != `leaf_store_durable{store=""} 0` {
			t.Errorf("gauge %q, want 0", gauge)
		}
		logs := a.logs.String()
		if strings.Count(logs, "the database can forget commits it acknowledged") != 1 || !strings.Contains(logs, `change="--sqlite-path=FILE"`) {
			t.Errorf("want one WARN line saying what to change:\n%s", logs)
		}
		if code, body := adminPost(t, a.base, "/api/admin/tags", `{"tag":"orders"}`); code != http.StatusCreated {
			t.Fatalf("create = %d %s", code, body)
		}
		if code, body := testkit.MustGet(t, a.base+"/api/segment/get/orders"); code != http.StatusOK {
			t.Errorf("without --require-durable: %d %s, want an id", code, body)
		}
	})
}

// TestServeRequireDurable: with --require-durable an instance takes no
// range from a store that can forget: every route that takes numbers
// answers 503 store_not_durable naming the reason, the log says why, and
// readiness says so; with
// snowflake worker ids leased from such a store it does not start. On a
// durable store it serves as usual.
func TestServeRequireDurable(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		a := startApp(t, env{"LEAF_SQLITE_PATH": ":memory:", "LEAF_ADMIN_TOKEN": namesToken, "LEAF_REQUIRE_DURABLE": "true"}, "--snowflake=false")
		for path, body := range map[string]string{"/api/admin/tags": `{"tag":"orders"}`, "/api/admin/sequences": `{"space":"inbox"}`} {
			if code, out := adminPost(t, a.base, path, body); code != http.StatusCreated {
				t.Fatalf("create %s = %d %s", body, code, out)
			}
		}
		if code, out := adminPost(t, a.base, "/api/admin/tags", `{"tag":"payments","ordered":true}`); code != http.StatusCreated {
			t.Fatalf("create payments = %d %s", code, out)
		}
		// Every route that takes numbers refuses with the reason and the
		// setting, not as a store that does not answer.
		for _, path := range []string{"/api/segment/get/orders", "/api/segment/batch/orders?count=2", "/api/segment/range/orders?count=10",
			"/api/segment/get/payments", "/api/sequence/next/inbox/u1"} {
			code, body := testkit.MustGet(t, a.base+path)
			if code != http.StatusServiceUnavailable || !strings.Contains(body, `"store_not_durable"`) ||
				!strings.Contains(body, "the database is in memory") || !strings.Contains(body, "--require-durable") {
				t.Errorf("%s = %d %s, want 503 store_not_durable naming the reason and --require-durable", path, code, body)
			}
		}
		check, _, _ := durabilityOf(t, a)
		if check.Status != "degraded" || !strings.Contains(check.Reason, "--require-durable: no range is taken from it") {
			t.Errorf("durability check %+v, want degraded, saying no range is taken", check)
		}
		if logs := a.logs.String(); !strings.Contains(logs, "can forget acknowledged commits") || !strings.Contains(logs, "until then no range is taken from it (--require-durable)") {
			t.Errorf("the log does not say why loads fail:\n%s", logs)
		}
	})
	t.Run("leased worker ids", func(t *testing.T) {
		logs := &testkit.SyncBuffer{}
		a, err := newApp([]string{"--addr", "127.0.0.1:0", "--sqlite-path", ":memory:", "--require-durable"}, env{}.get, logs)
		if err != nil {
			t.Fatal(err)
		}
		err = errors.Join(a.Open(context.Background()), a.Close())
		if err == nil || !strings.Contains(err.Error(), "snowflake") || !strings.Contains(err.Error(), "can forget acknowledged commits") {
			t.Fatalf("open = %v, want the worker lease refused", err)
		}
	})
	t.Run("file", func(t *testing.T) {
		a := startApp(t, env{"LEAF_SQLITE_PATH": filepath.Join(t.TempDir(), "leaf.db"), "LEAF_ADMIN_TOKEN": namesToken}, "--require-durable")
		if code, body := adminPost(t, a.base, "/api/admin/tags", `{"tag":"orders"}`); code != http.StatusCreated {
			t.Fatalf("create = %d %s", code, body)
		}
		for _, path := range []string{"/api/segment/get/orders", "/api/snowflake/get"} {
			if code, body := testkit.MustGet(t, a.base+path); code != http.StatusOK {
				t.Errorf("%s = %d %s, want an id", path, code, body)
			}
		}
		if check, _, _ := durabilityOf(t, a); check.Status != "ok" {
			t.Errorf("durability check %+v, want ok", check)
		}
	})
}

// TestServeDurabilityChanges: on a MariaDB server of its own with
// innodb_flush_log_at_trx_commit=2, an instance with --require-durable
// refuses ranges and says which setting to change, naming no address in
// /readyz; once the setting is 1 and read again, it logs the change, is
// ready and serves.
func TestServeDurabilityChanges(t *testing.T) {
	mariadbtest.Require(t)
	srv := mariadbtest.StartServer(t)
	root, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, q := range []string{"CREATE DATABASE leaf", "SET GLOBAL innodb_flush_log_at_trx_commit = 2"} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	a := startApp(t, env{"LEAF_MYSQL_DSN": srv.DSN("leaf"), "LEAF_ADMIN_TOKEN": namesToken, "LEAF_REQUIRE_DURABLE": "1"}, "--snowflake=false")
	if code, body := adminPost(t, a.base, "/api/admin/tags", `{"tag":"orders"}`); code != http.StatusCreated {
		t.Fatalf("create = %d %s", code, body)
	}
	if code, body := testkit.MustGet(t, a.base+"/api/segment/get/orders"); code != http.StatusServiceUnavailable {
		t.Errorf("get = %d %s, want 503", code, body)
	}
	check, status, gauge := durabilityOf(t, a)
	if check.Status != "degraded" || !strings.Contains(check.Reason, "innodb_flush_log_at_trx_commit=2: a commit survives a crash of mysqld, not of the machine") ||
		!strings.Contains(check.Reason, "set innodb_flush_log_at_trx_commit=1") || strings.Contains(check.Reason, srv.Addr()) {
		t.Errorf("durability check %+v, want degraded, naming the setting and not the address", check)
	}
	if len(status.Durability) != 1 || status.Durability[0].Node != srv.Addr() {
		t.Errorf("status %+v, want the node %s", status, srv.Addr())
	}
	if gauge != `leaf_store_durable{store=""} 0` {
		t.Errorf("gauge %q, want 0", gauge)
	}
	if logs := a.logs.String(); !strings.Contains(logs, "change=\"innodb_flush_log_at_trx_commit=1 on "+srv.Addr()+"\"") {
		t.Errorf("the log does not name the setting to change and where:\n%s", logs)
	}

	if _, err := root.Exec("SET GLOBAL innodb_flush_log_at_trx_commit = 1"); err != nil {
		t.Fatal(err)
	}
	a.OpenedStores()[0].CheckDurability(context.Background()) // as the minute's reading does
	if code, body := testkit.MustGet(t, a.base+"/api/segment/get/orders"); code != http.StatusOK {
		t.Errorf("get = %d %s once durable, want an id", code, body)
	}
	check, _, gauge = durabilityOf(t, a)
	if check.Status != "ok" || gauge != `leaf_store_durable{store=""} 1` {
		t.Errorf("durability check %+v, gauge %q; want ok and 1", check, gauge)
	}
	if logs := a.logs.String(); strings.Count(logs, "settings keep every commit it acknowledged") != 1 {
		t.Errorf("the change is not logged once:\n%s", logs)
	}
}
