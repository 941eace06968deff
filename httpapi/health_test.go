package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/readiness"
)

func TestReadyz(t *testing.T) {
	ok := func(context.Context) error { return nil }
	fail := func(context.Context) error { return errors.New("dial db:3306: refused") }
	degraded := func(context.Context) error { return fmt.Errorf("%w: dial db:3306: refused", readiness.ErrDegraded) }
	slow := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	stuck := func(context.Context) error { time.Sleep(2 * time.Second); return nil }
	tests := []struct {
		name     string
		checks   []readiness.Check
		status   int
		state    string
		failing  []string
		degraded []string
	}{
		{"all pass", []readiness.Check{{Name: "store", Func: ok}, {Name: "snowflake", Func: ok}}, 200, "ready", nil, nil},
		{"one fails", []readiness.Check{{Name: "store", Func: fail}, {Name: "snowflake", Func: ok}}, 503, "not_ready", []string{"store"}, nil},
		{"two fail", []readiness.Check{{Name: "store", Func: fail}, {Name: "segment", Func: ok}, {Name: "snowflake", Func: fail}}, 503, "not_ready", []string{"store", "snowflake"}, nil},
		{"a shared outage keeps it ready", []readiness.Check{{Name: "store", Func: degraded}, {Name: "snowflake", Func: ok}}, 200, "degraded", nil, []string{"store"}},
		{"degraded and failing", []readiness.Check{{Name: "store", Func: degraded}, {Name: "snowflake", Func: fail}}, 503, "not_ready", []string{"snowflake"}, []string{"store"}},
		{"nil func fails", []readiness.Check{{Name: "broken"}}, 503, "not_ready", []string{"broken"}, nil},
		{"panicking check fails", []readiness.Check{{Name: "panics", Func: func(context.Context) error { panic("x") }}}, 503, "not_ready", []string{"panics"}, nil},
		{"check bound by its timeout", []readiness.Check{{Name: "slow", Func: slow}}, 503, "not_ready", []string{"slow"}, nil},
		{"a check that ignores its context is not waited for", []readiness.Check{{Name: "stuck", Func: stuck}, {Name: "store", Func: ok}}, 503, "not_ready", []string{"stuck"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t, func(c *envConfig) { c.Checks = tt.checks })
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

// TestHealthzAsJSON: the constant answer of /healthz is byte for byte what
// the JSON encoder writes, and ?pretty still indents it.
func TestHealthzAsJSON(t *testing.T) {
	v := newEnv(t)
	plain := v.do(t, http.MethodGet, "/healthz", nil)
	if got := plain.Body.String(); got != "{\"status\":\"ok\"}\n" || plain.Header().Get("Content-Type") != "application/json" {
		t.Errorf("/healthz = %q (%s)", got, plain.Header().Get("Content-Type"))
	}
	pretty := v.do(t, http.MethodGet, "/healthz?pretty", nil)
	if got := pretty.Body.String(); got != "{\n  \"status\": \"ok\"\n}\n" {
		t.Errorf("/healthz?pretty = %q", got)
	}
}
