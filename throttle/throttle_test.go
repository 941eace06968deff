package throttle

import (
	"testing"
	"time"
)

// TestLimiter: one event per key and period passes, the next that passes
// says how many were held back, and Forget lets the next one through.
func TestLimiter(t *testing.T) {
	now := time.Unix(0, 0)
	l := New(10 * time.Second)
	l.now = func() time.Time { return now }
	allow := func(key string, wantOK bool, wantDropped int) {
		t.Helper()
		if ok, dropped := l.Allow(key); ok != wantOK || dropped != wantDropped {
			t.Fatalf("Allow(%q) at %v = %v, %d; want %v, %d", key, now.Unix(), ok, dropped, wantOK, wantDropped)
		}
	}
	allow("a", true, 0)
	allow("a", false, 0)
	allow("b", true, 0) // keys apart
	now = now.Add(5 * time.Second)
	allow("a", false, 0)
	now = now.Add(5 * time.Second)
	allow("a", true, 2)
	allow("a", false, 0)
	l.Forget("a")
	allow("a", true, 0)
}
