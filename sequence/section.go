package sequence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// section is one section of a space as this instance sees it.
type section struct {
	space string // the space, or the ordered tag
	index int
	step  int64
	tag   bool // an ordered tag: base and max are its last id issued and the end of its ranges

	// settled: a round has read this ordered tag's lease row (unused for
	// the sections of a space, which their space's settled covers).
	settled atomic.Bool

	// owner is the address of the instance holding the section's lease
	// when that is another, as the last round read it; "" when none
	// holds a live lease or this one does.
	owner atomic.Pointer[string]
	// refused is why the store refused this instance the section's lease
	// at its last try, nil once it took it or was refused only because
	// another holds it: said to callers it cannot serve.
	refused atomic.Pointer[error]

	mu sync.Mutex // protects the fields below
	// owned: this instance holds the lease and has loaded max_seq.
	owned bool
	// deadline is when this instance stops serving the section, by the
	// local clock: before the lease runs out by the store's.
	deadline time.Time
	// base is max_seq when the lease was taken: the last number of every
	// key not issued since.
	base int64
	// max is the persisted max_seq: no number above it is issued.
	max int64
	// hi is the highest number issued to any key since the lease was
	// taken, or base.
	hi int64
	// row is the leaf_alloc row an ordered tag numbers now (the tag's, or
	// its period's); full says it has no number left below its limit
	// beyond max.
	row  string
	full bool
	// fullAt is the limit full was found at.
	fullAt int64
	// ahead is the range or raise loading in the background (ahead.go).
	ahead ahead
	// released is what the last release of an ordered tag handed back,
	// or meant to: the row, and the numbers first..end-1 (handBackLate).
	released struct {
		row        string
		first, end int64
	}
	// keys holds the last number issued to each key since the lease was
	// taken. One plain map per section: about 60 bytes a key of 16 bytes
	// (docs/sequences.md, "Memory").
	keys map[string]int64
}

// next takes n numbers for key and returns the first; they run to
// first+n-1. It waits on the database only when they pass max_seq and the
// raise ahead (ahead.go) has not moved it far enough.
func (s *section) next(ctx context.Context, q *Sequencer, key string, n int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if err := s.servingLocked(q); err != nil {
			return 0, err
		}
		cur, seen := s.keys[key]
		if !seen {
			cur = s.base
		}
		if cur > math.MaxInt64-n {
			return 0, fmt.Errorf("%w: key's next number would pass the int64 maximum", ErrExhausted)
		}
		last := cur + n
		if last > s.max {
			if s.ahead.loading == nil {
				if err := s.raiseMaxAhead(q, last-s.max, false); err != nil {
					return 0, err
				}
			}
			if err := s.awaitLocked(ctx); err != nil {
				return 0, err
			}
			continue
		}
		if !seen {
			key = strings.Clone(key) // keep no request buffer alive
			q.keysInMemory.Add(1)
		}
		s.keys[key] = last
		s.hi = max(s.hi, last)
		if !seen && q.keysInMemory.Load() > q.opts.MaxKeys {
			s.forgetKeysLocked(q)
		}
		if s.ahead.due(s.max - s.hi) {
			_ = s.raiseMaxAhead(q, 0, true) // a step at least: it cannot pass the maximum where this did not
		}
		return cur + 1, nil
	}
}

// current is the last number issued to key: since the lease was taken,
// or, for a key not issued since (or whose counter was forgotten), the
// section's base, which no number issued to it before passes: max_seq
// when the lease was taken, or the highest number the section had issued
// when it forgot its keys.
func (s *section) current(q *Sequencer, key string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.servingLocked(q); err != nil {
		return 0, err
	}
	if cur, ok := s.keys[key]; ok {
		return cur, nil
	}
	return s.base, nil
}

// servingLocked says whether this instance may issue numbers of the
// section now, and if not, who may.
func (s *section) servingLocked(q *Sequencer) error {
	if s.owned && q.opts.Now().Before(s.deadline) {
		return nil
	}
	if q.closed.Load() {
		return ErrClosed
	}
	if p := s.owner.Load(); p != nil && *p != "" {
		return &NotOwnerError{Space: s.space, Section: s.index, Addr: *p}
	}
	if why := s.refused.Load(); why != nil {
		return fmt.Errorf("%w: no instance serves section %d of space %q now: %w", ErrUnavailable, s.index, s.space, *why)
	}
	return fmt.Errorf("%w: no instance serves section %d of space %q now; retry later", ErrUnavailable, s.index, s.space)
}

// raiseMaxAhead raises max_seq in the background by whole steps: at least
// need and what the rate just seen asks for (ahead.next); ahead: begun
// ahead of need, not for a caller waiting. Called with s.mu held and no
// load running.
func (s *section) raiseMaxAhead(q *Sequencer, need int64, ahead bool) error {
	need = max(need, s.ahead.next(q.opts.Now(), s.hi), 1)
	steps := (need + s.step - 1) / s.step
	if steps > (math.MaxInt64-s.max)/s.step {
		return fmt.Errorf("%w: max_seq would pass the int64 maximum", ErrExhausted)
	}
	from, by := s.max, steps*s.step
	var got int64
	s.load(q, ahead, func(ctx context.Context) (err error) {
		got, err = q.opts.Store.RaiseMax(ctx, s.space, s.index, q.opts.ID, by)
		return err
	}, func(err error) {
		s.ahead.err = s.raisedLocked(q, from, by, got, err)
	}, nil)
	return nil
}

// raisedLocked makes max_seq what a raise by by from from made it, got,
// and returns the error callers waiting for it get.
func (s *section) raisedLocked(q *Sequencer, from, by, got int64, err error) error {
	switch {
	case errors.Is(err, ErrLeaseLost):
		s.dropLocked(q)
		q.opts.OnEvent(Event{Kind: "lost", Space: s.space, Section: s.index, Err: err})
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case errors.Is(err, ErrExhausted):
		return err
	case err != nil:
		return fmt.Errorf("%w: raise max_seq of section %d of space %q: %w", ErrUnavailable, s.index, s.space, err)
	case got != from+by:
		// Only the holder raises the row: another value means the row
		// is not what this owner loaded (a database gone back in time).
		// Serve nothing more from what is held here.
		s.dropLocked(q)
		err := fmt.Errorf("%w: max_seq of section %d of space %q is %d after a raise by %d from %d", ErrLeaseLost, s.index, s.space, got, by, from)
		q.opts.OnEvent(Event{Kind: "lost", Space: s.space, Section: s.index, Err: err})
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	// The raise may have taken long enough for the lease to come near its
	// end: max_seq is still what the store holds now, and nothing up to it
	// is issued unless a renewal lets this owner serve again (next asks
	// servingLocked before every number). Forgetting it would make the
	// next raise, from the old value, look like a row gone back in time.
	s.max = got
	s.ahead.began(q.opts.Now(), s.hi, by)
	return nil
}

// takeLocked starts serving the section above maxSeq until deadline. An
// ordered tag starts with no range: its first id comes from a raise of its
// row made now, above every range an earlier owner took.
func (s *section) takeLocked(maxSeq int64, deadline time.Time) {
	s.owned, s.deadline, s.base, s.max, s.hi = true, deadline, maxSeq, maxSeq, maxSeq
	s.ahead.forget()
	s.released.row = ""
	if s.tag {
		s.row, s.base, s.max, s.full = "", 0, 0, false
		return
	}
	s.keys = make(map[string]int64)
}

// releaseLocked stops serving the section, as dropLocked, and returns
// what an ordered tag took of its row and did not issue, end and first,
// for handBack.
func (s *section) releaseLocked(q *Sequencer) (row string, end, first int64) {
	if s.owned && s.tag {
		end, first = s.max+1, s.base+1
		if a := &s.ahead; a.last != 0 {
			if a.first != end {
				// The row moved on: only the range ahead is whole.
				q.skip(s.space, s.row, first, end-first, SkipHandBack)
				first = a.first
			}
			end = a.last + 1
		}
		if first < end {
			row = s.row
		} else {
			end, first = 0, 0
		}
		s.released.row, s.released.first, s.released.end = row, first, end
	}
	s.dropLocked(q)
	return row, end, first
}

// forgetKeysLocked forgets the counters of the section's keys, when the
// instance holds more than Options.MaxKeys: every key then starts above
// hi, the highest number the section issued since its lease was taken,
// which passes every number any of them was given. A key's numbers go on
// increasing, with a gap; none repeats, and max_seq is not raised for it.
func (s *section) forgetKeysLocked(q *Sequencer) {
	n := int64(len(s.keys))
	q.keysInMemory.Add(-n)
	q.keysForgotten.Add(n)
	s.base = s.hi
	s.keys = make(map[string]int64)
}

// dropLocked stops serving the section and forgets its keys.
func (s *section) dropLocked(q *Sequencer) {
	if !s.owned {
		return
	}
	q.keysInMemory.Add(-int64(len(s.keys)))
	q.dropped.Add(1)
	s.owned, s.keys = false, nil
	s.ahead.forget()
}
