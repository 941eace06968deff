package app

import (
	"net/http"
	"strings"
	"testing"
)

// TestCappedShare: one call takes at most --capped-share of a capped
// format's period (a tenth by default): a batch of 10 of a {seq:2!} tag
// (99 numbers a day) is invalid_count and takes nothing, one of 9 is
// served, and the refusal is counted.
func TestCappedShare(t *testing.T) {
	cfg := testConfig(t)
	srv := serving(t, cfg)
	base := "http://" + srv.Addr()
	req, err := http.NewRequest(http.MethodPost, base+"/api/admin/tags", strings.NewReader(`{"tag":"inv","format":"INV-{date:20060102}-{seq:2!}","reset":"day"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+cfg.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create = %d", resp.StatusCode)
	}
	if code, body := get(t, base+"/api/segment/batch/inv?count=10"); code != http.StatusBadRequest ||
		!strings.Contains(body, `"invalid_count"`) || !strings.Contains(body, "at most 9 of them") {
		t.Errorf("a batch of 10 of 99 = %d %s; want invalid_count, at most 9", code, body)
	}
	if code, body := get(t, base+"/api/segment/batch/inv?count=9"); code != http.StatusOK || !strings.Contains(body, "-01") || !strings.Contains(body, "-09") {
		t.Errorf("a batch of 9 = %d %s; want the period's first nine", code, body)
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, `leaf_limit_refused_total{limit="capped_share"} 1`) {
		t.Error(`/metrics has no leaf_limit_refused_total{limit="capped_share"} 1`)
	}
}
