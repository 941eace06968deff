package segment

import "time"

const (
	// targetDuration is how long a segment should last; a segment that
	// lasted less doubles the next step.
	targetDuration = 15 * time.Minute
	// prefetchPercent of a segment used starts the load of the next one.
	prefetchPercent = 10
)

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
