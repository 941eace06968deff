package snowflake

// The clock policy: which unit of time since the epoch a reading is in,
// when a unit begins, what a clock behind the last id is told, and how a
// caller waits for the clock. The package comment, "Clock", has the rules.

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// unitOf is the unit of time since the epoch that now is in. It stays
// within the compiler's inlining budget, so that take pays no call for it:
// with milliseconds it adds one well-predicted branch to the subtraction
// that a fixed layout needed.
func (g *Generator) unitOf(now time.Time) int64 {
	t := now.UnixMilli() - g.epochMs
	if g.unitMs != 1 {
		t = floorDiv(t, g.unitMs)
	}
	return t
}

// floorDiv is a/b rounded down (b > 0), not toward zero: a clock before the
// epoch is in unit -1, not 0.
func floorDiv(a, b int64) int64 {
	if a < 0 {
		a -= b - 1
	}
	return a / b
}

// startMs is the first Unix millisecond of unit t since the epoch.
func (g *Generator) startMs(t int64) int64 { return g.epochMs + t*g.unitMs }

// untilUnit is how long from now until unit t (since the epoch) begins.
func (g *Generator) untilUnit(now time.Time, t int64) time.Duration {
	return time.UnixMilli(g.startMs(t)).Sub(now)
}

// unitAtMs is the unit since the epoch that Unix millisecond ms is in.
func (g *Generator) unitAtMs(ms int64) int64 {
	return g.unitOf(time.UnixMilli(ms))
}

// errBackwardsLocked says that the clock, at now, is wait behind the start
// of the last id's unit.
func (g *Generator) errBackwardsLocked(now time.Time, wait time.Duration) error {
	return fmt.Errorf("%w: the clock reads %s, %v before the last id's time %s (tolerance %v)",
		ErrClockBackwards, now.UTC().Format(time.RFC3339Nano), wait, fmtMs(g.startMs(g.last)), g.tolerance)
}

// spinFor is the last stretch of a wait that sleep spends yielding the
// processor rather than on a timer: a timer fires late by tens to hundreds
// of microseconds, a large part of the millisecond a caller waits for when
// its 4096 sequence numbers are used up (with Leaf's layout). Only a caller with ids to take
// spins, so an idle generator costs nothing.
const spinFor = time.Millisecond

// sleep waits d, or until ctx is done: on a timer for all but the last
// spinFor, then yielding until the deadline.
func sleep(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	if coarse := d - spinFor; coarse > 0 {
		t := time.NewTimer(coarse)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return err
		}
		runtime.Gosched()
	}
	return nil
}

func fmtMs(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}
