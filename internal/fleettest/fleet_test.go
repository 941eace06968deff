package fleettest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestNew: a fleet starts with what New says each instance owns (New
// fails otherwise), and answers over both instances.
func TestNew(t *testing.T) {
	fl := New(t)
	for _, in := range []*Instance{fl.A, fl.B} {
		for _, target := range []string{"/api/segment/get/" + Ordered, "/api/segment/get/" + OrderedB, "/api/segment/get/" + Cap, "/api/sequence/next/inbox/k"} {
			rec := httptest.NewRecorder()
			in.HTTP.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("%s to %s: %d %s", target, in.Name, rec.Code, rec.Body)
			}
		}
	}
	if got := fl.Ledger.Reached(); got["forward:"+KindOrdered] != 2 || got["forward:"+KindCapped] != 1 {
		t.Fatalf("forwards %v: each instance forwards the ordered tag the other owns, A the capped one", got)
	}
	if err := fl.Fault(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkNew is what a fuzz target pays once per worker for its fleet.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		New(b)
	}
}
