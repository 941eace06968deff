package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// testConfig is leaf serve's configuration with its defaults, on a fresh
// SQLite file and a free port, every mode on.
func testConfig(t *testing.T) Config {
	return Config{
		StoreConfig: StoreConfig{SQLitePath: storetest.SQLite(t)},
		Addr:        "127.0.0.1:0", Migrate: true, Segment: true, Snowflake: true, Sequences: true,
		WorkerID: -1, EpochMs: snowflake.DefaultEpochMs, Layout: snowflake.DefaultLayout(), AdminToken: "admin",
		RefreshTags: segment.DefaultRefreshInterval, FailoverJump: segment.DefaultFailoverJump,
		PeriodGrace: bizid.DefaultGrace, SequenceLease: sequence.DefaultLease, ForwardTimeout: time.Second, Version: "test",
	}
}

// get is the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServerLife: a server opens its parts, reports every check of its
// readiness in order, serves, and on a clean stop hands the unused ids of
// its range back to the store, so the next server continues where it
// stopped.
func TestServerLife(t *testing.T) {
	cfg := testConfig(t)
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, cfg.SQLitePath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 1000}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var last int64
	for round := range 2 {
		srv := New(cfg, slog.New(slog.DiscardHandler))
		if err := srv.Open(ctx); err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		ran := make(chan error, 1)
		go func() { ran <- srv.Run(rctx) }()
		base := "http://" + srv.Addr()

		code, body := get(t, base+"/readyz")
		var ready struct {
			Status string
			Checks []struct{ Name, Status string }
		}
		if err := json.Unmarshal([]byte(body), &ready); err != nil || code != http.StatusOK || ready.Status != "ready" {
			t.Fatalf("/readyz = %d %s", code, body)
		}
		var names []string
		for _, c := range ready.Checks {
			names = append(names, c.Name)
		}
		if got := strings.Join(names, ","); got != "lifecycle,schema,store,durability,snowflake" {
			t.Errorf("/readyz checks %s", got)
		}
		code, body = get(t, base+"/api/segment/get/orders")
		var id int64
		if err := json.Unmarshal([]byte(body), &id); code != http.StatusOK || err != nil || id <= last {
			t.Fatalf("round %d: id %s (%d), want one above %d", round, body, code, last)
		}
		if round == 1 && id != last+1 {
			t.Errorf("after a clean stop the next server issued %d, want %d: the unused ids were not handed back", id, last+1)
		}
		last = id
		stop()
		if err := <-ran; err != nil {
			t.Fatalf("Run = %v", err)
		}
		if err := srv.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
	}
}

// TestCloseAfterFailedOpen: a server whose port is taken fails to open,
// and Close then stops what it had opened, the store included.
func TestCloseAfterFailedOpen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := testConfig(t)
	cfg.Addr = ln.Addr().String()
	srv := New(cfg, slog.New(slog.DiscardHandler))
	err = srv.Open(context.Background())
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("Open on a port in use = %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close after a failed Open = %v", err)
	}
	for _, st := range srv.OpenedStores() {
		if err := st.Ping(context.Background()); err == nil {
			t.Error("a store is still open after Close")
		}
	}
}
