package segment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// seg is one range of ids, [start, start+size). used counts the ids taken
// from it; it only grows, past size once the range is spent, and counts
// offsets so that it cannot wrap however far it overshoots.
//
// A tag's first segment lives inside its buffer, used beside the fields
// that are only read: most tags of a large instance take a few ids and
// then wait, and a segment of its own would double what each keeps. Every
// later segment, loaded because the tag has traffic, is a paddedSeg.
type seg struct {
	start      int64
	size       uint64
	prefetchAt uint64 // an offset past this starts loading the next segment
	loadedAt   int64  // when it was loaded, as Allocator.since
	used       atomic.Uint64
}

// paddedSeg gives used a cache line of its own: every core writes it, and
// the fields that are only read would otherwise be fetched again after
// each add whenever another core took the line in between. Objects of 128
// bytes are 128-aligned, so the read fields fill the end of the first line
// and used begins the second.
type paddedSeg struct {
	_ [64 - unsafe.Offsetof(seg{}.used)]byte
	s seg
	_ [64 - unsafe.Sizeof(atomic.Uint64{})]byte
}

// init makes s the range of alloc, loaded at the allocator's time at.
func (s *seg) init(alloc Allocation, at int64) {
	start, size := alloc.Start(), alloc.Step
	if start < 1 { // never hand out 0 or a negative id
		size -= 1 - start
		start = 1
	}
	s.start, s.size, s.loadedAt = start, uint64(max(size, 0)), at
	s.prefetchAt = s.size * prefetchPercent / 100
}

// newSeg returns a padded segment of the range of alloc.
func newSeg(alloc Allocation, at int64) *seg {
	p := new(paddedSeg)
	p.s.init(alloc, at)
	return &p.s
}

// taken is how many ids have been handed out from s.
func (s *seg) taken() uint64 { return min(s.used.Load(), s.size) }

func (s *seg) state(a *Allocator) *SegmentState {
	if s == nil {
		return nil
	}
	t := s.taken()
	return &SegmentState{
		Start:     s.start,
		End:       s.start + int64(s.size),
		Next:      s.start + int64(t),
		Remaining: int64(s.size - t),
		LoadedAt:  a.at(s.loadedAt),
	}
}

// buffer is one tag's double buffer: cur hands out ids, next is the
// prefetched segment that replaces it.
//
// Nothing here is padded: the fields beside cur are written only when
// segments change or a load ends, a few times per segment, so the reads of
// the hot path almost never miss for them.
type buffer struct {
	// Read on every id; cur is written only when segments change.
	cur atomic.Pointer[seg]
	tag string

	wantNext atomic.Bool  // no next segment and no load in flight
	special  atomic.Bool  // its ids go out only through NextSpecial (Kind Special)
	retryAt  atomic.Int64 // no load starts before it (after a failure); see Allocator.since
	waits    atomic.Uint64
	born     uint64 // when it was published, for Refresh; set before publishing

	mu       sync.Mutex    // protects the fields below
	next     *seg          // the prefetched half, nil when empty
	loading  chan struct{} // non-nil while a load runs; closed when it ends
	step     int64         // step of the last load
	minStep  int64         // the row's step at the last load
	lastLoad int64         // when the last load ended, as Allocator.since
	lastTook time.Duration // how long the load that ended at lastLoad took
	lastErr  error
	retired  uint64
	// Counts of a tag's life in this process, 32 bits each (a load a
	// millisecond would take seven weeks to wrap loads): with pos and
	// failures they fill two words where four would take the buffer
	// into the next size class.
	loads, failed uint32
	pos           int32 // index of cur in the two halves, for State
	failures      int32 // consecutive failed loads

	mark mark // guarded by a.marksMu (see Allocator.marks)

	first seg // the first segment; cur points here until the first switch
}

// newBuffer returns tag's buffer over its first range. It keeps a copy of
// tag: the caller's may be part of a request's memory.
func newBuffer(a *Allocator, tag string, alloc Allocation, took time.Duration) *buffer {
	now := a.since(a.opts.Now())
	b := &buffer{tag: strings.Clone(tag), step: alloc.Step, minStep: alloc.DBStep, lastLoad: now, lastTook: took, loads: 1, mark: noMark}
	b.first.init(alloc, now)
	b.cur.Store(&b.first)
	b.wantNext.Store(true)
	b.retryAt.Store(math.MinInt64)
	return b
}

// prefetch starts loading the segment after s unless one is loaded,
// loading, or a failed load is still backing off, or s is no longer the
// current segment (the caller's id came from a segment already replaced).
func (b *buffer) prefetch(a *Allocator, s *seg) {
	if b.backingOff(a) {
		return
	}
	b.mu.Lock()
	if b.cur.Load() == s && b.next == nil && b.loading == nil && !b.backingOff(a) {
		b.startLoadLocked(a)
	}
	b.mu.Unlock()
}

// backingOff reports whether a failed load's back-off is still running.
func (b *buffer) backingOff(a *Allocator) bool {
	return a.since(a.opts.Now()) < b.retryAt.Load()
}

// startLoadLocked starts the one background load of the next segment. Called
// with b.mu held and no load running.
func (b *buffer) startLoadLocked(a *Allocator) {
	step := b.step
	if b.failures == 0 { // an outage is not a slow segment: keep the step
		step = nextStep(b.step, b.minStep, time.Duration(a.since(a.opts.Now())-b.lastLoad))
	}
	ch := make(chan struct{})
	if !a.spawn(func() { b.load(a, step, ch) }) {
		b.wantNext.Store(false) // closed: nothing will be loaded
		return
	}
	b.loading = ch
	b.wantNext.Store(false)
}

func (b *buffer) load(a *Allocator, step int64, done chan struct{}) {
	began := a.opts.Now()
	alloc, err := a.allocate(b.tag, step)
	if errors.Is(err, ErrUnknownTag) {
		a.forgetRow(b.tag)
		a.drop(b.tag, b) // the row is gone: new requests look it up again
	}
	now := a.opts.Now()
	at := a.since(now)
	b.mu.Lock()
	defer b.mu.Unlock()
	defer close(done)
	b.loading = nil
	if err != nil {
		b.failed++
		b.failures++
		b.lastErr = err
		backoff := a.opts.RetryMin
		for i := int32(1); i < b.failures && backoff < a.opts.RetryMax; i++ {
			backoff *= 2
		}
		b.retryAt.Store(a.since(now.Add(min(backoff, a.opts.RetryMax))))
		b.wantNext.Store(true)
		return
	}
	b.loads++
	b.failures = 0
	b.lastErr = nil
	b.retryAt.Store(math.MinInt64)
	b.step, b.minStep, b.lastLoad, b.lastTook = alloc.Step, alloc.DBStep, at, now.Sub(began)
	b.next = newSeg(alloc, at)
}

// advance is called when s, the current segment, is spent. It switches to
// the next segment if one is ready; otherwise it waits, bounded by ctx, for
// the load in flight (starting one if none runs). A nil return means: try
// again.
func (b *buffer) advance(ctx context.Context, a *Allocator, s *seg) error {
	b.mu.Lock()
	if b.cur.Load() != s { // another caller switched already
		b.mu.Unlock()
		return nil
	}
	if b.next != nil {
		b.retired += s.size
		b.cur.Store(b.next)
		b.next = nil
		b.pos ^= 1
		b.wantNext.Store(true)
		b.mu.Unlock()
		return nil
	}
	if b.loading == nil {
		if b.backingOff(a) {
			err := b.lastErr
			b.mu.Unlock()
			if errors.Is(err, ErrUnknownTag) {
				return fmt.Errorf("%w: %q", ErrUnknownTag, b.tag)
			}
			return a.unavailable(b.tag, err)
		}
		b.startLoadLocked(a)
		if b.loading == nil {
			b.mu.Unlock()
			return ErrClosed
		}
	}
	wait := b.loading
	b.mu.Unlock()
	b.waits.Add(1)
	select {
	case <-wait:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for a segment of %q: %w", ErrUnavailable, b.tag, ctx.Err())
	case <-a.ctx.Done():
		return ErrClosed
	}
}

// claimRest takes every id of the buffer not yet handed out, so that none
// will be, and returns the part of them that is the tail of the last range
// loaded: [first, end), where end is the max_id that load left in the row.
// The two halves count as one run when the prefetched one starts where
// the current one ends.
func (b *buffer) claimRest() (first, end int64) {
	b.mu.Lock() // no switch of halves meanwhile
	defer b.mu.Unlock()
	cur, next := b.cur.Load(), b.next
	first, end = cur.claim(), cur.start+int64(cur.size)
	if next != nil {
		nextFirst := next.claim()
		if next.start != end {
			first = nextFirst
		}
		end = next.start + int64(next.size)
	}
	return first, end
}

// claim takes every id of s not yet handed out and returns the first of
// them (the end of s when there is none).
func (s *seg) claim() int64 {
	prev := s.used.Add(s.size) - s.size
	return s.start + int64(min(prev, s.size))
}

func (b *buffer) state(a *Allocator) BufferState {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.cur.Load()
	st := BufferState{
		Tag:          b.tag,
		Current:      int(b.pos),
		Loading:      b.loading != nil,
		Step:         b.step,
		MinStep:      b.minStep,
		LastLoad:     a.at(b.lastLoad),
		LastLoadTook: b.lastTook,
		Issued:       b.retired + cur.taken(),
		Loads:        uint64(b.loads),
		LoadFailures: uint64(b.failed),
		Waits:        b.waits.Load(),
	}
	if b.lastErr != nil {
		st.LastError = b.lastErr.Error()
	}
	a.marksMu.Lock()
	st.HighMaxID, st.Regressions = b.mark.high, b.mark.regressions
	a.marksMu.Unlock()
	st.Segments[b.pos] = cur.state(a)
	st.Segments[b.pos^1] = b.next.state(a)
	return st
}
