package segment

import (
	"fmt"
	"math"
	"time"
)

// targetDuration is how long a segment should last; a segment that
// lasted less doubles the next step.
const targetDuration = 15 * time.Minute

// The load-ahead rule, one for the segments here and for the ranges the
// Sequencer raises for sections and ordered tags (sequence/ahead.go):
// once AheadPercent of the range in use is issued the next is loaded, and
// it holds at least AheadLoads loads' time at the rate the one in use is
// issued, read over RateWindow at least (HoldStep).
const (
	// AheadPercent of a range used starts the load of the next one.
	AheadPercent = 10
	// AheadLoads is how many loads' time the next range holds at least,
	// at the rate the current one is used.
	AheadLoads = 4
	// RateWindow is the shortest time a rate is read over, so that a
	// burst of a few requests (a forwarded batch) is not taken for a
	// rate.
	RateWindow = 10 * time.Millisecond
)

// HoldStep is the size of range that holds what issued ids in over (the
// current range's use so far) make in hold, at most MaxStep; 0 when
// nothing tells. The next segment holds at least the longer of:
//   - AheadLoads times the last load's time: the floor under nextStep
//     while a tag ramps up, so that a database a round trip away is
//     waited on for a few loads, not for every doubling (near the
//     database it is below any step and changes nothing);
//   - Options.RideThrough: the time a database may go without a writable
//     node, served from memory.
//
// The Sequencer sizes its ranges by the first alone.
func HoldStep(issued uint64, over, hold time.Duration) int64 {
	if issued == 0 || hold <= 0 {
		return 0
	}
	over = max(over, RateWindow)
	return int64(min(math.Round(float64(issued)*float64(hold)/float64(over)), MaxStep))
}

// nextStep is the step of the next load, given the step of the last one,
// the row's own step (the floor) and how long the last segment lasted: a
// segment should last about targetDuration, so one that lasted less
// doubles the step (up to MaxStep) and one that lasted over twice as long
// halves it.
func nextStep(step, minStep int64, lasted time.Duration) int64 {
	switch {
	case lasted < targetDuration:
		step = min(step*2, MaxStep)
	case lasted >= 2*targetDuration:
		step /= 2
	}
	return max(step, minStep, 1)
}

// LoadStep is how many ids a load of a row takes: asked, or the row's own
// step (rowStep) when asked is not above 0, cut near the int64 maximum to
// the ids left above base (the row's max_id, or the floor a load starts
// at). A row whose step is below MinStep is ErrMisconfigured; one at the
// maximum ErrExhausted. Every store, and the stores of the tests, take a
// load's ids by this one rule.
func LoadStep(asked, rowStep, base int64) (int64, error) {
	used := asked
	if used <= 0 {
		used = rowStep
	}
	switch {
	case used < MinStep:
		return 0, fmt.Errorf("%w: its step is %d, below %d", ErrMisconfigured, rowStep, MinStep)
	case base == math.MaxInt64:
		return 0, fmt.Errorf("%w: max_id is %d", ErrExhausted, base)
	case base > 0:
		return min(used, math.MaxInt64-base), nil
	}
	return used, nil
}
