package segment_test

import (
	"context"
	"errors"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
)

// TestBound: a tag with a declared bound issues every id up to it, one by
// one, in batches and in ranges, and then refuses with ErrBoundReached,
// loading nothing more; a bound set while ranges are held takes effect at
// once; a tag without one is not touched.
func TestBound(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "orders", MaxID: 1, Step: 10}, segment.Tag{Name: "free", MaxID: 1, Step: 10})
	a := newAllocator(t, st, newClock())
	ctx := context.Background()
	a.SetBounds(map[string]int64{"orders": 25})
	take(t, a, "orders", 1, 20)
	ids, err := a.NextN(ctx, "orders", 3)
	if err != nil || ids[0] != 21 || ids[2] != 23 {
		t.Fatalf("NextN(3) = %v, %v; want 21..23", ids, err)
	}
	start, n, err := a.NextRange(ctx, "orders", 10)
	if err != nil || start != 24 || n != 2 {
		t.Fatalf("NextRange(10) = %d+%d, %v; want 24+2, cut at the bound", start, n, err)
	}
	calls := st.AllocateCalls()
	for range 3 {
		if id, err := a.Next(ctx, "orders"); !errors.Is(err, segment.ErrBoundReached) {
			t.Fatalf("Next past the bound = %d, %v; want ErrBoundReached", id, err)
		}
	}
	if _, err := a.NextN(ctx, "orders", 1); !errors.Is(err, segment.ErrBoundReached) {
		t.Fatalf("NextN past the bound: %v", err)
	}
	if got := st.AllocateCalls(); got != calls {
		t.Errorf("%d loads past the bound, want none", got-calls)
	}
	take(t, a, "free", 1, 30)

	// Raised: the tag goes on above what the row gave, up to the new bound.
	a.SetBounds(map[string]int64{"orders": 1000, "free": 35})
	id := mustNext(t, a, "orders")
	if id <= 25 || id > 1000 {
		t.Fatalf("after the bound was raised: %d", id)
	}
	// A bound set while "free" holds ranges: nothing past it from them.
	for {
		id, err := a.Next(ctx, "free")
		if errors.Is(err, segment.ErrBoundReached) {
			break
		}
		if err != nil || id > 35 {
			t.Fatalf("free under a bound of 35: %d, %v", id, err)
		}
	}
}
