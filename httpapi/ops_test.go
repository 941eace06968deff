package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/snowflake"
)

func TestReadyz(t *testing.T) {
	ok := func(context.Context) error { return nil }
	fail := func(context.Context) error { return errors.New("dial db:3306: refused") }
	degraded := func(context.Context) error { return fmt.Errorf("%w: dial db:3306: refused", httpapi.ErrDegraded) }
	slow := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	stuck := func(context.Context) error { time.Sleep(2 * time.Second); return nil }
	tests := []struct {
		name     string
		checks   []httpapi.Check
		status   int
		state    string
		failing  []string
		degraded []string
	}{
		{"all pass", []httpapi.Check{{Name: "store", Func: ok}, {Name: "snowflake", Func: ok}}, 200, "ready", nil, nil},
		{"one fails", []httpapi.Check{{Name: "store", Func: fail}, {Name: "snowflake", Func: ok}}, 503, "not_ready", []string{"store"}, nil},
		{"two fail", []httpapi.Check{{Name: "store", Func: fail}, {Name: "segment", Func: ok}, {Name: "snowflake", Func: fail}}, 503, "not_ready", []string{"store", "snowflake"}, nil},
		{"a shared outage keeps it ready", []httpapi.Check{{Name: "store", Func: degraded}, {Name: "snowflake", Func: ok}}, 200, "degraded", nil, []string{"store"}},
		{"degraded and failing", []httpapi.Check{{Name: "store", Func: degraded}, {Name: "snowflake", Func: fail}}, 503, "not_ready", []string{"snowflake"}, []string{"store"}},
		{"nil func fails", []httpapi.Check{{Name: "broken"}}, 503, "not_ready", []string{"broken"}, nil},
		{"panicking check fails", []httpapi.Check{{Name: "panics", Func: func(context.Context) error { panic("x") }}}, 503, "not_ready", []string{"panics"}, nil},
		{"check bound by its timeout", []httpapi.Check{{Name: "slow", Func: slow}}, 503, "not_ready", []string{"slow"}, nil},
		{"a check that ignores its context is not waited for", []httpapi.Check{{Name: "stuck", Func: stuck}, {Name: "store", Func: ok}}, 503, "not_ready", []string{"stuck"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t, func(c *httpapi.Config) { c.Checks = tt.checks })
			start := time.Now()
			rec := v.do(t, http.MethodGet, "/readyz", nil)
			// A bound of the contract, not a measure of speed: /readyz
			// answers within 100 ms whatever its checks do.
			if took := time.Since(start); took > 100*time.Millisecond {
				t.Errorf("readyz took %v", took)
			}
			if rec.Code != tt.status {
				t.Fatalf("status = %d; %s", rec.Code, rec.Body)
			}
			var out struct {
				Status   string `json:"status"`
				Checks   []struct{ Name, Status string }
				Degraded []string
				Error    *struct{ Code, Message string }
			}
			decodeBody(t, rec, &out)
			if out.Status != tt.state {
				t.Errorf("status %q, want %q", out.Status, tt.state)
			}
			if len(out.Checks) != len(tt.checks) {
				t.Fatalf("checks = %+v", out.Checks)
			}
			var failing, degraded []string
			for i, c := range out.Checks {
				if c.Name != tt.checks[i].Name {
					t.Errorf("check %d named %q", i, c.Name)
				}
				switch c.Status {
				case "failing":
					failing = append(failing, c.Name)
				case "degraded":
					degraded = append(degraded, c.Name)
				}
			}
			if strings.Join(failing, ",") != strings.Join(tt.failing, ",") {
				t.Errorf("failing = %v, want %v", failing, tt.failing)
			}
			if strings.Join(degraded, ",") != strings.Join(tt.degraded, ",") || strings.Join(out.Degraded, ",") != strings.Join(tt.degraded, ",") {
				t.Errorf("degraded = %v (body %v), want %v", degraded, out.Degraded, tt.degraded)
			}
			if strings.Contains(rec.Body.String(), "3306") {
				t.Errorf("body leaks the cause: %s", rec.Body)
			}
			if tt.status == 503 {
				if out.Error == nil || out.Error.Code != "unavailable" || rec.Header().Get("Retry-After") == "" {
					t.Fatalf("503 body %s", rec.Body)
				}
				for _, name := range tt.failing {
					if !strings.Contains(out.Error.Message, name) {
						t.Errorf("message %q does not name %q", out.Error.Message, name)
					}
				}
			}
		})
	}
}

// gather returns the metric family name from reg, or nil.
func gather(tb testing.TB, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return nil
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value finds the metric whose labels include want and returns its value
// (counter, gauge or histogram sample count).
func value(tb testing.TB, reg prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	tb.Helper()
	mf := gather(tb, reg, name)
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		got := labelsOf(m)
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestHTTPMetrics(t *testing.T) {
	v := newEnv(t)
	route := map[string]string{"route": "/api/segment/get/:tag", "method": "GET", "status": "200"}
	v.do(t, http.MethodGet, "/api/segment/get/orders", nil)
	n1, ok := value(t, v.reg, "leaf_http_requests_total", route)
	if !ok || n1 != 1 {
		t.Fatalf("requests = %v, %v", n1, ok)
	}
	v.do(t, http.MethodGet, "/api/segment/get/users", nil)
	if n2, _ := value(t, v.reg, "leaf_http_requests_total", route); n2 != 2 {
		t.Fatalf("requests after second = %v", n2)
	}
	if c, _ := value(t, v.reg, "leaf_http_request_duration_seconds", route); c != 2 {
		t.Fatalf("latency samples = %v", c)
	}

	// Unknown tags and unknown paths are counted under their pattern.
	v.do(t, http.MethodGet, "/api/segment/get/nosuch1", nil)
	v.do(t, http.MethodGet, "/api/segment/get/nosuch2", nil)
	v.do(t, http.MethodGet, "/random/path/123", nil)
	v.do(t, "BREW", "/api/segment/get/orders", nil)
	if n, _ := value(t, v.reg, "leaf_http_requests_total", map[string]string{"route": "/api/segment/get/:tag", "status": "404"}); n != 2 {
		t.Fatalf("404s under the pattern = %v", n)
	}
	if n, _ := value(t, v.reg, "leaf_http_requests_total", map[string]string{"route": "unmatched", "status": "404"}); n != 1 {
		t.Fatalf("unmatched 404s = %v", n)
	}
	if n, _ := value(t, v.reg, "leaf_http_requests_total", map[string]string{"method": "OTHER", "status": "405"}); n != 1 {
		t.Fatalf("odd method = %v", n)
	}
	for _, m := range gather(t, v.reg, "leaf_http_requests_total").GetMetric() {
		if r := labelsOf(m)["route"]; strings.Contains(r, "nosuch") || strings.Contains(r, "random") {
			t.Errorf("raw path in route label: %q", r)
		}
	}

	rec := v.do(t, http.MethodGet, "/metrics", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `leaf_http_requests_total{method="GET",route="/api/segment/get/:tag",status="200"} 2`) {
		t.Fatalf("/metrics: %d\n%s", rec.Code, rec.Body)
	}
}

func TestNewTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 {
		e := httpapi.New(httpapi.Config{Registry: reg})
		v := &env{e: e}
		if rec := v.do(t, http.MethodGet, "/healthz", nil); rec.Code != 200 {
			t.Fatalf("healthz %d", rec.Code)
		}
	}
	if n, _ := value(t, reg, "leaf_http_requests_total", map[string]string{"route": "/healthz"}); n != 2 {
		t.Fatalf("healthz count = %v", n)
	}
}

// statsFunc is a snowflake generator's Stats as a test sets them.
type statsFunc struct{ st snowflake.Stats }

func (s *statsFunc) Stats() snowflake.Stats { return s.st }

func TestCollectors(t *testing.T) {
	v := newEnv(t)
	reg := prometheus.NewRegistry()
	stats := &statsFunc{st: snowflake.Stats{WorkerID: 7, Issued: 42, LeaseFailures: 3, LeaseRegressions: 1}}
	if err := reg.Register(httpapi.NewSegmentCollector(v.seg)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(httpapi.NewSnowflakeCollector(stats)); err != nil {
		t.Fatal(err)
	}
	storeUp := true
	if err := reg.Register(httpapi.NewStoreUpCollector(func() bool { return storeUp })); err != nil {
		t.Fatal(err)
	}
	observe, err := httpapi.NewSegmentLoadObserver(reg)
	if err != nil {
		t.Fatal(err)
	}

	v.do(t, http.MethodGet, "/api/segment/batch/orders?count=5", nil)
	v.do(t, http.MethodGet, "/api/segment/get/nosuchtag", nil)
	v.do(t, http.MethodGet, "/api/segment/get/a%20b", nil)
	observe("orders", 3*time.Millisecond, nil)
	observe("nosuchtag", time.Millisecond, errors.New("unknown"))
	stats.st.ClockBackwards = 2
	storeUp = false

	tests := []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
	}{
		{"segment issued", "leaf_ids_issued_total", map[string]string{"mode": "segment", "tag": "orders"}, 5},
		{"segment issued other tag", "leaf_ids_issued_total", map[string]string{"mode": "segment", "tag": "users"}, 0},
		{"snowflake issued", "leaf_ids_issued_total", map[string]string{"mode": "snowflake", "tag": ""}, 42},
		{"loads ok", "leaf_segment_loads_total", map[string]string{"tag": "orders", "result": "ok"}, 2},
		{"loads error", "leaf_segment_loads_total", map[string]string{"tag": "orders", "result": "error"}, 1},
		{"step", "leaf_segment_step", map[string]string{"tag": "orders"}, 1000},
		{"remaining both halves", "leaf_segment_remaining", map[string]string{"tag": "orders"}, 995 + 1000},
		{"waits", "leaf_segment_waits_total", map[string]string{"tag": "orders"}, 3},
		{"clock backwards", "leaf_snowflake_clock_backwards_total", nil, 2},
		{"worker id", "leaf_snowflake_worker_id", nil, 7},
		{"lease failures", "leaf_snowflake_lease_failures_total", nil, 3},
		{"lease regressions", "leaf_snowflake_lease_regressions_total", nil, 1},
		{"regressions", "leaf_segment_regressions_total", map[string]string{"tag": "orders"}, 0},
		{"store down", "leaf_store_up", nil, 0},
		{"load duration ok", "leaf_segment_load_duration_seconds", map[string]string{"result": "ok"}, 1},
		{"load duration error", "leaf_segment_load_duration_seconds", map[string]string{"result": "error"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := value(t, reg, tt.metric, tt.labels)
			if !ok || got != tt.want {
				t.Fatalf("%s%v = %v (found %v), want %v", tt.metric, tt.labels, got, ok, tt.want)
			}
		})
	}

	t.Run("no series for unknown tags", func(t *testing.T) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				tag, has := labelsOf(m)["tag"]
				if has && tag != "orders" && tag != "users" && tag != "" {
					t.Errorf("%s has a series for tag %q", mf.GetName(), tag)
				}
			}
		}
	})

	t.Run("moves after traffic", func(t *testing.T) {
		v.do(t, http.MethodGet, "/api/segment/get/orders", nil)
		if got, _ := value(t, reg, "leaf_ids_issued_total", map[string]string{"mode": "segment", "tag": "orders"}); got != 6 {
			t.Fatalf("issued = %v, want 6", got)
		}
	})
}
