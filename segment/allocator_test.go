package segment_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

func TestNextStep(t *testing.T) {
	tests := []struct {
		name          string
		step, minStep int64
		lasted        time.Duration
		want          int64
	}{
		{"under 15 minutes doubles", 1000, 1000, time.Minute, 2000},
		{"just under 15 minutes doubles", 1000, 1000, 15*time.Minute - time.Nanosecond, 2000},
		{"doubling stops at MaxStep", 800_000, 1000, time.Minute, segment.MaxStep},
		{"at MaxStep stays", segment.MaxStep, 1000, time.Second, segment.MaxStep},
		{"15 minutes keeps", 4000, 1000, 15 * time.Minute, 4000},
		{"29 minutes keeps", 4000, 1000, 29 * time.Minute, 4000},
		{"30 minutes halves", 4000, 1000, 30 * time.Minute, 2000},
		{"hours halve", 4000, 1000, 5 * time.Hour, 2000},
		{"halving stops at the row's step", 1500, 1000, time.Hour, 1000},
		{"at the row's step stays", 1000, 1000, time.Hour, 1000},
		{"row's step raised above the step", 1000, 5000, 20 * time.Minute, 5000},
		{"row's step above MaxStep is kept", 2_000_000, 2_000_000, time.Second, 2_000_000},
		{"step of one doubles", 1, 1, time.Second, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := segment.NextStep(tt.step, tt.minStep, tt.lasted); got != tt.want {
				t.Errorf("NextStep(%d, %d, %v) = %d, want %d", tt.step, tt.minStep, tt.lasted, got, tt.want)
			}
		})
	}
}

func TestFirstSegmentIsTheRowsRange(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "orders", MaxID: 1, Step: 2000})
	a := newAllocator(t, st, newClock())
	take(t, a, "orders", 1, 100)
	if got := st.AllocateCalls(); got != 1 {
		t.Fatalf("store calls after 100 ids = %d, want 1", got)
	}
	s := state(t, a, "orders")
	cur := s.Segments[s.Current]
	if cur.Start != 1 || cur.End != 2001 || cur.Next != 101 || cur.Remaining != 1900 {
		t.Fatalf("current segment = %+v, want [1, 2001) next 101 remaining 1900", *cur)
	}
}

func TestPrefetchStartsAfterTenPercent(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
	a := newAllocator(t, st, newClock())
	take(t, a, "t", 1, 10) // 10% used: no load yet
	if got := st.AllocateCalls(); got != 1 {
		t.Fatalf("store calls at 10%% = %d, want 1", got)
	}
	take(t, a, "t", 11, 1) // past 10%: one background load
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return state(t, a, "t").Segments[1] != nil })
	take(t, a, "t", 12, 50) // no second load while the next half is full
	if got := st.AllocateCalls(); got != 2 {
		t.Fatalf("store calls after prefetch = %d, want 2", got)
	}
	s := state(t, a, "t")
	if next := s.Segments[1]; next.Start != 101 || next.End != 301 {
		t.Fatalf("prefetched segment = [%d, %d), want [101, 301) (step doubled)", next.Start, next.End)
	}
}

// TestStepRidesThrough: the segment loaded next holds RideThrough of ids
// at the rate the current one is used, so that a database without a
// writable node for that long (an election) is not waited on; a rate read
// over less than 10 ms is read over 10 ms.
func TestStepRidesThrough(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ride     time.Duration
		over     time.Duration // the time the first 11 ids take
		from, to int64         // of the segment loaded next
	}{
		{"ten ids a second", 0, 1100 * time.Millisecond, 101, 101 + 300},          // 30 s of 10 ids/s
		{"a hundred ids a second", 0, 110 * time.Millisecond, 101, 101 + 3_000},   // 30 s of 100 ids/s
		{"a minute asked", time.Minute, 110 * time.Millisecond, 101, 101 + 6_000}, // 60 s of 100 ids/s
		{"a burst", 0, 0, 101, 101 + 33_000},                                      // 11 ids in 10 ms
		{"none", -1, 110 * time.Millisecond, 101, 301},                            // the doubling alone
		{"slower than the doubling", 0, 110 * time.Second, 101, 301},              // 30 s hold 3 ids
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
			a := segment.New(st, segment.Options{Now: c.Now, RefreshInterval: -1, RideThrough: tc.ride})
			t.Cleanup(func() { _ = a.Close() })
			take(t, a, "t", 1, 10)
			c.Add(tc.over)
			take(t, a, "t", 11, 1) // past 10%: the next load
			testkit.WaitFor(t, 0, "the prefetch", func() bool { return state(t, a, "t").Segments[1] != nil })
			if next := state(t, a, "t").Segments[1]; next.Start != tc.from || next.End != tc.to {
				t.Fatalf("prefetched segment = [%d, %d), want [%d, %d)", next.Start, next.End, tc.from, tc.to)
			}
		})
	}
}

func TestSwitchNeitherLosesNorRepeats(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	a := newAllocator(t, st, newClock())
	take(t, a, "t", 1, 20_000) // consecutive across many switches
	if s := state(t, a, "t"); s.Issued != 20_000 {
		t.Fatalf("Issued = %d, want 20000", s.Issued)
	}
}

func TestStepAdapts(t *testing.T) {
	c := newClock()
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
	a := newAllocator(t, st, c)
	mustNext(t, a, "t")
	// spend one whole segment per round, with a given time between loads
	spend := func(lasted time.Duration) {
		t.Helper()
		c.Add(lasted)
		s := state(t, a, "t")
		for range s.Segments[s.Current].Remaining {
			mustNext(t, a, "t") // passes 10% of the segment: one load
		}
		testkit.WaitFor(t, 0, "the prefetch", func() bool { return !state(t, a, "t").Loading })
		mustNext(t, a, "t") // switches to the prefetched segment
	}
	spend(time.Minute)      // load 2: fast -> 200
	spend(time.Minute)      // load 3: fast -> 400
	spend(20 * time.Minute) // load 4: 15-30 min -> 400
	spend(time.Hour)        // load 5: slow -> 200
	spend(time.Hour)        // load 6: slow -> 100
	spend(time.Hour)        // load 7: never below the row's step
	got := st.Steps()
	want := []int64{0, 200, 400, 400, 200, 100, 100}
	if len(got) != len(want) {
		t.Fatalf("steps asked = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("steps asked = %v, want %v", got, want)
		}
	}
}

func TestWaitForLoadIsBoundedByContext(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 1000})
	a := newAllocator(t, st, newClock())
	take(t, a, "t", 1, 1)
	block := make(chan struct{})
	began := make(chan string, 10)
	st.SetAllocateBlock(block, began)
	take(t, a, "t", 2, 999) // the prefetch begins and hangs
	<-began

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := a.Next(ctx, "t")
	if !errors.Is(err, segment.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with both halves empty = %v, want ErrUnavailable wrapping the deadline", err)
	}

	// many waiters share the one load in flight
	var wg sync.WaitGroup
	ids := make(chan int64, 50)
	for range 50 {
		wg.Go(func() {
			id, err := a.Next(context.Background(), "t")
			if err != nil {
				t.Errorf("Next: %v", err)
			}
			ids <- id
		})
	}
	testkit.WaitFor(t, 0, "50 waiters", func() bool { return state(t, a, "t").Waits >= 51 })
	close(block)
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] || id <= 1000 {
			t.Fatalf("id %d repeated or from the spent segment", id)
		}
		seen[id] = true
	}
	if got := st.AllocateCalls(); got != 2 {
		t.Fatalf("store calls = %d, want 2 (first load and one prefetch)", got)
	}
}

func TestStoreDownThenBack(t *testing.T) {
	c := newClock()
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
	a := newAllocator(t, st, c)
	take(t, a, "t", 1, 1)
	st.SetFail(errDown)

	// buffered ids keep flowing although the prefetch fails
	take(t, a, "t", 2, 99)
	testkit.WaitFor(t, 0, "the failed prefetch", func() bool { return state(t, a, "t").LoadFailures == 1 })
	calls := st.AllocateCalls()

	// buffers empty: fail at once, without another load during the back-off
	start := time.Now()
	for range 100 {
		_, err := a.Next(context.Background(), "t")
		if !errors.Is(err, segment.ErrUnavailable) || !errors.Is(err, errDown) {
			t.Fatalf("Next with the store down = %v, want ErrUnavailable wrapping the cause", err)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("100 failing calls took %v; they must not wait", took)
	}
	if got := st.AllocateCalls(); got != calls {
		t.Fatalf("store calls during back-off grew from %d to %d", calls, got)
	}
	if s := state(t, a, "t"); s.LoadFailures == 0 || s.LastError == "" {
		t.Fatalf("state does not show the failure: %+v", s)
	}

	// the store is back: after the back-off the next call loads again
	st.SetFail(nil)
	c.Add(segment.DefaultRetryMax)
	take(t, a, "t", 101, 300)
}

func TestUnknownTag(t *testing.T) {
	c := newClock()
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	a := newAllocator(t, st, c)
	for range 10 {
		if _, err := a.Next(context.Background(), "nope"); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("Next(unknown) = %v, want ErrUnknownTag", err)
		}
	}
	if got := st.AllocateCalls(); got != 0 {
		t.Fatalf("Allocate calls for an unknown tag = %d, want 0", got)
	}
	if got := st.TagsCalls(); got != 0 {
		t.Fatalf("list reads for 10 requests of an unknown tag = %d, want 0 (names are looked up)", got)
	}

	// Added makes a new tag usable without a look-up
	a.Next(context.Background(), "later")
	st.Put(segment.Tag{Name: "later", MaxID: 1, Step: 10})
	a.Added("later")
	finds := st.FindTagsCalls()
	take(t, a, "later", 1, 1)
	if got := st.FindTagsCalls(); got != finds {
		t.Fatalf("look-ups of an Added tag = %d, want 0", got-finds)
	}

	// a row deleted is unknown again, without a store call per request
	st.Delete("later")
	a.Refresh(context.Background())
	calls := st.AllocateCalls()
	for range 5 {
		if _, err := a.Next(context.Background(), "later"); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("Next of a deleted tag = %v, want ErrUnknownTag", err)
		}
	}
	if got := st.AllocateCalls(); got != calls {
		t.Fatalf("Allocate calls for a deleted tag grew from %d to %d", calls, got)
	}
}

// TestTagCreatedElsewhereServedAtOnce: a tag whose row was created by
// another instance, the command line or an INSERT is served on its first
// request, however recently other unknown names were looked up.
func TestTagCreatedElsewhereServedAtOnce(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	a := newAllocator(t, st, newClock()) // the clock never moves
	for i := range 3 {
		stray := fmt.Sprintf("stray-%d", i)
		if _, err := a.Next(context.Background(), stray); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("Next(%q) = %v, want ErrUnknownTag", stray, err)
		}
		late := fmt.Sprintf("late%d", i)
		st.Put(segment.Tag{Name: late, MaxID: 100, Step: 10})
		take(t, a, late, 100, 3)
	}
}

// TestManyUnknownNames: however many distinct names arrive, unknown ones
// cost no UPDATE, no buffer, no read of the whole list and no state once
// answered; spellings of a row that differ from its name are unknown.
func TestManyUnknownNames(t *testing.T) {
	c := newClock()
	st := segmenttest.New(segment.Tag{Name: "orders", MaxID: 1, Step: 10})
	st.SetFold(true) // as MySQL's collations would match them
	a := newAllocator(t, st, c)
	take(t, a, "orders", 1, 3)
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return !state(t, a, "orders").Loading })
	allocs, lists := st.AllocateCalls(), st.TagsCalls()
	names := []string{"ORDERS", "Orders", "orders ", "oRdErS"}
	for i := range 2000 {
		names = append(names, fmt.Sprintf("random-%d", i))
	}
	for range 3 {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < len(names); i += 8 {
					if _, err := a.Next(context.Background(), names[i]); !errors.Is(err, segment.ErrUnknownTag) {
						t.Errorf("Next(%q) = %v, want ErrUnknownTag", names[i], err)
					}
				}
			})
		}
		wg.Wait()
	}
	if most := st.MostFindTagsAtOnce(); most != 1 {
		t.Errorf("look-up reads at once = %d, want 1", most)
	}
	if finds := st.FindTagsCalls(); finds > 3*len(names) {
		t.Errorf("look-up reads = %d for %d requests", finds, 3*len(names))
	}
	if got := st.AllocateCalls(); got != allocs {
		t.Fatalf("Allocate calls grew from %d to %d for unknown names", allocs, got)
	}
	if got := st.TagsCalls(); got != lists {
		t.Fatalf("list reads grew from %d to %d for unknown names", lists, got)
	}
	if got := len(a.Snapshot()); got != 1 {
		t.Fatalf("buffers = %d, want 1", got)
	}
	take(t, a, "orders", 4, 3) // still in order
}

// TestLookupsShareOneRead: the names asked for while a look-up read runs
// are read together in the next one, and the tags among them are served.
func TestLookupsShareOneRead(t *testing.T) {
	st := segmenttest.New()
	a := newAllocator(t, st, newClock())
	block, began := make(chan struct{}), make(chan int, 2)
	st.SetFindBlock(block, began)
	first := make(chan error, 1)
	go func() { _, err := a.Next(context.Background(), "first"); first <- err }()
	if n := <-began; n != 1 {
		t.Fatalf("the first read asked about %d names, want 1", n)
	}
	for i := range 3 {
		name := fmt.Sprintf("new%d", i)
		st.Put(segment.Tag{Name: name, MaxID: 1, Step: 10})
	}
	var wg sync.WaitGroup
	const asked = 50
	for i := range asked {
		wg.Go(func() {
			name := fmt.Sprintf("new%d", i)
			id, err := a.Next(context.Background(), name)
			switch {
			case i < 3 && (err != nil || id != 1):
				t.Errorf("Next(%q) = %d, %v; want 1", name, id, err)
			case i >= 3 && !errors.Is(err, segment.ErrUnknownTag):
				t.Errorf("Next(%q) = %v, want ErrUnknownTag", name, err)
			}
		})
	}
	testkit.WaitFor(t, 0, "every name to wait for the next read", func() bool {
		return segment.LookupsWaiting(a) == asked
	})
	close(block)
	if err := <-first; !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Next(first) = %v, want ErrUnknownTag", err)
	}
	if n := <-began; n != asked {
		t.Fatalf("the second read asked about %d names, want %d", n, asked)
	}
	wg.Wait()
	if got := st.FindTagsCalls(); got != 2 {
		t.Fatalf("look-up reads = %d, want 2", got)
	}
}

func TestFirstRequestsShareOneLoad(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 1000})
	a := newAllocator(t, st, newClock())
	block := make(chan struct{})
	began := make(chan string, 1)
	st.SetAllocateBlock(block, began)
	var wg sync.WaitGroup
	ids := make([]int64, 64)
	for i := range ids {
		wg.Go(func() {
			id, err := a.Next(context.Background(), "t")
			if err != nil {
				t.Errorf("Next: %v", err)
			}
			ids[i] = id
		})
	}
	<-began
	st.SetAllocateBlock(block, nil)
	close(block)
	wg.Wait()
	if got := st.AllocateCalls(); got != 1 {
		t.Fatalf("store calls for 64 first requests = %d, want 1", got)
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] || id < 1 || id > 64 {
			t.Fatalf("id %d repeated or out of 1..64", id)
		}
		seen[id] = true
	}
}

func TestRefreshDropsTagsGoneFromTheStore(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "a", MaxID: 1, Step: 10}, segment.Tag{Name: "b", MaxID: 1, Step: 10})
	a := newAllocator(t, st, newClock())
	mustNext(t, a, "a")
	mustNext(t, a, "b")
	st.Delete("b")
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if snap := a.Snapshot(); len(snap) != 1 || snap[0].Tag != "a" {
		t.Fatalf("after refresh the buffers are %v, want only a", snap)
	}
	if _, err := a.Next(context.Background(), "b"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Next(dropped) = %v, want ErrUnknownTag", err)
	}
	st.SetFail(errDown)
	if err := a.Refresh(context.Background()); !errors.Is(err, errDown) {
		t.Fatalf("Refresh with the store down = %v", err)
	}
	if len(a.Snapshot()) != 1 {
		t.Fatal("a failed refresh dropped buffers")
	}
}

func TestOverflowIsAnErrorNotAWrap(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: math.MaxInt64 - 15, Step: 10})
	a := newAllocator(t, st, newClock())
	take(t, a, "t", math.MaxInt64-15, 15) // the last range is cut to the 5 ids left
	for range 3 {
		id, err := a.Next(context.Background(), "t")
		if !errors.Is(err, segment.ErrExhausted) {
			t.Fatalf("Next past the int64 maximum = %d, %v; want ErrExhausted", id, err)
		}
	}
}

func TestNeverIDZero(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: -5, Step: 10})
	a := newAllocator(t, st, newClock())
	take(t, a, "t", 1, 4) // range [-5, 4] clipped to [1, 4]
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return !state(t, a, "t").Loading })
	take(t, a, "t", 5, 20)
}

func TestNextN(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 7})
	a := newAllocator(t, st, newClock())
	next := int64(1)
	for _, n := range []int{1, 5, 7, 20, 0, 100, 3} {
		ids, err := a.NextN(context.Background(), "t", n)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != n {
			t.Fatalf("NextN(%d) gave %d ids", n, len(ids))
		}
		for _, id := range ids {
			if id != next {
				t.Fatalf("NextN(%d) gave %v, want consecutive from %d", n, ids, next)
			}
			next++
		}
	}
	if _, err := a.NextN(context.Background(), "nope", 3); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("NextN(unknown) = %v", err)
	}
}

func TestCloseStopsEveryGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	a := segment.New(st, segment.Options{RefreshInterval: time.Millisecond, RideThrough: -1})
	take(t, a, "t", 1, 10) // segment [1, 11) spent; [11, 31) prefetched
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return !state(t, a, "t").Loading })
	block := make(chan struct{})
	defer close(block)
	began := make(chan string, 1)
	st.SetAllocateBlock(block, began)
	take(t, a, "t", 11, 3) // the next prefetch starts and hangs in the store
	<-began
	take(t, a, "t", 14, 17)
	waiter := make(chan error)
	go func() { _, err := a.Next(context.Background(), "t"); waiter <- err }()
	testkit.WaitFor(t, 0, "the waiter", func() bool { return state(t, a, "t").Waits > 0 })

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waiter; !errors.Is(err, segment.ErrClosed) && !errors.Is(err, segment.ErrUnavailable) {
		t.Fatalf("waiter after Close = %v, want ErrClosed", err)
	}
	testkit.WaitFor(t, 0, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
	if _, err := a.Next(context.Background(), "other"); !errors.Is(err, segment.ErrClosed) {
		t.Fatalf("Next of a new tag after Close = %v, want ErrClosed", err)
	}
}

func TestParallelUniqueness(t *testing.T) {
	const goroutines, each = 16, 12_500 // 200,000 ids
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 50})
	a := segment.New(st, segment.Options{Now: slowClock(), RefreshInterval: -1}) // the step stays 50
	t.Cleanup(func() { _ = a.Close() })
	got := issueConcurrently(t, func(g int) *segment.Allocator { return a }, "t", goroutines, each, 4, 37)
	n := checkUnique(t, got)
	t.Logf("%d ids, %d loads", n, st.AllocateCalls())
}

// issueConcurrently runs goroutines that take each ids of tag from the
// allocator alloc(g) returns for goroutine g; every batchEvery-th goroutine
// takes batches of up to batch ids. It returns each goroutine's ids.
func issueConcurrently(t *testing.T, alloc func(g int) *segment.Allocator, tag string, goroutines, each, batchEvery, batch int) [][]int64 {
	t.Helper()
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		a := alloc(g)
		wg.Go(func() {
			ids := make([]int64, 0, each)
			for len(ids) < each {
				if g%batchEvery == 0 {
					b, err := a.NextN(context.Background(), tag, min(batch, each-len(ids)))
					if err != nil {
						t.Errorf("NextN: %v", err)
						return
					}
					ids = append(ids, b...)
					continue
				}
				id, err := a.Next(context.Background(), tag)
				if err != nil {
					t.Errorf("Next: %v", err)
					return
				}
				ids = append(ids, id)
			}
			got[g] = ids
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return got
}

// checkUnique fails t if any id repeats, is below 1, or does not increase
// within its goroutine; it returns the number of ids.
func checkUnique(t *testing.T, got [][]int64) int {
	t.Helper()
	seen := make(map[int64]struct{})
	for g, ids := range got {
		for i, id := range ids {
			if _, dup := seen[id]; dup {
				t.Fatalf("id %d issued twice", id)
			}
			seen[id] = struct{}{}
			if id < 1 {
				t.Fatalf("id %d below 1", id)
			}
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("goroutine %d: id %d after %d", g, id, ids[i-1])
			}
		}
	}
	return len(seen)
}

// FuzzValidateTag: any name Leaf's varchar(128) column can hold may be
// asked for; creation also refuses control characters, "." and "..".
func FuzzValidateTag(f *testing.F) {
	for _, s := range []string{"orders", "a.b_c:d-e", "", "white space", "ünïcode", "订单", "order/v2",
		string(make([]byte, 129)), "x\x00", ".", "..", "...", "\xff", strings.Repeat("é", 128), strings.Repeat("é", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := segment.ValidateTag(name)
		ok := utf8.ValidString(name) && name != "" && utf8.RuneCountInString(name) <= 128
		if ok != (err == nil) {
			t.Fatalf("ValidateTag(%q) = %v, want ok=%v", name, err, ok)
		}
		if err != nil && !errors.Is(err, segment.ErrInvalidTag) {
			t.Fatalf("ValidateTag(%q) = %v, not ErrInvalidTag", name, err)
		}
		errNew := segment.ValidateNewTag(name)
		okNew := ok && name != "." && name != ".." && !strings.ContainsFunc(name, unicode.IsControl)
		if okNew != (errNew == nil) {
			t.Fatalf("ValidateNewTag(%q) = %v, want ok=%v", name, errNew, okNew)
		}
		if errNew != nil && (!errors.Is(errNew, segment.ErrInvalidTag) || !utf8.ValidString(errNew.Error()) && utf8.ValidString(name)) {
			t.Fatalf("ValidateNewTag(%q) = %v, not ErrInvalidTag or not readable", name, errNew)
		}
	})
}

// TestNoLoadDuringBackOff: callers past the prefetch mark while a load
// fails must not start more loads until the back-off ends.
func TestNoLoadDuringBackOff(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: segment.MaxStep})
	a := newAllocator(t, st, newClock()) // the clock never moves: the back-off never ends
	mustNext(t, a, "t")
	st.SetFail(errDown)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20_000 {
				if _, err := a.Next(context.Background(), "t"); err != nil {
					t.Errorf("Next: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := st.AllocateCalls(); got != 2 {
		t.Fatalf("store calls = %d, want 2: the first load and one failed prefetch", got)
	}
}

// TestNamesAskedForDuringTheFirstListRead: a tag asked for while the list
// is being read for another waits for that read instead of being judged
// by the empty list before it.
func TestNamesAskedForDuringTheFirstListRead(t *testing.T) {
	var tags []segment.Tag
	for i := range 50 {
		tags = append(tags, segment.Tag{Name: fmt.Sprintf("t%d", i), MaxID: 1, Step: 10})
	}
	st := segmenttest.New(tags...)
	a := newAllocator(t, st, newClock())
	var wg sync.WaitGroup
	for _, tag := range tags {
		wg.Go(func() {
			if _, err := a.Next(context.Background(), tag.Name); err != nil {
				t.Errorf("Next(%q): %v", tag.Name, err)
			}
		})
	}
	wg.Wait()
}

func TestDescriptionRules(t *testing.T) {
	for _, tc := range []struct {
		desc string
		ok   bool
	}{
		{"order ids", true},
		{"订单\tids\r\nline two", true},
		{strings.Repeat("é", segment.MaxDescriptionLen), true},
		{strings.Repeat("é", segment.MaxDescriptionLen+1), false},
		{"bell\a", false},
		{"nul\x00", false},
		{"esc\x1b[31m", false},
		{"bad \xff utf-8", false},
	} {
		err := segment.Tag{Name: "t", MaxID: 1, Step: 1, Description: tc.desc}.Validate()
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, segment.ErrInvalidDescription) {
			t.Errorf("Validate(description %q) = %v, want ok=%v", tc.desc, err, tc.ok)
		}
		if err2 := (segment.TagUpdate{Description: &tc.desc}).Validate(); (err2 == nil) != tc.ok {
			t.Errorf("TagUpdate.Validate(description %q) = %v, want ok=%v", tc.desc, err2, tc.ok)
		}
	}
}

// TestFailedFirstLoadsAreListed: a tag of the list whose first load fails
// has no buffer, so Failed names it until a load succeeds.
func TestFailedFirstLoadsAreListed(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "bad", MaxID: 1, Step: 0}, segment.Tag{Name: "ok", MaxID: 1, Step: 10})
	a := newAllocator(t, st, newClock())
	take(t, a, "ok", 1, 1)
	for range 3 {
		if _, err := a.Next(context.Background(), "bad"); !errors.Is(err, segment.ErrMisconfigured) {
			t.Fatalf("Next(bad) = %v, want ErrMisconfigured", err)
		}
	}
	if _, err := a.Next(context.Background(), "nope"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatal(err)
	}
	got := a.Failed()
	if len(got) != 1 || got[0].Tag != "bad" || got[0].Failures != 3 || !strings.Contains(got[0].Err, "misconfigured") {
		t.Fatalf("Failed() = %+v, want bad with 3 failures", got)
	}
	st.Edit("bad", func(r *segment.Tag) { r.Step = 10 })
	take(t, a, "bad", 1, 1)
	if got := a.Failed(); len(got) != 0 {
		t.Fatalf("Failed() after a success = %+v", got)
	}
}

// TestLastLoadTook: the snapshot says how long the last successful load
// took, by the allocator's clock; a failed load leaves it as it was.
func TestLastLoadTook(t *testing.T) {
	c := newClock()
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	took := 40 * time.Millisecond
	st.SetAfter(func(string) { c.Add(took) })
	a := newAllocator(t, st, c)
	mustNext(t, a, "t")
	if got := state(t, a, "t").LastLoadTook; got != 40*time.Millisecond {
		t.Fatalf("after the first load: LastLoadTook = %v, want 40ms", got)
	}

	took = 70 * time.Millisecond
	mustNext(t, a, "t") // past 10%: the prefetch starts
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return !state(t, a, "t").Loading })
	if got := state(t, a, "t").LastLoadTook; got != 70*time.Millisecond {
		t.Fatalf("after the prefetch: LastLoadTook = %v, want 70ms", got)
	}

	st.SetFail(errDown)
	take(t, a, "t", 3, 18) // into the prefetched half, whose own prefetch fails
	testkit.WaitFor(t, 0, "the failed load", func() bool { return state(t, a, "t").LastError != "" })
	if got := state(t, a, "t").LastLoadTook; got != 70*time.Millisecond {
		t.Errorf("after a failed load: LastLoadTook = %v, want the last success's 70ms", got)
	}
}

// TestListedTagsNeedNoLookup: a tag of the last list read is loaded
// without a look-up, before and after it has a buffer; a name that was not
// on it is looked up.
func TestListedTagsNeedNoLookup(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "a", MaxID: 1, Step: 10}, segment.Tag{Name: "b", MaxID: 1, Step: 10})
	a := newAllocator(t, st, newClock())
	ctx := context.Background()
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	take(t, a, "a", 1, 1)
	if err := a.Refresh(ctx); err != nil { // a has a buffer now, b still none
		t.Fatal(err)
	}
	take(t, a, "b", 1, 1)
	take(t, a, "a", 2, 1)
	if got := st.FindTagsCalls(); got != 0 {
		t.Fatalf("%d look-ups for listed tags", got)
	}
	st.Put(segment.Tag{Name: "c", MaxID: 1, Step: 10})
	take(t, a, "c", 1, 1)
	if got := st.FindTagsCalls(); got != 1 {
		t.Fatalf("%d look-ups for a tag created after the list was read, want 1", got)
	}
}

// TestNextTellsTagsApart: tags whose first and last words are equal
// (lengths 4 to 16 share them here) and tags on both sides of that band
// each get their own row's ids, through Next's own probe of the table and
// through the table's lookup.
func TestNextTellsTagsApart(t *testing.T) {
	var tags []segment.Tag
	for n := 1; n <= 20; n++ {
		tags = append(tags, segment.Tag{Name: strings.Repeat("a", n), MaxID: int64(n) * 1000, Step: 10})
		tags = append(tags, segment.Tag{Name: strings.Repeat("a", n-1) + "b", MaxID: int64(n)*1000 + 500, Step: 10})
	}
	a := newAllocator(t, segmenttest.New(tags...), newClock())
	for round := range 3 {
		for _, tag := range tags {
			take(t, a, tag.Name, tag.MaxID+int64(round)*5, 5)
		}
	}
	if _, err := a.Next(context.Background(), "aaab"+"x"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Next of an unknown tag: %v, want ErrUnknownTag", err)
	}
}
