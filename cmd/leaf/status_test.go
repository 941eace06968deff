package main

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
)

// TestStatusTokenAndWiring: LEAF_STATUS_TOKEN closes /status and
// /status.json to requests without it, the admin token does not open them,
// neither token reaches the log, and the JSON view describes this instance.
func TestStatusTokenAndWiring(t *testing.T) {
	const statusToken, adminToken = "st4tus-secret-of-the-test", "adm1n-secret-of-the-test"
	a := startApp(t, env{
		"LEAF_SQLITE_PATH":  filepath.Join(t.TempDir(), "leaf.db"),
		"LEAF_STATUS_TOKEN": statusToken,
		"LEAF_ADMIN_TOKEN":  adminToken,
	})
	for _, path := range []string{"/status", "/status.json"} {
		for _, tt := range []struct {
			token string
			want  int
		}{{"", 401}, {adminToken, 401}, {"wrong", 401}, {statusToken, 200}} {
			if code, body := testkit.Get(a.base+path, tt.token); code != tt.want {
				t.Errorf("GET %s with token %q = %d %s, want %d", path, tt.token, code, body, tt.want)
			}
		}
	}

	code, body := testkit.Get(a.base+"/status.json", statusToken)
	var s struct {
		Instance struct {
			Version string
			Store   struct {
				Kind string
				Up   bool
			}
		}
		Segment   *struct{ Tags []any }
		Snowflake *struct {
			WorkerID int64 `json:"worker_id"`
			Leased   bool
			Holder   string
		}
	}
	if err := json.Unmarshal([]byte(body), &s); code != 200 || err != nil {
		t.Fatalf("status.json = %d %s (%v)", code, body, err)
	}
	if s.Instance.Version != version || s.Instance.Store.Kind != "sqlite" || !s.Instance.Store.Up {
		t.Errorf("instance = %+v", s.Instance)
	}
	if s.Segment == nil || s.Snowflake == nil || !s.Snowflake.Leased || s.Snowflake.Holder == "" || s.Snowflake.WorkerID < 0 {
		t.Errorf("segment %+v, snowflake %+v: want both on, a worker id leased", s.Segment, s.Snowflake)
	}

	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	if logs := a.logs.String(); strings.Contains(logs, statusToken) || strings.Contains(logs, adminToken) {
		t.Errorf("a token appears in the log:\n%s", logs)
	}
}

// TestTokensRefused: a token with whitespace around it (one read from a
// file with its newline) could never match, and one under 16 bytes is
// guessed: serve refuses both at the start, naming the flag and its
// variable and never the token.
func TestTokensRefused(t *testing.T) {
	e := env{"LEAF_SQLITE_PATH": filepath.Join(t.TempDir(), "leaf.db")}
	for _, c := range []struct{ name, value, says string }{
		{"LEAF_ADMIN_TOKEN", "a token read from a file\n", "--admin-token (LEAF_ADMIN_TOKEN) begins or ends with whitespace"},
		{"LEAF_ADMIN_TOKEN", "short-secret", "--admin-token (LEAF_ADMIN_TOKEN) has 12 bytes, fewer than 16"},
		{"LEAF_STATUS_TOKEN", " padded status token", "--status-token (LEAF_STATUS_TOKEN) begins or ends with whitespace"},
	} {
		e := maps.Clone(e)
		e[c.name] = c.value
		_, err := newApp([]string{"--snowflake-worker-id", "1"}, e.get, io.Discard)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), strings.TrimSpace(c.value)) {
			t.Errorf("%s=%q: %v; want a usage error saying %q", c.name, c.value, err, c.says)
		}
	}
}
