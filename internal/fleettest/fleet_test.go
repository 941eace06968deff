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

// TestLedgerCatches: the ledger refuses what breaks each of its rules.
func TestLedgerCatches(t *testing.T) {
	fl := New(t)
	l := fl.Ledger
	c53 := l.ciphers[KindOpaque53]
	id7, _ := c53.Encode(7)
	for _, tc := range []struct {
		name string
		ok   func() error
		bad  func() error
	}{
		{"a plain id twice", func() error { return l.IDs("orders", []int64{1, 2, 3}) }, func() error { return l.IDs("orders", []int64{3}) }},
		{"an ordered id not above the last", func() error { return l.IDs(Ordered, []int64{5}) }, func() error { return l.IDs(Ordered, []int64{5}) }},
		{"an opaque id twice", func() error { return l.IDs(Opaque53, []int64{id7}) }, func() error { return l.IDs(Opaque53, []int64{id7}) }},
		{"an opaque id past its bits", func() error { return nil }, func() error { return l.IDs(Opaque53, []int64{1 << 53}) }},
		{"a reveal to another number", func() error { return l.Reveal(Opaque53, id7, 7) }, func() error { return l.Reveal(Opaque53, id7, 8) }},
		{"a text twice", func() error { return l.Texts(Open, []string{"O-20261128-000001"}) }, func() error { return l.Texts(Open, []string{"O-20261128-000001"}) }},
		{"a text not of its format", func() error { return nil }, func() error { return l.Texts(Cap, []string{"C-7"}) }},
		{"a capped number past its cap", func() error { return nil }, func() error { return l.Texts(CapDay, []string{"D20261127-100"}) }},
		{"an owned number not above the last", func() error { return l.Texts(Cap, []string{"C-05"}) }, func() error { return l.Texts(Cap, []string{"C-04"}) }},
		{"a refusal that took numbers", func() error { l.Answered(Cap, "sequence_full"); return l.Texts(Cap, []string{"C-06"}) },
			func() error { l.Answered(Cap, "sequence_full"); return l.Texts(Cap, []string{"C-08"}) }},
		{"a text of a tag made by a request, twice", func() error { return l.Texts("made", []string{"M-1"}) }, func() error { return l.Texts("made", []string{"M-1"}) }},
		{"a sequence number not above the last", func() error { return l.Next("inbox", "k", []int64{4, 5}) }, func() error { return l.Next("inbox", "k", []int64{5}) }},
		{"a batch of numbers not consecutive", func() error { return nil }, func() error { return l.Next("inbox", "j", []int64{1, 3}) }},
		{"a current below a number issued", func() error { return l.Current("inbox", "k", 5) }, func() error { return l.Current("inbox", "k", 4) }},
		{"a routing table naming no instance", func() error { return l.Routes("inbox", 1, []string{fl.A.Addr}, []int{0}) },
			func() error { return l.Routes("inbox", 1, []string{"127.0.0.1:1"}, []int{0}) }},
		{"a snowflake id twice", func() error { return l.Snowflake([]int64{9}) }, func() error { return l.Snowflake([]int64{9}) }},
	} {
		if err := tc.ok(); err != nil {
			t.Errorf("%s: the good case failed: %v", tc.name, err)
		}
		if err := tc.bad(); err == nil {
			t.Errorf("%s: not caught", tc.name)
		}
	}

	// At the owners.
	for _, tc := range []struct {
		name string
		do   func()
	}{
		{"numbers of a row not increasing", func() { l.issued("t", "t", 0, 2, []int64{3, 4}); l.issued("t", "t", 0, 1, []int64{4}) }},
		{"a number past the limit", func() { l.issued("u", "u", 5, 1, []int64{6}) }},
		{"fewer numbers than asked", func() { l.issued("v", "v", 0, 2, []int64{1}) }},
		{"a refusal that took numbers", func() {
			l.issued("w", "w", 9, 1, []int64{1})
			l.refused("w", "w", 9, 9, 8, false)
			l.issued("w", "w", 9, 1, []int64{3})
		}},
		{"a full row written", func() { l.refused("x", "x", 9, 1, 0, true) }},
		{"more left than the limit allows", func() { l.issued("y", "y", 9, 1, []int64{5}); l.refused("y", "y", 9, 9, 5, false) }},
	} {
		l.mu.Lock()
		l.fault = nil
		l.mu.Unlock()
		tc.do()
		if l.Fault() == nil {
			t.Errorf("%s: not caught", tc.name)
		}
	}
}
