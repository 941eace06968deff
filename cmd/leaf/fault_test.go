package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/tcpproxy"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// batch asks for n segment ids; it returns the status and the ids.
func batch(t *testing.T, base, tag string, n int) (int, []string) {
	t.Helper()
	code, body := testkit.MustGet(t, base+"/api/segment/batch/"+tag+"?count="+strconv.Itoa(n))
	if code != 200 {
		return code, nil
	}
	var v struct{ IDs []string }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("batch body %q: %v", body, err)
	}
	return code, v.IDs
}

// TestDatabaseGoesAway runs `leaf serve` on MySQL behind a proxy, cuts the
// proxy, and checks: buffered ids keep flowing, then requests fail fast
// with 503, /readyz stays 200 and names the store as degraded (an outage
// every instance shares must not take them all out of a load balancer),
// and when the database is back service resumes by itself, with no id
// repeated or lost from the buffer.
func TestDatabaseGoesAway(t *testing.T) {
	dsn := storetest.MySQL(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t, store.MySQL, dsn)
	if _, err := st.CreateTag(context.Background(), segment.Tag{Name: "orders", MaxID: 1, Step: 1000}); err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.Start(t, cfg.Addr)
	cfg.Addr = proxy.Addr()
	cfg.Timeout = time.Second

	a := startApp(t, env{"LEAF_MYSQL_DSN": cfg.FormatDSN(), "LEAF_SNOWFLAKE": "false", "LEAF_ADMIN_TOKEN": "tok-of-the-fault-test"})
	base, logs := a.base, a.logs

	seen := map[string]bool{}
	collect := func(ids []string) {
		t.Helper()
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("id %s issued twice", id)
			}
			seen[id] = true
		}
	}
	// Use 20% of the first segment: the next one is prefetched.
	code, ids := batch(t, base, "orders", 200)
	if code != 200 {
		t.Fatalf("first batch: %d", code)
	}
	collect(ids)
	testkit.WaitFor(t, 0, "the prefetch", func() bool {
		_, body := testkit.Get(base+"/api/admin/segments", "tok-of-the-fault-test")
		return strings.Count(body, `"start"`) == 2
	})

	proxy.Cut()
	if code, body := testkit.MustGet(t, base+"/readyz"); code != 200 {
		t.Fatalf("readyz with the database gone and ids buffered = %d %s", code, body)
	}
	// Both buffered segments are served: 800 + 2000 ids, then 503.
	for {
		code, ids := batch(t, base, "orders", 100)
		if code == 503 {
			break
		}
		if code != 200 {
			t.Fatalf("batch while the database is gone: %d", code)
		}
		collect(ids)
	}
	if len(seen) < 2900 {
		t.Fatalf("only %d ids were served from the buffers, want the 3000 buffered", len(seen))
	}
	start := time.Now()
	for range 20 {
		if code, _ := testkit.MustGet(t, base+"/api/segment/get/orders"); code != 503 {
			t.Fatalf("with empty buffers and no database = %d, want 503", code)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("20 requests took %v: callers must not hang while the database is gone", took)
	}
	if code, body := testkit.MustGet(t, base+"/readyz"); code != 200 || !strings.Contains(body, `"degraded":["store"]`) ||
		!strings.Contains(body, `"reason":"degraded: the database has not answered since`) || strings.Contains(body, "127.0.0.1") {
		t.Fatalf("readyz with the database gone and the buffers empty = %d %s, want 200 naming the store degraded, "+
			"with a reason that names no address", code, body)
	}
	if _, body := testkit.MustGet(t, base+"/metrics"); !strings.Contains(body, "leaf_store_up 0") {
		t.Fatal("leaf_store_up is not 0 while the database is gone")
	}
	if n := strings.Count(logs.String(), "store not answering"); n != 1 {
		t.Fatalf("%d lines say the store is not answering, want 1:\n%s", n, logs.String())
	}

	proxy.Pass()
	testkit.WaitFor(t, 0, "service to resume", func() bool {
		code, body := testkit.Get(base+"/api/segment/get/orders", "")
		if code == 200 {
			collect([]string{body})
		}
		return code == 200
	})
	_, ids = batch(t, base, "orders", 500)
	collect(ids)
	if code, body := testkit.MustGet(t, base+"/readyz"); code != 200 || strings.Contains(body, "degraded") {
		t.Fatalf("readyz after the database came back = %d %s", code, body)
	}
	if !strings.Contains(logs.String(), "store answering again") {
		t.Fatalf("no line says the store answers again:\n%s", logs.String())
	}
	t.Logf("%d distinct ids across the outage", len(seen))
}
