package sequence_test

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
)

// orderedMember is a Sequencer serving the ordered tags of tags.
func (f *fixture) orderedMember(t *testing.T, name string, tags *sequencetest.OrderedTags) *sequence.Sequencer {
	t.Helper()
	q, err := sequence.New(sequence.Options{
		Store: f.store, Ordered: tags, Tags: tags, ID: name, Addr: name + ":8080", Lease: lease, Interval: -1, Now: f.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(context.Background()) })
	return q
}

// TestOrderedTag: an ordered tag is served by one member; its ids strictly
// increase through a handover and a death, each new owner starting above
// the ranges the old one took.
func TestOrderedTag(t *testing.T) {
	f := newFixture(t)
	tags := sequencetest.NewOrderedTags(f.store, 10)
	tags.Create("orders", true)
	tags.Create("plain", false)
	a := f.orderedMember(t, "a", tags)
	ctx := context.Background()
	round(t, a)
	var last int64
	take := func(qs ...*sequence.Sequencer) {
		t.Helper()
		for range 25 {
			var (
				ids []int64
				err error
			)
			for _, q := range qs {
				if ids, err = q.NextTag(ctx, "orders", 3); err == nil {
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if id <= last {
					t.Fatalf("%d after %d", id, last)
				}
				last = id
			}
		}
	}
	take(a)
	b := f.orderedMember(t, "b", tags)
	round(t, b, a, b, a)
	take(a, b)
	// The owner dies: after its lease the other serves, above.
	owner, other := a, b
	if b.Stats().SectionsOwned == 1 {
		owner, other = b, a
	}
	owner.Abandon()
	f.clock.Add(lease)
	round(t, other)
	take(other)
	if _, err := owner.NextTag(ctx, "orders", 1); !errors.Is(err, sequence.ErrClosed) && !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("dead owner: %v", err)
	}
}

// TestOrderedTagParallel takes ids of one ordered tag from many
// goroutines: none twice, each caller's increasing.
func TestOrderedTagParallel(t *testing.T) {
	f := newFixture(t)
	tags := sequencetest.NewOrderedTags(f.store, 7)
	tags.Create("orders", true)
	q := f.orderedMember(t, "a", tags)
	round(t, q)
	got := make([]map[string][]int64, 8)
	var wg sync.WaitGroup
	for w := range got {
		got[w] = map[string][]int64{}
		wg.Go(func() {
			for i := range 500 {
				ids, err := q.NextTag(context.Background(), "orders", 1+i%4)
				if err != nil {
					t.Error(err)
					return
				}
				got[w]["orders"] = append(got[w]["orders"], ids...)
			}
		})
	}
	wg.Wait()
	checkSequences(t, got)
}

// TestOrderedRowLimit: a row numbered up to a limit (a capped format's
// period) is raised no further than the limit; a request for more than is
// left is refused and takes nothing; a full row costs the store nothing.
func TestOrderedRowLimit(t *testing.T) {
	f := newFixture(t)
	tags := sequencetest.NewOrderedTags(f.store, 10)
	tags.Create("inv", true)
	q := f.orderedMember(t, "a", tags)
	round(t, q)
	ctx := context.Background()
	next := func(row string, n int) ([]int64, error) {
		t.Helper()
		return q.NextRow(ctx, "inv", row, 25, n)
	}
	if ids, err := next("inv@1", 3); err != nil || ids[0] != 1 || ids[2] != 3 {
		t.Fatalf("first three = %v, %v", ids, err)
	}
	if _, err := next("inv@1", 23); !errors.Is(err, sequence.ErrFull) {
		t.Fatalf("23 of the 22 left: %v, want ErrFull", err)
	}
	ids, err := next("inv@1", 22)
	if err != nil || ids[0] != 4 || ids[21] != 25 {
		t.Fatalf("the 22 left after a refusal = %v, %v; want 4..25", ids, err)
	}
	if got := tags.MaxID("inv@1"); got != 26 {
		t.Fatalf("max_id = %d, want 26: no number above the limit taken", got)
	}
	raises := tags.Raises()
	for range 30 {
		if _, err := next("inv@1", 1); !errors.Is(err, sequence.ErrFull) {
			t.Fatalf("a full row: %v", err)
		}
	}
	if got := tags.Raises(); got != raises {
		t.Fatalf("30 refusals of a full row raised it %d times", got-raises)
	}
	// The next period numbers its own row from 1.
	if ids, err := next("inv@2", 1); err != nil || ids[0] != 1 {
		t.Fatalf("next period = %v, %v", ids, err)
	}
}

// TestOrderedHandBack: an owner that stops serving an ordered tag cleanly
// (a handover, Close) hands back what it took and did not issue, so the
// next owner goes on with no gap.
func TestOrderedHandBack(t *testing.T) {
	f := newFixture(t)
	tags := sequencetest.NewOrderedTags(f.store, 100)
	tags.Create("orders", true)
	a := f.orderedMember(t, "a", tags)
	round(t, a)
	ctx := context.Background()
	var last int64
	take := func(qs ...*sequence.Sequencer) {
		t.Helper()
		for _, q := range qs {
			if ids, err := q.NextTag(ctx, "orders", 3); err == nil {
				if ids[0] != last+1 {
					t.Fatalf("ids %v after %d: a gap", ids, last)
				}
				last = ids[2]
				return
			}
		}
		t.Fatal("no member serves the tag")
	}
	take(a)
	b := f.orderedMember(t, "b", tags)
	round(t, b, a, b, a, b)
	take(a, b)
	take(a, b)
	owner, other := a, b
	if b.Stats().SectionsOwned == 1 {
		owner, other = b, a
	}
	if err := owner.Close(ctx); err != nil {
		t.Fatal(err)
	}
	round(t, other)
	take(other)
}

// TestSkippedCounted: the numbers an ordered tag's owner held when it lost
// its lease are counted as skipped, with their cause, and told; the heir
// starts above them.
func TestSkippedCounted(t *testing.T) {
	f := newFixture(t)
	tags := sequencetest.NewOrderedTags(f.store, 100)
	tags.Create("orders", true)
	var (
		mu     sync.Mutex
		events []sequence.Event
	)
	a, err := sequence.New(sequence.Options{
		Store: f.store, Ordered: tags, Tags: tags, ID: "a", Addr: "a:8080", Lease: lease, Interval: -1, Now: f.clock.Now,
		OnEvent: func(e sequence.Event) {
			if e.Kind == "skipped" {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	round(t, a)
	ctx := context.Background()
	if ids, err := a.NextTag(ctx, "orders", 3); err != nil || ids[2] != 3 {
		t.Fatalf("a's first ids: %v, %v", ids, err)
	}
	// a stops renewing (a pause); b takes the tag once the lease ran out.
	f.clock.Add(lease)
	b := f.orderedMember(t, "b", tags)
	round(t, b)
	if ids, err := b.NextTag(ctx, "orders", 1); err != nil || ids[0] != 101 {
		t.Fatalf("b's first id: %v, %v; want 101, above a's range", ids, err)
	}
	round(t, a) // a learns that it lost the tag
	want := map[sequence.Skip]int64{{Tag: "orders", Cause: sequence.SkipLeaseLost}: 97}
	if got := a.Skipped(); !maps.Equal(got, want) {
		t.Errorf("a skipped %v, want %v: 4..100, held when the lease was lost", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0].Row != "orders" || events[0].First != 4 || events[0].Count != 97 || events[0].Cause != sequence.SkipLeaseLost {
		t.Errorf("events told: %+v", events)
	}
}

// TestOrderedBound: an ordered tag issues every id up to its bound, then
// refuses with segment.ErrBoundReached, taking none; a raised bound lets
// it go on with the next id, and a lowered one stops it at once.
func TestOrderedBound(t *testing.T) {
	f := newFixture(t)
	tags := sequencetest.NewOrderedTags(f.store, 100)
	tags.Create("orders", true)
	var bound atomic.Int64
	bound.Store(150)
	q, err := sequence.New(sequence.Options{
		Store: f.store, Ordered: tags, Tags: tags, ID: "a", Addr: "a:8080", Lease: lease, Interval: -1, Now: f.clock.Now,
		Bound: func(string) int64 { return bound.Load() },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(context.Background()) })
	round(t, q)
	ctx := context.Background()
	next := func(n int) ([]int64, error) { return q.NextTag(ctx, "orders", n) }
	if ids, err := next(140); err != nil || ids[139] != 140 {
		t.Fatalf("140 ids: %v, %v", len(ids), err)
	}
	if _, err := next(11); !errors.Is(err, segment.ErrBoundReached) {
		t.Fatalf("11 ids with 10 left: %v, want ErrBoundReached", err)
	}
	if ids, err := next(10); err != nil || ids[0] != 141 || ids[9] != 150 {
		t.Fatalf("the last 10: %v, %v", ids, err)
	}
	if _, err := next(1); !errors.Is(err, segment.ErrBoundReached) {
		t.Fatalf("past the bound: %v", err)
	}
	bound.Store(1000)
	if ids, err := next(1); err != nil || ids[0] != 151 {
		t.Fatalf("after the bound was raised: %v, %v; want 151", ids, err)
	}
	bound.Store(151)
	if _, err := next(1); !errors.Is(err, segment.ErrBoundReached) {
		t.Fatalf("after the bound was lowered to the last id: %v", err)
	}
}
