package sequence_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/leafid/leaf/internal/sequencetest"
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
	for _, tc := range []struct {
		tag  string
		want bool
	}{{"orders", true}, {"plain", false}, {"nope", false}} {
		if got, err := a.Ordered(ctx, tc.tag); err != nil || got != tc.want {
			t.Fatalf("Ordered(%s) = %v, %v", tc.tag, got, err)
		}
	}
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
