package sequence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leafid/leaf/segment"
)

// Loading ahead. An owner does not wait for the database when its numbers
// run out: once segment.AheadPercent of the numbers in use are issued, it takes
// the next range of an ordered tag's row, or raises a section's max_seq,
// in the background, so that a caller waits on a round trip only where
// the numbers go faster than one raise takes. What is loaded ahead is
// sized by the rate just seen: enough for segment.AheadLoads raises' time, never
// less than the configured step, never more than segment.MaxStep. It grows only
// when callers waited for a load begun ahead (the numbers outran it), and
// shrinks back as the rate falls: near the database, where a raise takes
// a millisecond, loads arrive in time and the size stays the step (what a
// killed owner loses, the range in use and the one ahead, stays two
// steps); a round trip away it grows with the traffic it has to cover.
//
// Order holds as it does without it: only the owner raises, one raise at
// a time, each above the last; a range loaded ahead is issued only by the
// owner that loaded it, only if the raise ended before its deadline, and
// only after the numbers before it.

// ahead is a section's load in the background and what it brought.
type ahead struct {
	gen     uint64        // counts forgets: a load begun before one keeps nothing
	loading chan struct{} // closed when the load in flight ends; nil when none runs
	err     error         // why the last load failed, until the next begins
	took    time.Duration // how long a raise takes (see timed)
	// ahead: the load in flight was begun ahead of need (due); waited:
	// a caller waited for such a load since the last began; by: the
	// least the last load asked for beyond the step (next); doubt: a
	// raise of the row failed since the last that succeeded, and may have
	// been made (tookRowLocked).
	ahead, waited, doubt bool
	by                   int64
	// first..last is the range of an ordered tag's row taken ahead of
	// the one in use; last is 0 when none is.
	first, last int64
	// Since since, the numbers in use went from from, of size numbers.
	since      time.Time
	from, size int64
}

// forget drops what is loaded ahead and makes a load in flight keep
// nothing it brings.
func (a *ahead) forget() {
	a.gen++
	a.loading, a.err, a.waited, a.doubt = nil, nil, false, false // a release's wait is no caller's
	a.first, a.last, a.from, a.size = 0, 0, 0, 0
}

// began notes that the numbers in use, size of them after from, begin to
// be issued now.
func (a *ahead) began(now time.Time, from, size int64) {
	a.since, a.from, a.size = now, from, size
}

// due says whether the next load should begin, with left numbers left
// before the end of those in use: segment.AheadPercent of them are issued, and
// none runs or waits to be used.
func (a *ahead) due(left int64) bool {
	return a.loading == nil && a.last == 0 && left <= a.size-a.size*segment.AheadPercent/100
}

// want is how many numbers a load should take to last AheadLoads raises'
// time at the rate seen since the numbers in use began, by the segment
// mode's rule (segment.HoldStep); 0 when nothing tells.
func (a *ahead) want(now time.Time, issued int64) int64 {
	n := issued - a.from
	if n <= 0 || a.since.IsZero() {
		return 0
	}
	return segment.HoldStep(uint64(n), now.Sub(a.since), a.took*segment.AheadLoads)
}

// next is the least the next load asks for beyond the step: what want
// says once callers waited for a load begun ahead, else no more than the
// last asked for, less when the rate fell.
func (a *ahead) next(now time.Time, issued int64) int64 {
	w := a.want(now, issued)
	if a.waited {
		a.by = max(a.by, w)
	} else {
		a.by = min(a.by, w)
	}
	a.waited = false
	return a.by
}

// waiting notes that a caller waits for the load in flight.
func (a *ahead) waiting() {
	if a.ahead {
		a.waited = true
	}
}

// timed notes that a raise took d. The estimate follows the database's
// distance, but grows at most twofold a raise: one raise held up (a lock,
// a stall) does not make the next range large; a distance that stays
// does, in a few raises.
func (a *ahead) timed(d time.Duration) {
	if a.took > 0 {
		d = min(d, 2*a.took)
	}
	a.took = d
}

// load runs raise in the background, with s.mu not held and bounded by
// the lease, and then end with s.mu held, unless the section was
// forgotten meanwhile; then, if the raise succeeded, late, with s.mu not
// held (nil: nothing). Called with s.mu held and no load running.
func (s *section) load(q *Sequencer, ahead bool, raise func(context.Context) error, end func(error), late func()) {
	a := &s.ahead
	ch, gen := make(chan struct{}), a.gen
	a.loading, a.err, a.ahead = ch, nil, ahead
	go func() {
		defer close(ch)
		ctx, cancel := context.WithTimeout(context.Background(), q.opts.Lease)
		defer cancel()
		began := q.opts.Now()
		err := raise(ctx)
		took := q.opts.Now().Sub(began)
		s.mu.Lock()
		if a.loading == ch {
			a.loading = nil
		}
		// Dropped, taken again, or another row: nothing of it is issued.
		stale := a.gen != gen
		if !stale {
			if err == nil {
				a.timed(took)
			}
			end(err)
		}
		s.mu.Unlock()
		if stale && err == nil && late != nil {
			late()
		}
	}()
}

// awaitLocked waits, with s.mu released meanwhile, for the load in flight
// to end, bounded by ctx, and returns the error it ended with. Called
// with s.mu held.
func (s *section) awaitLocked(ctx context.Context) error {
	ch := s.ahead.loading
	if ch == nil {
		return s.ahead.err
	}
	s.ahead.waiting()
	s.mu.Unlock()
	var err error
	select {
	case <-ch:
	case <-ctx.Done():
		err = fmt.Errorf("%w: waiting for a raise of %q: %w", ErrUnavailable, s.space, ctx.Err())
	}
	s.mu.Lock()
	if err != nil {
		return err
	}
	return s.ahead.err
}

// raiseRowAhead takes the next range of the section's row in the
// background, sized by the rate just seen (ahead.next); ahead: begun
// ahead of need, not for a caller waiting. Called with s.mu held and no
// load running.
func (s *section) raiseRowAhead(q *Sequencer, limit int64, ahead bool) {
	row, atLeast := s.row, s.ahead.next(q.opts.Now(), s.base)
	var first, last int64
	s.load(q, ahead, func(ctx context.Context) (err error) {
		first, last, err = q.opts.Tags.RaiseRow(ctx, row, limit, atLeast)
		return err
	}, func(err error) {
		s.ahead.err = s.tookRowLocked(q, first, last, err)
		if s.full {
			s.fullAt = limit
		}
	}, func() {
		q.handBackLate(s, row, first, last)
	})
}

// handBackLate returns to row the range first..last that a raise took
// once the section had stopped being served here (a release that waited
// no longer for it, a lease lost): nothing of it was issued. When the
// range follows what the release handed back, or meant to, the two go
// back together: the release's hand-back failed because this raise moved
// the row first. It does nothing when the row moved on since.
func (q *Sequencer) handBackLate(s *section, row string, first, last int64) {
	s.mu.Lock()
	from := first
	if r := s.released; r.row == row && r.end == first {
		from = r.first
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), q.opts.Lease)
	defer cancel()
	q.handBack(ctx, s.space, row, last+1, from)
}

// tookRowLocked keeps the range a raise of the row took as the range
// ahead, or learns that the row is full, and returns the error callers
// waiting for it get.
func (s *section) tookRowLocked(q *Sequencer, first, last int64, err error) error {
	switch {
	case errors.Is(err, ErrFull):
		s.full = true
		return nil
	case err != nil:
		// The raise may have been made all the same (its answer lost, or
		// the statement still queued when the call gave up): the store
		// raises a row only from the value it read, so if it was made,
		// the next raise finds the row moved on by exactly its range.
		s.ahead.doubt = true
		return fmt.Errorf("raise ordered tag %q: %w", s.row, err)
	case s.max > 0 && first <= s.max:
		// Only the owner raises the row: a range at or below what it took
		// means the row went back in time.
		s.skipHeldLocked(q, SkipLeaseLost)
		s.dropLocked(q)
		err := fmt.Errorf("%w: ordered tag %q: range from %d, not above the %d taken", ErrLeaseLost, s.row, first, s.max)
		q.opts.OnEvent(Event{Kind: "lost", Space: s.space, Section: s.index, Err: err})
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	// The raise may have taken long enough for the lease to come near its
	// end: the range is kept all the same, and issued only if a renewal
	// lets this owner serve again (every number asks servingLocked first).
	// Dropped here, it was a hole of a step in a tag that promises none:
	// the next raise went on above it.
	if s.ahead.doubt && s.max > 0 && first > s.max+1 {
		// A raise of this owner that failed was made: the numbers between
		// are its own, taken and never issued (only the owner raises the
		// row; another's late raise is one that owner never issues).
		first = s.max + 1
	}
	s.ahead.doubt = false
	s.ahead.first, s.ahead.last = first, last
	return nil
}

// useAheadLocked makes the range taken ahead the one in use: after the
// rest of the one in use when it follows it, else instead of it (the row
// moved on, or this is the first range here).
func (s *section) useAheadLocked(q *Sequencer) {
	a := &s.ahead
	if a.first != s.max+1 {
		s.base = a.first - 1
	}
	s.max = a.last
	a.first, a.last = 0, 0
	a.began(q.opts.Now(), s.base, s.max-s.base)
}
