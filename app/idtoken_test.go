package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
)

// TestIDToken: with --id-token every id route asks for it (401
// unauthorized without it or with another), the open routes and the admin
// API do not, gRPC's IdService asks for it too, and two instances given
// the same token forward the calls of what the other owns with it: every
// call through either is answered.
func TestIDToken(t *testing.T) {
	const token = "a token of the id routes"
	f := &tlsFleet{client: &http.Client{Timeout: 10 * time.Second}}
	f.start(t, "http://", func(_ int, cfg *Config) { cfg.IDToken = token })
	admin := []string{"Authorization", "Bearer admin"}
	for path, body := range map[string]string{
		"/api/admin/tags":      `{"tag":"ticks","ordered":true}`,
		"/api/admin/sequences": `{"space":"inbox","sections":4}`,
	} {
		if code, answer := f.do(t, http.MethodPost, f.base[0]+path, body, admin...); code != http.StatusCreated {
			t.Fatalf("POST %s = %d %s", path, code, answer)
		}
	}
	paths := []string{"/api/segment/get/ticks", "/api/snowflake/get", "/api/uuid/get", "/api/snowflake/decode/1"}
	for k := range 8 {
		paths = append(paths, "/api/sequence/next/inbox/user"+string(rune('a'+k)))
	}
	for _, auth := range []string{"", "Bearer another token of the routes"} {
		for _, p := range append(paths, "/api/sequence/routes/inbox") {
			code, body := f.do(t, http.MethodGet, f.base[1]+p, "", "Authorization", auth)
			if code != http.StatusUnauthorized || !strings.Contains(body, `"unauthorized"`) {
				t.Errorf("%s with %q: %d %s; want 401 unauthorized", p, auth, code, body)
			}
		}
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/status.json"} {
		if code, _ := f.do(t, http.MethodGet, f.base[1]+p, ""); code != http.StatusOK {
			t.Errorf("%s without the token: %d, want 200", p, code)
		}
	}
	ids := leafv1connect.NewIdServiceClient(http.DefaultClient, f.base[1])
	if _, err := ids.GetSnowflakeId(context.Background(), connect.NewRequest(&leafv1.GetSnowflakeIdRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("IdService without the token: %v, want Unauthenticated", err)
	}
	req := connect.NewRequest(&leafv1.GetSnowflakeIdRequest{})
	req.Header().Set("Authorization", "Bearer "+token)
	if _, err := ids.GetSnowflakeId(context.Background(), req); err != nil {
		t.Errorf("IdService with the token: %v", err)
	}

	f.auth = "Bearer " + token
	f.settled(t, "inbox")
	failed := 0
	for range 3 {
		for _, p := range paths {
			for i := range f.base {
				if code, body := f.get(t, f.base[i]+p); code != http.StatusOK {
					failed++
					t.Logf("instance %d, %s: %d %s", i, p, code, body)
				}
			}
		}
	}
	fw := [2]map[string]int{f.forwards(t, 0), f.forwards(t, 1)}
	if failed > 0 || fw[0]["failed"]+fw[1]["failed"] > 0 || fw[0]["ok"]+fw[1]["ok"] == 0 {
		t.Errorf("%d calls failed; forwards %v and %v (want some ok, none failed)", failed, fw[0], fw[1])
	}
	if _, body := f.do(t, http.MethodGet, f.base[1]+"/metrics", ""); !strings.Contains(body, `leaf_admin_refused_total{edge="http_ids",reason="missing"}`) {
		t.Error(`/metrics counts no call refused for its missing id token (edge="http_ids")`)
	}
}
