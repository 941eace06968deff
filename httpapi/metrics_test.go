package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/leafid/leaf/httpapi"
)

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
