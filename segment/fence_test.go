package segment_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

// regressions collects the Regression events of an allocator.
type regressions struct {
	mu  sync.Mutex
	all []segment.Regression
}

func (r *regressions) add(ev segment.Regression) {
	r.mu.Lock()
	r.all = append(r.all, ev)
	r.mu.Unlock()
}

func (r *regressions) list() []segment.Regression {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]segment.Regression(nil), r.all...)
}

func newFencedAllocator(tb testing.TB, st segment.Store, jump int64, seen *regressions) *segment.Allocator {
	tb.Helper()
	a := segment.New(st, segment.Options{Now: newClock().Now, RefreshInterval: -1, RideThrough: -1, FailoverJump: jump, OnRegression: seen.add})
	tb.Cleanup(func() { _ = a.Close() })
	return a
}

// rewind sets the row's max_id back, as a failover to a replica that missed
// the last writes does.
func rewind(st *segmenttest.MemStore, tag string, maxID int64) {
	st.Edit(tag, func(r *segment.Tag) { r.MaxID = maxID })
}

func TestFenceMovesARowThatWentBack(t *testing.T) {
	const jump = 1_000_000
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
	var seen regressions
	a := newFencedAllocator(t, st, jump, &seen)

	issued := map[int64]bool{}
	next := func() int64 {
		t.Helper()
		id := mustNext(t, a, "t")
		if issued[id] {
			t.Fatalf("id %d issued twice", id)
		}
		issued[id] = true
		return id
	}
	for range 150 { // the first range (1..100) and part of the next (101..300)
		next()
	}
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return !state(t, a, "t").Loading })
	high := state(t, a, "t").HighMaxID
	rewind(st, "t", 51) // the database lost every range but the first 50 ids

	// Drain what is buffered and go on: the next load finds the row behind.
	var last int64
	for range 2000 {
		if last = next(); last >= high {
			break
		}
	}
	if last < high+jump {
		t.Fatalf("after the regression ids continue at %d, want at least %d (high %d + jump %d)", last, high+jump, high, jump)
	}
	evs := seen.list()
	if len(evs) != 1 {
		t.Fatalf("%d regression events, want 1: %+v", len(evs), evs)
	}
	ev := evs[0]
	if ev.Tag != "t" || ev.High != high || ev.Found != 51 || ev.MaxID < high+jump || ev.Err != nil {
		t.Fatalf("regression event %+v: want tag t, high %d, found 51, max_id >= %d", ev, high, high+jump)
	}
	if got := state(t, a, "t").Regressions; got != 1 {
		t.Fatalf("Regressions = %d, want 1", got)
	}
	row, _ := st.Tag(context.Background(), "t")
	if row.MaxID < high+jump {
		t.Fatalf("row max_id = %d after the fence, want at least %d", row.MaxID, high+jump)
	}
}

func TestFenceFailureServesNothingStale(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	var seen regressions
	a := newFencedAllocator(t, st, 1000, &seen)
	take(t, a, "t", 1, 5) // half of 1..10: the next range, 11..30, is loaded
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return !state(t, a, "t").Loading && state(t, a, "t").Loads == 2 })
	rewind(st, "t", 1)
	st.SetFailAbove(errDown)

	for i := range 25 { // 6..30 are buffered
		if id := mustNext(t, a, "t"); id != int64(6+i) {
			t.Fatalf("buffered id %d = %d, want %d", i, id, 6+i)
		}
	}
	id, err := a.Next(context.Background(), "t")
	if !errors.Is(err, segment.ErrUnavailable) {
		t.Fatalf("Next with the row behind and the fence failing = %d, %v; want ErrUnavailable", id, err)
	}
	if evs := seen.list(); len(evs) == 0 || !errors.Is(evs[0].Err, errDown) {
		t.Fatalf("regression events %+v: want one with the fence's error", evs)
	}
}

func TestRefreshFindsARowThatWentBack(t *testing.T) {
	const jump = 5000
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100}, segment.Tag{Name: "u", MaxID: 1, Step: 100})
	var seen regressions
	a := newFencedAllocator(t, st, jump, &seen)
	take(t, a, "t", 1, 15) // past 10% of 1..100: 101..300 is loaded
	take(t, a, "u", 1, 15)
	testkit.WaitFor(t, 0, "the prefetches", func() bool { return state(t, a, "t").Loads == 2 && state(t, a, "u").Loads == 2 })
	rewind(st, "t", 101)

	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 0, "the fence", func() bool { return state(t, a, "t").Regressions == 1 })
	row, _ := st.Tag(context.Background(), "t")
	if row.MaxID < 301+jump {
		t.Fatalf("row max_id = %d after the refresh found it behind, want at least %d", row.MaxID, 301+jump)
	}
	if got := state(t, a, "u").Regressions; got != 0 {
		t.Fatalf("tag u, whose row is fine, has %d regressions", got)
	}
	// The buffered ids are still served, and the next load is above the jump.
	take(t, a, "t", 16, 285)
	if id := mustNext(t, a, "t"); id < 301+jump {
		t.Fatalf("first id after the buffers = %d, want at least %d", id, 301+jump)
	}
	if n := len(seen.list()); n != 1 {
		t.Fatalf("%d regression events, want 1", n)
	}
}

func TestRefreshConfirmsBeforeJumping(t *testing.T) {
	// A read that shows the row behind (a lagging node) while allocations
	// see it where it is: no jump.
	st := &laggingReads{MemStore: segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})}
	var seen regressions
	a := newFencedAllocator(t, st, 5000, &seen)
	take(t, a, "t", 1, 15)
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return state(t, a, "t").Loads == 2 })
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 0, "the check", func() bool { return st.AllocateCalls() == 3 })
	if evs := seen.list(); len(evs) != 0 {
		t.Fatalf("regressions %+v after a stale read alone", evs)
	}
	row, _ := st.MemStore.Tag(context.Background(), "t")
	if row.MaxID != 302 {
		t.Fatalf("row max_id = %d, want 302 (two ranges and the one id of the check)", row.MaxID)
	}
}

// laggingReads answers the tag list from long ago.
type laggingReads struct{ *segmenttest.MemStore }

func (l *laggingReads) Tags(context.Context) ([]segment.Tag, error) {
	return []segment.Tag{{Name: "t", MaxID: 1, Step: 100}}, nil
}
