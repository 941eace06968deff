package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

// env is a fake environment for run.
type env map[string]string

func (e env) get(k string) string { return e[k] }

func runCmd(t *testing.T, e env, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, e.get, &out, &errOut)
	return out.String() + errOut.String(), err
}

func TestBadCommandLines(t *testing.T) {
	tests := []struct {
		name string
		env  env
		args []string
	}{
		{"no command", env{}, nil},
		{"unknown command", env{}, []string{"launch"}},
		{"unknown flag", env{}, []string{"serve", "--nope"}},
		{"bad variable", env{"LEAF_SEGMENT": "maybe"}, []string{"serve"}},
		{"bad worker id", env{}, []string{"serve", "--snowflake-worker-id", "1024"}},
		{"bad snowflake layout", env{}, []string{"serve", "--snowflake-layout", "41,10,10"}},
		{"bad snowflake time unit", env{"LEAF_SNOWFLAKE_TIME_UNIT": "h"}, []string{"serve"}},
		{"bad metrics tags", env{}, []string{"serve", "--metrics-tags", "orders,,users"}},
		{"bad metrics tags variable", env{"LEAF_METRICS_TAGS": "orders,\xff"}, []string{"serve"}},
		{"bad log format", env{}, []string{"serve", "--log-format", "xml"}},
		{"both modes off", env{}, []string{"serve", "--segment=false", "--snowflake=false"}},
		{"tag without subcommand", env{}, []string{"tag"}},
		{"tag add without name", env{}, []string{"tag", "add", "--sqlite-path", filepath.Join(t.TempDir(), "x.db")}},
		{"tag add bad name", env{}, []string{"tag", "add", "bad\x00name", "--sqlite-path", filepath.Join(t.TempDir(), "x.db")}},
		{"tag add bad step", env{}, []string{"tag", "add", "t", "--step", "0", "--sqlite-path", filepath.Join(t.TempDir(), "x.db")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := runCmd(t, tt.env, tt.args...); !errors.Is(err, errUsage) {
				t.Fatalf("run(%q) = %v, want a usage error", tt.args, err)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	if _, err := runCmd(t, env{}, "serve", "-h"); !errors.Is(err, errHelp) {
		t.Fatalf("serve -h = %v, want errHelp", err)
	}
	out, err := runCmd(t, env{}, "version")
	if err != nil || !strings.HasPrefix(out, "leaf ") {
		t.Fatalf("version = %q, %v", out, err)
	}
}

func TestTagCommands(t *testing.T) {
	e := env{"LEAF_SQLITE_PATH": filepath.Join(t.TempDir(), "leaf.db")}
	if out, err := runCmd(t, e, "tag", "add", "orders", "--step", "50", "--max-id", "1000", "--description", "order ids"); err != nil {
		t.Fatalf("tag add: %v\n%s", err, out)
	}
	if _, err := runCmd(t, e, "tag", "add", "orders"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("tag add twice = %v, want an error saying it exists", err)
	}
	out, err := runCmd(t, e, "tag", "list")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "orders") || !strings.Contains(out, "1000") || !strings.Contains(out, "order ids") {
		t.Fatalf("tag list =\n%s", out)
	}
	if out, err := runCmd(t, e, "migrate"); err != nil || !strings.Contains(out, "up to date") {
		t.Fatalf("migrate = %q, %v", out, err)
	}
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeAndShutDown runs `leaf serve` on the embedded store, takes ids
// from both modes and stops it as SIGTERM would.
func TestServeAndShutDown(t *testing.T) {
	addr := freeAddr(t)
	e := env{"LEAF_SQLITE_PATH": filepath.Join(t.TempDir(), "leaf.db"), "LEAF_ADDR": addr, "LEAF_ADMIN_TOKEN": "t0ken-secret-of-the-test"}
	if out, err := runCmd(t, e, "tag", "add", "orders"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &testkit.SyncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--log-format", "json"}, e.get, io.Discard, logs) }()

	base := "http://" + addr
	deadline := time.Now().Add(10 * time.Second)
	for {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	for i := 1; i <= 3; i++ {
		if code, body := testkit.MustGet(t, base+"/api/segment/get/orders"); code != 200 || body != strconv.Itoa(i) {
			t.Fatalf("segment id %d = %d %q", i, code, body)
		}
	}
	code, body := testkit.MustGet(t, base+"/api/snowflake/get")
	if id, err := strconv.ParseInt(body, 10, 64); code != 200 || err != nil || id <= 0 {
		t.Fatalf("snowflake id = %d %q", code, body)
	}
	// a tag created over the admin API is usable at once, even right after
	// a request found it unknown
	if code, _ := testkit.MustGet(t, base+"/api/segment/get/payments"); code != 404 {
		t.Fatalf("unknown tag = %d, want 404", code)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/api/admin/tags", strings.NewReader(`{"tag":"payments","step":10,"max_id":500}`))
	req.Header.Set("Authorization", "Bearer t0ken-secret-of-the-test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create tag = %d, want 201", resp.StatusCode)
	}
	if code, body := testkit.MustGet(t, base+"/api/segment/batch/payments?count=15"); code != 200 || !strings.Contains(body, `"500"`) || !strings.Contains(body, `"514"`) {
		t.Fatalf("batch of the new tag = %d %s", code, body)
	}
	if code, _ := testkit.MustGet(t, base+"/readyz"); code != 200 {
		t.Fatalf("readyz = %d", code)
	}
	if code, body := testkit.MustGet(t, base+"/metrics"); code != 200 || !strings.Contains(body, `leaf_ids_issued_total{mode="segment",tag="orders"} 3`) {
		t.Fatalf("metrics = %d, without the segment ids issued:\n%.2000s", code, body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
	if strings.Contains(logs.String(), "t0ken-secret-of-the-test") {
		t.Fatal("the admin token appears in the log")
	}
}
