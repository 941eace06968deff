package segment_test

import (
	"context"
	"errors"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

func TestHandBack(t *testing.T) {
	t.Run("the current half only", func(t *testing.T) {
		st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
		a := newAllocator(t, st, newClock())
		take(t, a, "t", 1, 5)
		got := a.HandBack(context.Background())
		if len(got) != 1 || got[0] != (segment.Returned{Tag: "t", From: 6, IDs: 95}) {
			t.Fatalf("HandBack = %+v", got)
		}
		if _, err := a.Next(context.Background(), "t"); !errors.Is(err, segment.ErrClosed) {
			t.Fatalf("Next after HandBack = %v, want ErrClosed", err)
		}
		take(t, newAllocator(t, st, newClock()), "t", 6, 3)
	})
	t.Run("both halves in one run", func(t *testing.T) {
		st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
		a := newAllocator(t, st, newClock())
		take(t, a, "t", 1, 20) // past 10%: the next half [101, 301) is loaded
		testkit.WaitFor(t, 0, "the prefetch", func() bool { s := state(t, a, "t"); return s.Segments[1] != nil && !s.Loading })
		got := a.HandBack(context.Background())
		if len(got) != 1 || got[0].From != 21 || got[0].Moved || got[0].Err != nil {
			t.Fatalf("HandBack = %+v, want from 21", got)
		}
		take(t, newAllocator(t, st, newClock()), "t", 21, 3)
	})
	t.Run("another range between the halves", func(t *testing.T) {
		st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
		a := newAllocator(t, st, newClock())
		take(t, a, "t", 1, 5)
		other := newAllocator(t, st, newClock())
		take(t, other, "t", 101, 1)
		take(t, a, "t", 6, 10) // a's prefetch comes after other's range
		testkit.WaitFor(t, 0, "the prefetch", func() bool { s := state(t, a, "t"); return s.Segments[1] != nil && !s.Loading })
		next := state(t, a, "t").Segments[1]
		got := a.HandBack(context.Background())
		if len(got) != 1 || got[0].From != next.Start || got[0].Moved {
			t.Fatalf("HandBack = %+v, want the whole prefetched half from %d", got, next.Start)
		}
		// other's range is untouched: its ids and the row's are disjoint
		take(t, other, "t", 102, 3)
		take(t, newAllocator(t, st, newClock()), "t", next.Start, 1)
	})
	t.Run("a row that moved on is left alone", func(t *testing.T) {
		st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
		a := newAllocator(t, st, newClock())
		take(t, a, "t", 1, 5)
		take(t, newAllocator(t, st, newClock()), "t", 101, 1)
		got := a.HandBack(context.Background())
		if len(got) != 1 || !got[0].Moved {
			t.Fatalf("HandBack = %+v, want Moved", got)
		}
		if r, _ := st.Tag(context.Background(), "t"); r.MaxID != 201 {
			t.Fatalf("max_id = %d, want 201", r.MaxID)
		}
	})
}
