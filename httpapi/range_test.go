package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

type rangeJSON struct {
	Tag   string `json:"tag"`
	Start string `json:"start"`
	Count int    `json:"count"`
}

func TestSegmentRange(t *testing.T) {
	v := newEnv(t)
	rec := v.do(t, http.MethodGet, "/api/segment/range/orders?count=1000", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d; %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q", ct)
	}
	if got, want := strings.TrimSpace(rec.Body.String()), `{"tag":"orders","start":"1","count":1000}`; got != want {
		t.Fatalf("body = %s, want %s", got, want)
	}
	// The next range starts where this one ended, and other routes share
	// the numbering.
	var out rangeJSON
	decodeBody(t, v.do(t, http.MethodGet, "/api/segment/range/orders?count=5", nil), &out)
	if out != (rangeJSON{Tag: "orders", Start: "1001", Count: 5}) {
		t.Fatalf("second range = %+v", out)
	}
	if rec := v.do(t, http.MethodGet, "/api/segment/get/orders", nil); rec.Body.String() != "1006" {
		t.Fatalf("get after ranges = %s", rec.Body)
	}
}

func TestSegmentRangeMayBeShort(t *testing.T) {
	v := newEnv(t)
	v.seg.rangeCap = 300
	var out rangeJSON
	decodeBody(t, v.do(t, http.MethodGet, "/api/segment/range/orders?count=1000", nil), &out)
	if out != (rangeJSON{Tag: "orders", Start: "1", Count: 300}) {
		t.Fatalf("range = %+v", out)
	}
}

func TestSegmentRangeCount(t *testing.T) {
	t.Run("the largest range", func(t *testing.T) {
		// Asked for, and answered with at most --range-max.
		v := newEnv(t)
		var out rangeJSON
		decodeBody(t, v.do(t, http.MethodGet, fmt.Sprintf("/api/segment/range/orders?count=%d", httpapi.MaxRangeCount), nil), &out)
		if httpapi.MaxRangeCount != 1_000_000 || out.Count != service.DefaultRangeMax {
			t.Fatalf("range = %+v (MaxRangeCount %d, DefaultRangeMax %d)", out, httpapi.MaxRangeCount, service.DefaultRangeMax)
		}
	})
	for _, q := range []string{"", "?count=", "?count=0", "?count=-1", "?count=1000001", "?count=%2B5",
		"?count=1e3", "?count=99999999999999999999", "?count=5&count=6"} {
		t.Run(q, func(t *testing.T) {
			v := newEnv(t)
			e := wantError(t, v.do(t, http.MethodGet, "/api/segment/range/orders"+q, nil), 400, "invalid_count")
			if q != "?count=5&count=6" && !strings.Contains(e.Error.Message, "1 to 1000000") {
				t.Errorf("message %q does not give the range", e.Error.Message)
			}
			if n := v.seg.total(); n != 0 {
				t.Errorf("%d ids taken", n)
			}
		})
	}
}

func TestSegmentRangeErrors(t *testing.T) {
	tests := []struct {
		name   string
		target string
		setup  func(*env)
		status int
		code   string
	}{
		{name: "unknown tag", target: "/api/segment/range/nosuch?count=5", status: 404, code: "unknown_tag"},
		{name: "empty tag", target: "/api/segment/range/?count=5", status: 400, code: "invalid_tag"},
		{name: "tag too long", target: "/api/segment/range/" + strings.Repeat("a", 129) + "?count=5", status: 400, code: "invalid_tag"},
		{name: "exhausted", target: "/api/segment/range/orders?count=5", status: 410, code: "tag_exhausted",
			setup: func(v *env) { v.seg.setErr("orders", segment.ErrExhausted) }},
		{name: "misconfigured", target: "/api/segment/range/orders?count=5", status: 500, code: "tag_misconfigured",
			setup: func(v *env) { v.seg.setErr("orders", segment.ErrMisconfigured) }},
		{name: "unavailable", target: "/api/segment/range/orders?count=5", status: 503, code: "unavailable",
			setup: func(v *env) { v.seg.setErr("orders", segment.ErrUnavailable) }},
		{name: "mode off", target: "/api/segment/range/orders?count=5", status: 404, code: "not_found",
			setup: func(v *env) { v.e = httpapi.New(httpapi.Config{}) }},
		{name: "wrong method", target: "/api/segment/range/orders?count=5", status: 405, code: "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			if tt.setup != nil {
				tt.setup(v)
			}
			method := http.MethodGet
			if tt.code == "method_not_allowed" {
				method = http.MethodPost
			}
			e := wantError(t, v.do(t, method, tt.target, nil), tt.status, tt.code)
			if tt.code == "unknown_tag" && e.Error.Message != `biz tag "nosuch" does not exist` {
				t.Errorf("message = %q", e.Error.Message)
			}
		})
	}
}

func TestSegmentRangeMetrics(t *testing.T) {
	v := newEnv(t)
	v.do(t, http.MethodGet, "/api/segment/range/orders?count=700", nil)
	route := map[string]string{"route": "/api/segment/range/:tag", "method": "GET", "status": "200"}
	if n, _ := value(t, v.reg, "leaf_http_requests_total", route); n != 1 {
		t.Fatalf("requests = %v", n)
	}
	if err := metrics.Register(v.reg, metrics.Sources{Segments: v.seg}); err != nil {
		t.Fatal(err)
	}
	if n, _ := value(t, v.reg, "leaf_ids_issued_total", map[string]string{"mode": "segment", "tag": "orders"}); n != 700 {
		t.Fatalf("issued = %v, want 700", n)
	}
}
