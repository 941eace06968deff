package app

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
)

// TestLogs: what an operator reads of the troubles of the parts: one line
// per event at the level it deserves, naming the store of a set; a
// failure that repeats logged once a period, and a row an operator must
// fix once until it is served again; a tag that does not exist is not
// worth a line.
func TestLogs(t *testing.T) {
	var buf bytes.Buffer
	cfg := testConfig(t)
	cfg.RequireDurable = true
	a := New(cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	lines := func() []string {
		defer buf.Reset()
		return strings.Split(strings.TrimSpace(buf.String()), "\n")
	}
	want := func(what string, got []string, parts ...[]string) {
		t.Helper()
		if len(got) != len(parts) {
			t.Fatalf("%s: %d lines, want %d:\n%s", what, len(got), len(parts), strings.Join(got, "\n"))
		}
		for i, p := range parts {
			for _, s := range p {
				if !strings.Contains(got[i], s) {
					t.Errorf("%s: line %d %q has no %q", what, i+1, got[i], s)
				}
			}
		}
	}
	down := errors.New("connection refused")

	health := a.healthLogger("b")
	health(store.Health{Up: false, Err: down})
	health(store.Health{Up: true, DownFor: 1500 * time.Millisecond, Failed: 3, Err: down})
	want("health", lines(), []string{"level=WARN", "store=b", "not answering", "connection refused"},
		[]string{"level=INFO", "answering again", "down_for=1.5s", "failed_calls=3"})

	l := newLoadLimiters()
	a.logLoad(l, "gone", fmt.Errorf("load: %w", segment.ErrUnknownTag))
	a.logLoad(l, "orders", down)
	a.logLoad(l, "orders", down)
	a.logLoad(l, "full", segment.ErrExhausted)
	a.logLoad(l, "full", segment.ErrExhausted)
	a.logLoad(l, "full", nil)
	a.logLoad(l, "full", segment.ErrExhausted)
	want("loads", lines(), []string{"level=WARN", "tag=orders", "segment load failed"},
		[]string{"level=ERROR", "tag=full", "until an operator fixes it"},
		[]string{"level=ERROR", "tag=full", "until an operator fixes it"})

	a.logRegression(segment.Regression{Tag: "orders", High: 5000, Found: 1000, MaxID: 1_005_000})
	a.logRegression(segment.Regression{Tag: "orders", High: 5000, Found: 1000, Err: down})
	a.logStale("b", "orders", 7000)
	want("regressions", lines(), []string{"level=ERROR", "went back in time", "new_max_id=1005000", "failover_jump="},
		[]string{"level=ERROR", "could not be moved forward", "connection refused"},
		[]string{"level=ERROR", "store=b", "mark=7000"})

	lease := a.leaseLogger()
	lease(snowflake.LeaseEvent{WorkerID: 3, Err: down})
	lease(snowflake.LeaseEvent{WorkerID: 3, Err: down})
	lease(snowflake.LeaseEvent{WorkerID: 3})
	lease(snowflake.LeaseEvent{WorkerID: 4, Acquired: true})
	lease(snowflake.LeaseEvent{WorkerID: 4, Err: fmt.Errorf("%w: %w", snowflake.ErrLeaseLost, snowflake.ErrLeaseRegressed)})
	lease(snowflake.LeaseEvent{WorkerID: 4, Err: snowflake.ErrLeaseLost})
	want("leases", lines(), []string{"level=WARN", "not renewed", "worker_id=3"},
		[]string{"level=INFO", "acquired again", "worker_id=4"},
		[]string{"level=ERROR", "went back in time"},
		[]string{"level=ERROR", "held by another"})

	durability := a.durabilityLogger("")
	durability(store.Durability{Nodes: []store.NodeDurability{{Known: true, Durable: true, Why: "innodb_flush_log_at_trx_commit=1"}}})
	durability(store.Durability{Nodes: []store.NodeDurability{{Known: true, Why: "innodb_flush_log_at_trx_commit=0"}}})
	durability(store.Durability{Nodes: []store.NodeDurability{{Err: down}}})
	got := lines()
	want("durability", got, []string{"level=INFO", "keep every commit", "innodb_flush_log_at_trx_commit=1"},
		[]string{"level=WARN", "can forget commits", "--require-durable", "innodb_flush_log_at_trx_commit=0"},
		[]string{"level=WARN", "could not be read", "connection refused"})
	if text := strings.Join(got, "\n"); strings.Contains(text, "store=") {
		t.Errorf("the one store is named: %s", text)
	}
}
