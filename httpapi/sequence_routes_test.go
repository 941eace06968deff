package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
)

type routesAnswer struct {
	Space    string   `json:"space"`
	Sections int      `json:"sections"`
	Scheme   string   `json:"scheme"`
	Version  string   `json:"version"`
	Members  []string `json:"members"`
	Owners   []int    `json:"owners"`
}

// TestSequenceRoutesTable: two instances answer the same table; the owner
// it names for each section serves the section's keys itself (a request
// marked forwarded, which a non-owner refuses, is answered); the sequence
// routes answer the table's version to a request holding another.
func TestSequenceRoutesTable(t *testing.T) {
	// Members' ids are random and each section goes to the member its
	// hash ranks first: with 32 sections, one member wins them all once
	// in 2^31 runs, where 8 left the second member none once in 128.
	const sections = 32
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 10, Sections: sections}); err != nil {
		t.Fatal(err)
	}
	a, b := startInstance(t, st), startInstance(t, st)
	for range 3 {
		for _, in := range []*instance{a, b} {
			if err := in.q.Round(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	byAddr := map[string]*instance{a.srv.Listener.Addr().String(): a, b.srv.Listener.Addr().String(): b}

	var tables []routesAnswer
	for _, in := range []*instance{a, b} {
		code, body, h := get(t, in.srv.URL+"/api/sequence/routes/inbox")
		if code != http.StatusOK || h.Get("Content-Type") != "application/json" {
			t.Fatalf("routes: %d %s %v", code, body, h)
		}
		var r routesAnswer
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, r)
	}
	r := tables[0]
	if o := tables[1]; o.Version != r.Version || !slices.Equal(o.Members, r.Members) || !slices.Equal(o.Owners, r.Owners) {
		t.Fatalf("the instances' tables differ: %+v and %+v", r, o)
	}
	if r.Space != "inbox" || r.Sections != sections || r.Scheme != "fnv1a64-mod" || len(r.Version) != 16 ||
		len(r.Members) != 2 || !slices.IsSorted(r.Members) || len(r.Owners) != sections {
		t.Fatalf("routes %+v", r)
	}
	for i, o := range r.Owners {
		if o < 0 || o >= len(r.Members) || byAddr[r.Members[o]] == nil {
			t.Fatalf("section %d: owner %d of %q", i, o, r.Members)
		}
	}
	for k := range 40 {
		key := "user-" + strconv.Itoa(k)
		owner := byAddr[r.Members[r.Owners[sequence.SectionOf(key, sections)]]]
		code, body, _ := get(t, owner.srv.URL+"/api/sequence/next/inbox/"+key, httpapi.HeaderForwarded, "1")
		if code != http.StatusOK || body != "1" {
			t.Fatalf("key %s at the owner named: %d %s", key, code, body)
		}
		for _, in := range []*instance{a, b} {
			for _, path := range []string{"/api/sequence/next/inbox/", "/api/sequence/current/inbox/"} {
				// No version held, the current one, a stale one: only
				// the stale one is answered with the current version.
				for _, held := range []string{"", r.Version, "0123456789abcdef"} {
					var hdr []string
					if held != "" {
						hdr = []string{httpapi.HeaderRoutesVersion, held}
					}
					code, body, h := get(t, in.srv.URL+path+key, hdr...)
					want := ""
					if held != "" && held != r.Version {
						want = r.Version
					}
					if code != http.StatusOK || h.Get(httpapi.HeaderRoutesVersion) != want {
						t.Fatalf("%s%s holding %q: %d %s, version %q, want %q", path, key, held, code, body, h.Get(httpapi.HeaderRoutesVersion), want)
					}
				}
			}
		}
	}
}

func TestSequenceRoutesBadInput(t *testing.T) {
	v, _ := newSequenceEnv(t)
	for _, tc := range []struct {
		name, target string
		status       int
		code         string
	}{
		{"no space", "/api/sequence/routes/", 400, "invalid_space"},
		{"space not utf-8", "/api/sequence/routes/a%FFb", 400, "invalid_space"},
		{"space with a slash", "/api/sequence/routes/a/b", 400, "invalid_space"},
		{"unknown space", "/api/sequence/routes/outbox", 404, "unknown_space"},
		{"malformed query", "/api/sequence/routes/inbox?%zz", 400, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, v.do(t, http.MethodGet, tc.target, nil), tc.status, tc.code)
		})
	}
	if rec := v.do(t, http.MethodHead, "/api/sequence/routes/inbox", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("HEAD: %d", rec.Code)
	}
	wantError(t, newEnv(t).do(t, http.MethodGet, "/api/sequence/routes/inbox", nil), 404, "not_found")
}
