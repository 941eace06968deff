package segment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

// clock is the manual clock of the allocator's tests.
type clock = testkit.Clock

func newClock() *clock { return testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0) }

var errDown = errors.New("database is down")

// newAllocator returns an allocator with a manual clock, closed at cleanup.
func newAllocator(tb testing.TB, st segment.Store, c *clock) *segment.Allocator {
	tb.Helper()
	// The clock stands still unless a test moves it: no rate to ride
	// through by, and the steps are the doubling's alone.
	a := segment.New(st, segment.Options{Now: c.Now, RefreshInterval: -1, RideThrough: -1})
	tb.Cleanup(func() { _ = a.Close() })
	return a
}

// mustNext takes one id or fails the test.
func mustNext(tb testing.TB, a *segment.Allocator, tag string) int64 {
	tb.Helper()
	id, err := a.Next(context.Background(), tag)
	if err != nil {
		tb.Fatalf("Next(%q): %v", tag, err)
	}
	return id
}

// take takes n ids and checks that they are consecutive from first.
func take(tb testing.TB, a *segment.Allocator, tag string, first int64, n int) {
	tb.Helper()
	for i := range n {
		if id := mustNext(tb, a, tag); id != first+int64(i) {
			tb.Fatalf("id %d of %q = %d, want %d", i, tag, id, first+int64(i))
		}
	}
}

func state(tb testing.TB, a *segment.Allocator, tag string) segment.BufferState {
	tb.Helper()
	for _, st := range a.Snapshot() {
		if st.Tag == tag {
			return st
		}
	}
	tb.Fatalf("no buffer for %q", tag)
	return segment.BufferState{}
}
