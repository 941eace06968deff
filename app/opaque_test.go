package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
)

// TestOpaqueCountsHidden: an opaque tag's counts and ranges are on neither
// /metrics nor the open status pages, nor in their totals, where a plain
// tag's are; the admin API's list, behind its token, shows both.
func TestOpaqueCountsHidden(t *testing.T) {
	cfg := testConfig(t)
	cfg.OpaqueKeys = [][]byte{[]byte("a key of the fleet's opaque tags")}
	cfg.MetricsTags = []string{"secret-op", "open-plain"}
	srv := serving(t, cfg)
	base := "http://" + srv.Addr()
	for _, body := range []string{`{"tag":"secret-op","opaque":63}`, `{"tag":"open-plain"}`} {
		if code, answer := testkit.Post(base+"/api/admin/tags", cfg.AdminToken, body); code != http.StatusCreated {
			t.Fatalf("create %s = %d %s", body, code, answer)
		}
	}
	for range 7 {
		get(t, base+"/api/segment/get/secret-op")
	}
	for range 3 {
		get(t, base+"/api/segment/get/open-plain")
	}
	_, metrics := get(t, base+"/metrics")
	if strings.Contains(metrics, `tag="secret-op"`) {
		t.Errorf("/metrics has series of the opaque tag: %q", linesWith(metrics, "secret-op"))
	}
	if !strings.Contains(metrics, `leaf_ids_issued_total{mode="segment",tag="open-plain"} 3`) ||
		!strings.Contains(metrics, "leaf_segment_all_ids_issued_total 3\n") {
		t.Errorf("/metrics lacks the plain tag's 3 ids, or counts more in all: %q", linesWith(metrics, "ids_issued"))
	}
	for _, page := range []string{"/status", "/status.json", "/status?q=secret"} {
		if _, body := get(t, base+page); strings.Contains(body, "secret-op") {
			t.Errorf("%s names the opaque tag", page)
		}
	}
	if _, body := get(t, base+"/status.json"); !strings.Contains(body, "open-plain") {
		t.Error("/status.json lacks the plain tag")
	}
	code, admin := testkit.Get(base+"/api/admin/segments", cfg.AdminToken)
	if code != http.StatusOK || !strings.Contains(admin, "secret-op") || !strings.Contains(admin, "open-plain") {
		t.Errorf("/api/admin/segments = %d, want both tags: %.300s", code, admin)
	}
}

// linesWith are the lines of body that contain s.
func linesWith(body, s string) []string {
	var out []string
	for line := range strings.Lines(body) {
		if strings.Contains(line, s) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// TestStatusWithEveryKind: the status page and its JSON answer 200 with a
// tag of every kind served (a formatted, an opaque, an ordered and a
// capped one), their headroom read.
func TestStatusWithEveryKind(t *testing.T) {
	cfg := testConfig(t)
	cfg.OpaqueKeys = [][]byte{[]byte("a key of the fleet's opaque tags")}
	srv := serving(t, cfg)
	base := "http://" + srv.Addr()
	for _, body := range []string{
		`{"tag":"fmt","format":"F-{date:20060102}-{seq:6}","reset":"day"}`,
		`{"tag":"opq","opaque":63}`,
		`{"tag":"ord","ordered":true}`,
		`{"tag":"cap","format":"C-{date:20060102}-{seq:3!}","reset":"day"}`,
	} {
		if code, b := adminCall(t, cfg.AdminToken, http.MethodPost, base+"/api/admin/tags", body); code != http.StatusCreated {
			t.Fatalf("create %s = %d %s", body, code, b)
		}
	}
	for _, tag := range []string{"fmt", "opq", "ord", "cap"} {
		if code, b := get(t, base+"/api/segment/get/"+tag); code != http.StatusOK {
			t.Fatalf("%s: %d %s", tag, code, b)
		}
	}
	for _, path := range []string{"/status", "/status.json", "/metrics"} {
		if code, b := get(t, base+path); code != http.StatusOK {
			t.Errorf("%s = %d %s", path, code, b)
		}
	}
}
