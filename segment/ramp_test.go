package segment_test

import (
	"testing"
	"time"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

// TestRampUpFromRate: with the database a round trip away (each load takes
// 100 ms), a busy tag's next step holds what its rate issues in four
// loads' time, rather than the double of the last: one load, not one per
// doubling, brings it to a step that outlasts a load. Near the database
// (TestStepAdapts) the steps only double.
func TestRampUpFromRate(t *testing.T) {
	c := newClock()
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 1000})
	st.SetAfter(func(string) { c.Add(100 * time.Millisecond) })
	a := newAllocator(t, st, c)
	// 101 ids in 10 ms: the 101st passes a tenth of the segment and
	// starts the load of the next.
	for i := range 101 {
		if i%10 == 0 {
			c.Add(time.Millisecond)
		}
		mustNext(t, a, "t")
	}
	testkit.WaitFor(t, 0, "the prefetch", func() bool { return !state(t, a, "t").Loading })
	// 101 ids in 10 ms, over four loads of 100 ms: 4,040.
	if got := st.Steps(); len(got) != 2 || got[1] != 4040 {
		t.Fatalf("steps asked = %v, want [0 4040]", got)
	}
}
