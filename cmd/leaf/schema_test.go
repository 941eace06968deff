package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestServeOnAnUnmigratedDatabase: `serve --migrate=false` on a database
// that was never migrated is not ready and says which table is missing
// and what to run, in /readyz and in every error; once the database is
// migrated elsewhere it becomes ready by itself.
func TestServeOnAnUnmigratedDatabase(t *testing.T) {
	dsn := storetest.MySQL(t)
	e := env{"LEAF_MYSQL_DSN": dsn, "LEAF_ADMIN_TOKEN": "t0ken-secret-of-the-test"}
	a := startApp(t, e, "--migrate=false", "--snowflake=false")

	code, body := testkit.MustGet(t, a.base+"/readyz")
	var ready readyBody
	if err := json.Unmarshal([]byte(body), &ready); err != nil || code != http.StatusServiceUnavailable {
		t.Fatalf("readyz = %d %s (%v), want 503", code, body, err)
	}
	if r := ready.check("schema"); r.Status != "failing" || !strings.Contains(r.Reason, "leaf_alloc") || !strings.Contains(r.Reason, "leaf migrate") {
		t.Fatalf("readyz schema check = %+v, want failing naming leaf_alloc and `leaf migrate`", r)
	}
	for _, path := range []string{"/api/segment/get/orders", "/api/segment/batch/orders?count=2"} {
		// The first table a first load reads is the one named: the kinds
		// of tags (leaf_seq_section) before the rows themselves.
		code, body := testkit.MustGet(t, a.base+path)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "table leaf_") || !strings.Contains(body, "does not exist") || !strings.Contains(body, "leaf migrate") {
			t.Fatalf("%s = %d %s, want 503 naming a leaf table and `leaf migrate`", path, code, body)
		}
	}
	code, body = testkit.Get(a.base+"/api/admin/tags", "t0ken-secret-of-the-test")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "leaf migrate") {
		t.Fatalf("admin list = %d %s, want 503 saying to run `leaf migrate`", code, body)
	}

	storetest.Open(t, store.MySQL, dsn) // migrates, as `leaf migrate` would
	testkit.WaitFor(t, 0, "ready after the migration", func() bool {
		code, _ := testkit.Get(a.base+"/readyz", "")
		return code == http.StatusOK
	})
	if !strings.Contains(a.logs.String(), "run `leaf migrate`") {
		t.Fatalf("nothing logged about the missing migrations:\n%s", a.logs.String())
	}
}

type readyBody struct {
	Status string `json:"status"`
	Checks []struct {
		Name, Status, Reason string
	} `json:"checks"`
}

func (r readyBody) check(name string) (c struct{ Name, Status, Reason string }) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return c
}

// TestServeRefusalsAreJSON: what Go's HTTP server refuses by itself
// reaches the client of `leaf serve` in the API's error shape.
func TestServeRefusalsAreJSON(t *testing.T) {
	a := startApp(t, env{"LEAF_SQLITE_PATH": t.TempDir() + "/leaf.db"}, "--snowflake=false")
	c, err := net.Dial("tcp", a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /api/segment/get/%zz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"code":"invalid_request"`) {
		t.Fatalf("malformed request line = %d %s", resp.StatusCode, body)
	}
}
