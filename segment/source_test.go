package segment_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
)

// TestSourceBlocks: a Source takes blocks of 1, 2, 4, … consecutive ids,
// one after the other, and Allocator.Next takes the ids after them: a
// Source's ids increase, but it hands out ids below those Next handed
// out before.
func TestSourceBlocks(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 1000})
	a := newAllocator(t, st, newClock())
	src := a.Source("t")
	for i, want := range []struct {
		source bool
		id     int64
	}{
		{true, 1}, // the block [1]
		{false, 2},
		{true, 3}, // the block [3, 4]
		{false, 5},
		{true, 4},
		{true, 6}, // the block [6, 9]
		{false, 10},
		{true, 7},
	} {
		var id int64
		var err error
		if want.source {
			id, err = src.Next(context.Background())
		} else {
			id, err = a.Next(context.Background(), "t")
		}
		if err != nil || id != want.id {
			t.Fatalf("step %d (Source: %v) = %d, %v; want %d", i, want.source, id, err, want.id)
		}
	}
}

// TestSourceAlone: one Source of the only allocator gets every id of the
// tag in order, through many segments, whose ends cut its blocks short.
func TestSourceAlone(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 50})
	a := segment.New(st, segment.Options{Now: slowClock(), RefreshInterval: -1}) // the step stays 50
	t.Cleanup(func() { _ = a.Close() })
	src := a.Source("t")
	for want := int64(1); want <= 20_000; want++ {
		id, err := src.Next(context.Background())
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if id != want {
			t.Fatalf("Next = %d, want %d", id, want)
		}
	}
}

// TestSourceParallelUniqueness: goroutines with a Source each, beside
// goroutines calling Next and NextN, through many small segments: every id
// is unique, and each goroutine's ids increase.
func TestSourceParallelUniqueness(t *testing.T) {
	const goroutines, each = 16, 25_000 // 400,000 ids
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 500})
	a := segment.New(st, segment.Options{Now: slowClock(), RefreshInterval: -1}) // the step stays 500
	t.Cleanup(func() { _ = a.Close() })
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			ctx := context.Background()
			src := a.Source("t")
			ids := make([]int64, 0, each)
			for len(ids) < each {
				switch g {
				case 0:
					id, err := a.Next(ctx, "t")
					if err != nil {
						t.Errorf("Next: %v", err)
						return
					}
					ids = append(ids, id)
				case 1:
					batch, err := a.NextN(ctx, "t", min(37, each-len(ids)))
					if err != nil {
						t.Errorf("NextN: %v", err)
						return
					}
					ids = append(ids, batch...)
				default:
					id, err := src.Next(ctx)
					if err != nil {
						t.Errorf("Source.Next: %v", err)
						return
					}
					ids = append(ids, id)
				}
			}
			got[g] = ids
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	n := checkUnique(t, got)
	t.Logf("%d ids, %d loads", n, st.AllocateCalls())
}

func TestSourceErrors(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: math.MaxInt64 - 15, Step: 10})
	a := newAllocator(t, st, newClock())
	if _, err := a.Source("nope").Next(context.Background()); !errors.Is(err, segment.ErrUnknownTag) {
		t.Errorf("Next of an unknown tag: %v, want ErrUnknownTag", err)
	}
	// The last range is cut to the 5 ids left below the int64 maximum;
	// the Source hands them out, then an error, never a wrapped id.
	src := a.Source("t")
	for want := int64(math.MaxInt64 - 15); want < math.MaxInt64; want++ {
		if id, err := src.Next(context.Background()); err != nil || id != want {
			t.Fatalf("Next = %d, %v; want %d", id, err, want)
		}
	}
	for range 3 {
		if id, err := src.Next(context.Background()); !errors.Is(err, segment.ErrExhausted) {
			t.Fatalf("Next past the int64 maximum = %d, %v; want ErrExhausted", id, err)
		}
	}
}

// TestSourceAfterHandBack: the ids of a Source's block are handed out,
// the ones it has left after HandBack too, and none of those handed back.
func TestSourceAfterHandBack(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
	a := newAllocator(t, st, newClock())
	src := a.Source("t")
	for want := int64(1); want <= 4; want++ { // blocks [1], [2, 3], [4, 7]
		if id, err := src.Next(context.Background()); err != nil || id != want {
			t.Fatalf("Next = %d, %v; want %d", id, err, want)
		}
	}
	got := a.HandBack(context.Background())
	if len(got) != 1 || got[0] != (segment.Returned{Tag: "t", From: 8, IDs: 93}) {
		t.Fatalf("HandBack = %+v, want from 8", got)
	}
	for want := int64(5); want <= 7; want++ {
		if id, err := src.Next(context.Background()); err != nil || id != want {
			t.Fatalf("Next after HandBack = %d, %v; want %d", id, err, want)
		}
	}
	if id, err := src.Next(context.Background()); !errors.Is(err, segment.ErrClosed) {
		t.Fatalf("Next past its block after HandBack = %d, %v; want ErrClosed", id, err)
	}
	take(t, newAllocator(t, st, newClock()), "t", 8, 3)
}

func TestSourceAllocatesNothing(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: segment.MaxStep})
	a := newAllocator(t, st, newClock())
	src := a.Source("t")
	if _, err := src.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 50,000 ids: blocks growing to their largest, before the prefetch
	// at 10% of the segment.
	if n := testing.AllocsPerRun(50_000, func() { _, _ = src.Next(context.Background()) }); n != 0 {
		t.Fatalf("%v allocations per id", n)
	}
}
