package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store"
)

// TestCappedShare: one call takes at most --capped-share of a capped
// format's period (a tenth by default): a batch of 10 of a {seq:2!} tag
// (99 numbers a day) is invalid_count and takes nothing, one of 9 is
// served, and the refusal is counted; the period's headroom, 90 numbers
// of 99 left, is on /metrics.
func TestCappedShare(t *testing.T) {
	cfg := testConfig(t)
	srv := serving(t, cfg)
	base := "http://" + srv.Addr()
	req, err := http.NewRequest(http.MethodPost, base+"/api/admin/tags", strings.NewReader(`{"tag":"inv","format":"INV-{date:20060102}-{seq:2!}","reset":"day"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+cfg.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create = %d", resp.StatusCode)
	}
	if code, body := get(t, base+"/api/segment/batch/inv?count=10"); code != http.StatusBadRequest ||
		!strings.Contains(body, `"invalid_count"`) || !strings.Contains(body, "at most 9 of them") {
		t.Errorf("a batch of 10 of 99 = %d %s; want invalid_count, at most 9", code, body)
	}
	if code, body := get(t, base+"/api/segment/batch/inv?count=9"); code != http.StatusOK || !strings.Contains(body, "-01") || !strings.Contains(body, "-09") {
		t.Errorf("a batch of 9 = %d %s; want the period's first nine", code, body)
	}
	_, body := get(t, base+"/metrics")
	for _, want := range []string{`leaf_limit_refused_total{limit="capped_share"} 1`,
		`leaf_capped_period_left{tag="inv"} 90`, `leaf_capped_period_used_ratio{tag="inv"} 0.0909`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}

// TestSnowflakeLease: --snowflake-lease is the lease a leased worker id is
// taken for: the row's expiry is a lease from now, and the start-up line
// says it.
func TestSnowflakeLease(t *testing.T) {
	cfg := testConfig(t)
	cfg.SnowflakeLease = 90 * time.Second
	var logs testkit.SyncBuffer
	before := time.Now()
	servingWith(t, cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	st, err := store.OpenSQLite(context.Background(), cfg.SQLitePath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var expires int64
	if err := st.DB().Get(&expires, "SELECT MAX(expires_ms) FROM leaf_worker_lease"); err != nil {
		t.Fatal(err)
	}
	if got := time.UnixMilli(expires).Sub(before); got < 85*time.Second || got > 95*time.Second {
		t.Errorf("the worker lease expires %v after the start; want about 90s", got)
	}
	if !strings.Contains(logs.String(), `"lease":"1m30s"`) {
		t.Errorf("the start-up logs do not name the lease of 1m30s:\n%s", logs.String())
	}
}

// TestRangeMax: a range asked larger than --range-max is answered with at
// most that many ids, and counted; one within it is answered whole.
func TestRangeMax(t *testing.T) {
	cfg := testConfig(t)
	cfg.RangeMax = 500
	srv := serving(t, cfg)
	base := "http://" + srv.Addr()
	if code, body := testkit.Post(base+"/api/admin/tags", cfg.AdminToken, `{"tag":"bulk","step":100000}`); code != http.StatusCreated {
		t.Fatalf("create = %d %s", code, body)
	}
	for _, c := range []struct{ ask, most int }{{1_000_000, 500}, {300, 300}} {
		code, body := get(t, fmt.Sprintf("%s/api/segment/range/bulk?count=%d", base, c.ask))
		var r struct{ Count int }
		if code != http.StatusOK || json.Unmarshal([]byte(body), &r) != nil || r.Count < 1 || r.Count > c.most {
			t.Errorf("range of %d = %d %s; want 200 with 1..%d ids", c.ask, code, body, c.most)
		}
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, `leaf_limit_clamped_total{limit="range_count"} 1`) {
		t.Error(`/metrics has no leaf_limit_clamped_total{limit="range_count"} 1`)
	}
}

// TestMaxConns: past --max-conns connections a new one waits to be
// accepted, and is served once one of the others closes.
func TestMaxConns(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxConns = 2
	srv := serving(t, cfg)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	client := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := client.Get("http://" + srv.Addr() + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatalf("a third connection was served (%d) while two were held", resp.StatusCode)
	}
	held[0].Close()
	client.Timeout = 5 * time.Second
	resp, err := client.Get("http://" + srv.Addr() + "/healthz")
	if err != nil {
		t.Fatalf("once one closed: %v", err)
	}
	resp.Body.Close()
	resp, err = client.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "leaf_http_connections_max 2\n") || !strings.Contains(string(body), "leaf_http_connections 2\n") {
		t.Errorf("/metrics does not count 2 connections open of 2: %q", linesWith(string(body), "leaf_http_connections"))
	}
}
