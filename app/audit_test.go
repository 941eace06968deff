package app

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/leafid/leaf/service"
)

// TestAdminTrail: each change through the admin API is logged at INFO
// with what the tag or space was and is, and the fingerprint of the token
// that made it, never the token; calls refused for their token are counted
// by edge and reason, and logged at WARN once for a run of them.
func TestAdminTrail(t *testing.T) {
	cfg := testConfig(t)
	cfg.AdminToken = "the test's own admin token, 41 bytes long"
	logs := &syncWriter{w: new(bytes.Buffer)}
	srv := servingWith(t, cfg, slog.New(slog.NewTextHandler(logs, nil)))
	base := "http://" + srv.Addr()
	call := func(method, path, token, body string) int {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := call(http.MethodPost, "/api/admin/tags", cfg.AdminToken, `{"tag":"orders","step":100}`); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	if code := call(http.MethodPatch, "/api/admin/tags/orders", cfg.AdminToken, `{"step":200,"description":"the shop's"}`); code != http.StatusOK {
		t.Fatalf("update = %d", code)
	}
	if code := call(http.MethodPost, "/api/admin/sequences", cfg.AdminToken, `{"space":"inbox","sections":2}`); code != http.StatusCreated {
		t.Fatalf("space = %d", code)
	}
	for _, token := range []string{"", "wrong", "wrong again"} {
		if code := call(http.MethodPost, "/api/admin/tags", token, `{"tag":"x"}`); code != http.StatusUnauthorized {
			t.Fatalf("token %q = %d", token, code)
		}
	}
	text := logs.String()
	fp := service.TokenFingerprint(cfg.AdminToken)
	for _, want := range []string{
		`msg="admin: tag created" tag=orders after.max_id=1 after.step=100 after.description="" token=` + fp,
		`msg="admin: tag changed" tag=orders before.max_id=1 before.step=100 before.description="" after.max_id=1 after.step=200 after.description="the shop's" token=` + fp,
		`msg="admin: space created" space=inbox after.step=10000 after.sections=2 token=` + fp,
		`level=WARN msg="admin: a call refused for its token" edge=http reason=missing`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the log has no line with %s", want)
		}
	}
	if n := strings.Count(text, "a call refused for its token"); n != 1 {
		t.Errorf("%d lines for 3 refused calls, want 1 (the rest held back)", n)
	}
	if strings.Contains(text, cfg.AdminToken) {
		t.Error("the log holds the admin token")
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{`leaf_admin_refused_total{edge="http",reason="missing"} 1`, `leaf_admin_refused_total{edge="http",reason="wrong"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}
