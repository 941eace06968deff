package segment

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Regression describes a row found behind what this allocator received.
type Regression struct {
	Tag string
	// High is the highest max_id received for the tag before.
	High int64
	// Found is the max_id the row had when it was found behind High.
	Found int64
	// MaxID is the row's max_id after the jump (0 if the jump failed).
	MaxID int64
	// Err is why the jump failed, or nil.
	Err error
}

// mark is what the allocator remembers of a tag beyond its buffer's life.
type mark struct {
	high        int64 // highest max_id received; math.MinInt64 before the first
	regressions uint64
}

// noMark is the mark of a tag nothing was received for.
var noMark = mark{high: math.MinInt64}

// add folds o into m.
func (m *mark) add(o mark) {
	m.high = max(m.high, o.high)
	m.regressions += o.regressions
}

// allocate asks the store for a range, timing it for OnLoad, and fences
// against a row that went back in time.
//
// The mark is read before the store call, so a range that another load of
// the same row received meanwhile (a later one, in the database's order)
// is not taken for a regression.
func (a *Allocator) allocate(tag string, step int64) (Allocation, error) {
	ctx, cancel := context.WithTimeout(a.ctx, a.opts.LoadTimeout)
	defer cancel()
	start := time.Now()
	high := a.mark(tag).high
	var (
		alloc Allocation
		err   error
	)
	if a.opts.AboveReceived && high > 0 {
		alloc, err = a.store.AllocateAbove(ctx, tag, step, high)
	} else {
		alloc, err = a.store.Allocate(ctx, tag, step)
	}
	return a.loaded(ctx, tag, high, start, alloc, err)
}

// loaded checks the range the store returned for tag, or its error, after
// a call that began at start when the tag's mark was high: it fences
// against a row that went back in time (within ctx), records the range
// received and reports the load to OnLoad.
func (a *Allocator) loaded(ctx context.Context, tag string, high int64, start time.Time, alloc Allocation, err error) (Allocation, error) {
	if err == nil && alloc.Step <= 0 {
		err = fmt.Errorf("store returned step %d for %q", alloc.Step, tag)
	}
	if err == nil && alloc.Start() < high {
		alloc, err = a.fence(ctx, tag, high, alloc.Start(), alloc.Step)
	}
	if err == nil {
		a.received(tag, alloc.MaxID)
	}
	if a.opts.OnLoad != nil {
		a.opts.OnLoad(tag, time.Since(start), err)
	}
	return alloc, err
}

// fence moves the row of tag past high plus the failover jump, after the
// store was found at found, below high; the range returned starts above
// both.
func (a *Allocator) fence(ctx context.Context, tag string, high, found, step int64) (Allocation, error) {
	floor := high + a.opts.FailoverJump
	if floor < high { // past the int64 maximum: the statement refuses it
		floor = math.MaxInt64
	}
	alloc, err := a.store.AllocateAbove(ctx, tag, step, floor)
	if err == nil && alloc.Start() < floor {
		err = fmt.Errorf("store returned a range from %d, below the floor %d", alloc.Start(), floor)
	}
	r := Regression{Tag: tag, High: high, Found: found, Err: err}
	if err == nil {
		r.MaxID = alloc.MaxID
	}
	a.marksMu.Lock()
	a.markLocked(tag).regressions++
	a.marksMu.Unlock()
	if a.opts.OnRegression != nil {
		a.opts.OnRegression(r)
	}
	if err != nil {
		return Allocation{}, fmt.Errorf("move %q past %d after the store went back to %d: %w", tag, floor, found, err)
	}
	return alloc, nil
}

// mark returns a copy of tag's mark, or noMark: only rows the store raised
// for this allocator have one, so unknown tags cost no memory.
func (a *Allocator) mark(tag string) mark {
	a.marksMu.Lock()
	defer a.marksMu.Unlock()
	if m := a.findMarkLocked(tag); m != nil {
		return *m
	}
	return noMark
}

// findMarkLocked returns tag's mark: its buffer's, or the one kept while it
// has none, or nil. Called with a.marksMu held.
func (a *Allocator) findMarkLocked(tag string) *mark {
	if b := a.buffers.Load().get(tag); b != nil {
		return &b.mark
	}
	return a.marks[tag]
}

// markLocked returns tag's mark, creating it. Called with a.marksMu held.
func (a *Allocator) markLocked(tag string) *mark {
	m := a.findMarkLocked(tag)
	if m == nil {
		m = new(mark)
		*m = noMark
		a.marks[tag] = m
	}
	return m
}

// received records that the store raised tag's max_id to maxID for us.
func (a *Allocator) received(tag string, maxID int64) {
	a.marksMu.Lock()
	defer a.marksMu.Unlock()
	m := a.markLocked(tag)
	m.high = max(m.high, maxID)
}

// checkBehind is called by Refresh for a row read below the highest
// max_id received for it. A plain read may come from a cluster node that
// has not yet applied the latest writes, so the suspicion is confirmed by
// an allocation of one id, whose statement is certified against every
// node: allocate fences only if that range, too, starts below the mark.
func (a *Allocator) checkBehind(row string) {
	_, _ = a.allocate(row, 1) // an error: not known now, the next load checks again
}
