package faults

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

// TestHeadroomAlerts: the headroom rules of deploy/prometheus (unchanged)
// in a real Prometheus server scraping one instance: a tag bounded at 100
// (PATCH {"max":100}) that has issued 95 of its ids makes LeafTagNearBound
// and LeafTagAtBound active for it, and only for it, at the next scrape
// and evaluation; a tag far from its bound makes neither. In the short
// suite each alert must be active (pending or firing) for the right tag;
// in the full one it must fire once its for (10 and 5 minutes) has passed,
// as promtool's tests have it too (deploy/prometheus/leaf-alerts_test.yml).
func TestHeadroomAlerts(t *testing.T) {
	requireSuite(t)
	promBin := requirePrometheus(t)
	db := filepath.Join(t.TempDir(), "leaf.db")
	leafCommand(t, "migrate", "--sqlite-path", db)
	ins := newInstances(t, "headroom", 1, func(int) []string {
		return []string{"--sqlite-path", db, "--admin-token", adminToken}
	})
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}
	in := ins[0]
	ctx := context.Background()
	c := &http.Client{Timeout: 10 * time.Second}
	for _, tag := range []string{"near", "far"} {
		if code, b, err := post(ctx, c, in.base()+"/api/admin/tags", adminToken, `{"tag":"`+tag+`","step":10}`); err != nil || code != http.StatusCreated {
			t.Fatalf("create %s: %d %s %v", tag, code, b, err)
		}
		req, _ := http.NewRequest(http.MethodPatch, in.base()+"/api/admin/tags/"+tag, strings.NewReader(`{"max":100}`))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := c.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("bound %s: %v %v", tag, resp, err)
		}
		resp.Body.Close()
	}
	for i := range 95 {
		resp, err := c.Get(in.base() + "/api/segment/get/near")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("id %d of near: %v %v", i+1, resp, err)
		}
		resp.Body.Close()
	}
	if resp, err := c.Get(in.base() + "/api/segment/get/far"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("far: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	clk := newClock()
	prom := startPrometheus(t, promBin, ins)
	watch := watchAlerts(t, clk, prom, 250*time.Millisecond)
	r := newReport(t, "headroom_alerts")
	state, within := sized("", "firing"), sized(30*time.Second, 12*time.Minute)
	for _, name := range []string{"LeafTagAtBound", "LeafTagNearBound"} {
		at := watch.waitFor(0, within, func(al []promAlert) bool {
			for _, a := range al {
				if a.name() == name && a.Labels["tag"] == "near" && (state == "" || a.State == state) {
					return true
				}
			}
			return false
		})
		what := cmpOr(state, "active")
		r.add(strings.ToLower(name)+"_"+what+"_s", at.Seconds())
		r.bound(strings.ToLower(name)+"_"+what, at >= 0, "%s %s for the tag at 100%% of its bound's ids taken (the range of 100 up to the bound): within %v of Prometheus' start", name, what, within)
	}
	var far []string
	for _, s := range watch.between(0, clk.now()) {
		for _, a := range s.alerts {
			if a.Labels["tag"] == "far" {
				far = append(far, a.name())
			}
		}
	}
	r.bound("far_quiet", len(far) == 0, "no headroom alert for the tag far from its bound: %v", far)
	testkit.WaitFor(t, 10*time.Second, "the ratio scraped", func() bool {
		return prom.query(t, `leaf_tag_bound_used_ratio{tag="near"}`)[in.addr] != ""
	})
	r.add("near_used_ratio", prom.query(t, `leaf_tag_bound_used_ratio{tag="near"}`)[in.addr])
	r.print()
}
