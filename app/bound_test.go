package app

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
)

// adminCall makes an admin call with the test's token and returns its
// status and body.
func adminCall(t *testing.T, token, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTagBound: a bound declared by PATCH {"max": N} holds at once on the
// instance that took it (the others read it within --tag-refresh), for a plain tag and an ordered one: every id up
// to it, then 410 tag_bound_reached, never an id past it; the tag's view
// shows it, /metrics its headroom, and removing it lets the tag go on.
func TestTagBound(t *testing.T) {
	cfg := testConfig(t)
	srv := serving(t, cfg)
	base := "http://" + srv.Addr()
	for _, body := range []string{`{"tag":"plain","step":10}`, `{"tag":"ord","step":10,"ordered":true}`} {
		if code, b := adminCall(t, cfg.AdminToken, http.MethodPost, base+"/api/admin/tags", body); code != http.StatusCreated {
			t.Fatalf("create %s = %d %s", body, code, b)
		}
	}
	for _, tag := range []string{"plain", "ord"} {
		if code, b := adminCall(t, cfg.AdminToken, http.MethodPatch, base+"/api/admin/tags/"+tag, `{"max":25}`); code != http.StatusOK || !strings.Contains(b, `"max":"25"`) {
			t.Fatalf("PATCH %s max 25 = %d %s", tag, code, b)
		}
		var last string
		for i := 1; ; i++ {
			code, b := get(t, base+"/api/segment/get/"+tag)
			if code == http.StatusGone {
				if !strings.Contains(b, `"tag_bound_reached"`) || last != "25" {
					t.Fatalf("%s: after %s: %d %s; want tag_bound_reached after 25", tag, last, code, b)
				}
				break
			}
			if code != http.StatusOK || i > 30 {
				t.Fatalf("%s: id %d: %d %s", tag, i, code, b)
			}
			last = b
		}
		if _, status := get(t, base+"/status.json"); !strings.Contains(status, `{"tag":"`+tag+`","kind":"bound","bound":"25","left":"0","used_ratio":1}`) {
			t.Errorf("/status.json has no headroom of %s: %s", tag, status)
		}
		if _, page := get(t, base+"/status"); !strings.Contains(page, "Tag "+tag+" has used 100% of its bound 25") {
			t.Errorf("/status has no alert of %s's bound", tag)
		}
		_, metrics := get(t, base+"/metrics")
		for _, want := range []string{`leaf_tag_bound{tag="` + tag + `"} 25`, `leaf_tag_ids_left{tag="` + tag + `"} 0`, `leaf_tag_bound_used_ratio{tag="` + tag + `"} 1`} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics has no %s", want)
			}
		}
		if code, b := adminCall(t, cfg.AdminToken, http.MethodPatch, base+"/api/admin/tags/"+tag, `{"max":0}`); code != http.StatusOK || strings.Contains(b, `"max"`) {
			t.Fatalf("PATCH %s max 0 = %d %s", tag, code, b)
		}
		if code, b := get(t, base+"/api/segment/get/"+tag); code != http.StatusOK {
			t.Fatalf("%s without a bound: %d %s", tag, code, b)
		}
	}
}

// TestHeadroomRate: the time a bounded tag's ids last, from the rate its
// row moved between two readings a second or more apart.
func TestHeadroomRate(t *testing.T) {
	var r headroomRates
	t0 := time.Unix(1_800_000_000, 0)
	hs := []segment.Headroom{{Tag: "orders", Bound: 1_000_000, Taken: 1000}}
	r.fill(t0, hs)
	if hs[0].SecondsLeft != 0 {
		t.Fatalf("after one reading: %v, want none", hs[0].SecondsLeft)
	}
	hs[0].Taken = 11_000 // 10,000 ids in 10 s: 1,000 a second, 989,000 left
	r.fill(t0.Add(10*time.Second), hs)
	if hs[0].SecondsLeft != 989 {
		t.Errorf("seconds left %v, want 989", hs[0].SecondsLeft)
	}
	hs[0].SecondsLeft = 0
	r.fill(t0.Add(11*time.Minute), hs) // past the window: a new start
	if hs[0].SecondsLeft != 0 {
		t.Errorf("after the window: %v, want none until the next reading", hs[0].SecondsLeft)
	}
}
