package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

func TestIDRoutes(t *testing.T) {
	snowID := int64(1000<<22 | 7<<12 | 1)
	tests := []struct {
		name     string
		target   string
		wantType string
		wantBody string
	}{
		{"segment get", "/api/segment/get/orders", "text/plain", "1"},
		{"segment get, all tag characters", "/api/segment/get/users", "text/plain", "1"},
		{"segment get, escaped tag", "/api/segment/get/%6Frders", "text/plain", "1"},
		{"segment batch, escaped tag", "/api/segment/batch/ord%65rs?count=2", "application/json", `{"tag":"orders","ids":["1","2"]}`},
		{"segment batch", "/api/segment/batch/orders?count=3", "application/json", `{"tag":"orders","ids":["1","2","3"]}`},
		{"segment batch of max", "/api/segment/batch/orders?count=10000", "application/json", ""},
		{"snowflake get", "/api/snowflake/get", "text/plain", fmt.Sprint(snowID)},
		{"snowflake get with key", "/api/snowflake/get/anything", "text/plain", fmt.Sprint(snowID)},
		{"snowflake batch", "/api/snowflake/batch?count=2", "application/json", fmt.Sprintf(`{"ids":["%d","%d"]}`, snowID, snowID+1)},
		{"snowflake decode", fmt.Sprintf("/api/snowflake/decode/%d", snowID), "application/json",
			fmt.Sprintf(`{"id":"%d","timestamp_ms":%d,"time":"2010-11-04T01:42:55.657Z","worker_id":7,"sequence":1}`, snowID, fakeEpoch+1000)},
		{"healthz", "/healthz", "application/json", `{"status":"ok"}`},
		{"readyz without checks", "/readyz", "application/json", `{"status":"ready","checks":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			rec := v.do(t, http.MethodGet, tt.target, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d; body %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.wantType) {
				t.Errorf("Content-Type = %q, want %s", ct, tt.wantType)
			}
			got := strings.TrimSuffix(rec.Body.String(), "\n")
			if tt.wantBody != "" && got != tt.wantBody {
				t.Errorf("body = %q, want %q", got, tt.wantBody)
			}
		})
	}
}

func TestSegmentBatchIsIncreasing(t *testing.T) {
	v := newEnv(t)
	v.do(t, http.MethodGet, "/api/segment/get/orders", nil)
	rec := v.do(t, http.MethodGet, "/api/segment/batch/orders?count=10000", nil)
	var out struct {
		Tag string   `json:"tag"`
		IDs []string `json:"ids"`
	}
	decodeBody(t, rec, &out)
	if out.Tag != "orders" || len(out.IDs) != 10000 || out.IDs[0] != "2" || out.IDs[9999] != "10001" {
		t.Fatalf("got tag %q, %d ids from %v", out.Tag, len(out.IDs), out.IDs[:1])
	}
}

func TestErrors(t *testing.T) {
	internal := errors.New("dial tcp 10.0.0.7:3306: secret detail")
	tests := []struct {
		name   string
		method string
		target string
		setup  func(*env)
		status int
		code   string
	}{
		{name: "tag not UTF-8", target: "/api/segment/get/ord%FFers", status: 400, code: "invalid_tag"},
		{name: "tag with a slash", target: "/api/segment/get/a/b", status: 400, code: "invalid_tag"},
		{name: "tag of 129 characters", target: "/api/segment/get/" + strings.Repeat("a", 129), status: 400, code: "invalid_tag"},
		{name: "empty tag", target: "/api/segment/get/", status: 400, code: "invalid_tag"},
		{name: "invalid tag in batch", target: "/api/segment/batch/a%C3?count=1", status: 400, code: "invalid_tag"},
		{name: "any UTF-8 is a tag", target: "/api/segment/get/a,b$%20c", status: 404, code: "unknown_tag"},
		{name: "unknown tag", target: "/api/segment/get/nosuch", status: 404, code: "unknown_tag"},
		{name: "unknown tag in batch", target: "/api/segment/batch/nosuch?count=5", status: 404, code: "unknown_tag"},
		{name: "segment unavailable", target: "/api/segment/get/orders", status: 503, code: "unavailable",
			setup: func(v *env) { v.seg.setErr("orders", fmt.Errorf("%w: load: %w", segment.ErrUnavailable, internal)) }},
		{name: "segment closed", target: "/api/segment/get/orders", status: 503, code: "unavailable",
			setup: func(v *env) { v.seg.setErr("orders", segment.ErrClosed) }},
		{name: "segment exhausted", target: "/api/segment/batch/orders?count=2", status: 410, code: "tag_exhausted",
			setup: func(v *env) { v.seg.setErr("orders", segment.ErrExhausted) }},
		{name: "segment row misconfigured", target: "/api/segment/get/orders", status: 500, code: "tag_misconfigured",
			setup: func(v *env) { v.seg.setErr("orders", fmt.Errorf("load: %w", segment.ErrMisconfigured)) }},
		{name: "deadline", target: "/api/segment/get/orders", status: 503, code: "unavailable",
			setup: func(v *env) { v.seg.setErr("orders", context.DeadlineExceeded) }},
		{name: "clock backwards", target: "/api/snowflake/get", status: 503, code: "unavailable",
			setup: func(v *env) { v.snow.err = snowflake.ErrClockBackwards }},
		{name: "epoch range run out", target: "/api/snowflake/get/anykey", status: 503, code: "unavailable",
			setup: func(v *env) { v.snow.err = snowflake.ErrExhausted }},
		{name: "lease lost", target: "/api/snowflake/batch?count=3", status: 503, code: "unavailable",
			setup: func(v *env) { v.snow.err = fmt.Errorf("renew: %w", snowflake.ErrLeaseLost) }},
		{name: "internal", target: "/api/segment/get/orders", status: 500, code: "internal",
			setup: func(v *env) { v.seg.setErr("orders", internal) }},
		{name: "internal from snowflake", target: "/api/snowflake/get", status: 500, code: "internal",
			setup: func(v *env) { v.snow.err = internal }},
		{name: "panic", target: "/api/segment/get/boom", status: 500, code: "internal"},
		{name: "no route", target: "/nope", status: 404, code: "not_found"},
		{name: "no route under api", target: "/api/segment/nope/x", status: 404, code: "not_found"},
		{name: "wrong method", method: http.MethodPost, target: "/api/segment/get/orders", status: 405, code: "method_not_allowed"},
		{name: "wrong method on snowflake", method: http.MethodDelete, target: "/api/snowflake/get", status: 405, code: "method_not_allowed"},
		{name: "decode letters", target: "/api/snowflake/decode/abc", status: 400, code: "invalid_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			if tt.setup != nil {
				tt.setup(v)
			}
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			rec := v.do(t, method, tt.target, nil)
			e := wantError(t, rec, tt.status, tt.code)
			if strings.Contains(rec.Body.String(), "secret detail") || strings.Contains(rec.Body.String(), "fake segment panic") {
				t.Errorf("body leaks the cause: %s", rec.Body)
			}
			switch tt.status {
			case 500:
				if tt.code != "internal" {
					break
				}
				if e.Error.Message != "internal error" {
					t.Errorf("message = %q, want the generic one", e.Error.Message)
				}
				if !strings.Contains(v.logs.String(), "level=ERROR") {
					t.Errorf("500 not logged at error level: %s", v.logs)
				}
			case 405:
				if rec.Header().Get("Allow") == "" {
					t.Errorf("405 without Allow")
				}
			}
		})
	}
}

func TestUnknownTagMessage(t *testing.T) {
	v := newEnv(t)
	e := wantError(t, v.do(t, http.MethodGet, "/api/segment/get/nosuch", nil), 404, "unknown_tag")
	if want := `biz tag "nosuch" does not exist`; e.Error.Message != want {
		t.Errorf("message = %q, want %q", e.Error.Message, want)
	}
}

func TestModesOff(t *testing.T) {
	v := newEnv(t, func(c *envConfig) { c.Segments, c.Snowflake = nil, nil })
	for _, target := range []string{
		"/api/segment/get/orders", "/api/segment/batch/orders?count=1",
		"/api/snowflake/get", "/api/snowflake/get/k", "/api/snowflake/batch?count=1", "/api/snowflake/decode/1",
	} {
		t.Run(target, func(t *testing.T) {
			wantError(t, v.do(t, http.MethodGet, target, nil), 404, "not_found")
		})
	}
	t.Run("admin segments", func(t *testing.T) {
		wantError(t, v.admin(t, http.MethodGet, "/api/admin/segments", ""), 404, "not_found")
	})
}

func TestCount(t *testing.T) {
	tests := []struct {
		name  string
		query string
	}{
		{"zero", "?count=0"},
		{"negative", "?count=-1"},
		{"above max", "?count=10001"},
		{"huge", "?count=99999999999999999999999"},
		{"letters", "?count=abc"},
		{"empty", "?count="},
		{"missing", ""},
		{"other parameter", "?n=5"},
		{"fraction", "?count=1.5"},
		{"plus sign", "?count=%2B5"},
		{"space", "?count=%205"},
		{"hex", "?count=0x10"},
	}
	for _, base := range []string{"/api/segment/batch/orders", "/api/snowflake/batch"} {
		for _, tt := range tests {
			t.Run(base+"/"+tt.name, func(t *testing.T) {
				v := newEnv(t)
				wantError(t, v.do(t, http.MethodGet, base+tt.query, nil), 400, "invalid_count")
			})
		}
	}
}

func TestDecodeBadIDs(t *testing.T) {
	tests := []struct {
		name string
		id   string
	}{
		{"negative", "-1"},
		{"letters", "abc"},
		{"above int64", "9223372036854775808"},
		{"way above int64", "123456789012345678901234567890"},
		{"exponent", "1e5"},
		{"plus", "%2B1"},
		{"space", "%201"},
		{"hex", "0x1f"},
		{"fraction", "1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			wantError(t, v.do(t, http.MethodGet, "/api/snowflake/decode/"+tt.id, nil), 400, "invalid_id")
		})
	}
	t.Run("max int64", func(t *testing.T) {
		v := newEnv(t)
		if rec := v.do(t, http.MethodGet, "/api/snowflake/decode/9223372036854775807", nil); rec.Code != 200 {
			t.Fatalf("status = %d; %s", rec.Code, rec.Body)
		}
	})
}

func TestHeadErrorHasNoBody(t *testing.T) {
	v := newEnv(t)
	rec := v.do(t, http.MethodHead, "/nope", nil)
	if rec.Code != 404 || rec.Body.Len() != 0 {
		t.Fatalf("HEAD /nope: %d %q", rec.Code, rec.Body)
	}
}

// TestConcurrentRequests runs the whole stack in parallel under -race and
// checks that no id is handed out twice.
func TestConcurrentRequests(t *testing.T) {
	v := newEnv(t)
	const workers, each = 8, 50
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for range each {
				rec := v.do(t, http.MethodGet, "/api/segment/get/orders", nil)
				mu.Lock()
				if rec.Code != 200 || seen[rec.Body.String()] {
					t.Errorf("status %d, id %s (seen %v)", rec.Code, rec.Body, seen[rec.Body.String()])
				}
				seen[rec.Body.String()] = true
				mu.Unlock()
				v.do(t, http.MethodGet, "/metrics", nil)
			}
		})
	}
	wg.Wait()
	if len(seen) != workers*each {
		t.Fatalf("%d distinct ids, want %d", len(seen), workers*each)
	}
}
