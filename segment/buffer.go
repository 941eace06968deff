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

// init makes s the range of alloc, loaded at the allocator's time at, cut
// at bound, the largest id the tag may issue.
func (s *seg) init(alloc Allocation, at, bound int64) {
	start, size := alloc.Start(), alloc.Step
	if start < 1 { // never hand out 0 or a negative id
		size -= 1 - start
		start = 1
	}
	if start > bound {
		size = 0
	} else if size > bound-start+1 {
		size = bound - start + 1
	}
	s.start, s.size, s.loadedAt = start, uint64(max(size, 0)), at
	s.prefetchAt = s.size * AheadPercent / 100
}

// newSeg returns a padded segment of the range of alloc, cut at bound.
func newSeg(alloc Allocation, at, bound int64) *seg {
	p := new(paddedSeg)
	p.s.init(alloc, at, bound)
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
//
// Most tags of a large instance take a few ids of their first segment and
// wait: what only a tag that loads again needs (the second half, the load
// in flight, its errors and counts) is in a bufferMore, allocated with its
// second load. A tag asked for once costs 128 bytes here, where one struct
// for both took 208 (BenchmarkIdleTags).
type buffer struct {
	// Read on every id; cur is written only when segments change.
	cur atomic.Pointer[seg]
	tag string

	wantNext atomic.Bool // no next segment and no load in flight

	// more is nil until the buffer starts its second load; it is set
	// under mu, and read without it only for its atomic fields.
	more atomic.Pointer[bufferMore]

	mu       sync.Mutex    // protects the fields below and those of more but its atomics
	step     int64         // step of the last load
	minStep  int64         // the row's step at the last load
	lastTook time.Duration // how long the last load took (see lastLoadLocked)

	mark mark // guarded by a.marksMu (see Allocator.marks)

	first seg // the first segment; cur points here until the first switch
}

// bufferMore is the part of a buffer that only a tag loading again needs.
type bufferMore struct {
	retryAt atomic.Int64 // no load starts before it (after a failure); see Allocator.since
	waits   atomic.Uint64

	// Guarded by the buffer's mu.
	lastLoad int64         // when the last load ended, as Allocator.since
	curAt    int64         // when cur became the current segment, as Allocator.since
	next     *seg          // the prefetched half, nil when empty
	loading  chan struct{} // non-nil while a load runs; closed when it ends
	lastErr  error
	retired  uint64 // ids of the segments left behind
	// Counts of a tag's life in this process, 32 bits each (a load a
	// millisecond would take seven weeks to wrap loads).
	loads, failed uint32 // loads after the first, and failed loads
	pos           int32  // index of cur in the two halves, for State
	failures      int32  // consecutive failed loads
	stalls        uint32 // loads that requests waited for
	stalled       bool   // the load in flight has been waited for
}

// newBuffer returns tag's buffer over its first range. It keeps a copy of
// tag: the caller's may be part of a request's memory.
func newBuffer(a *Allocator, tag string, alloc Allocation, took time.Duration) *buffer {
	now := a.since(a.opts.Now())
	b := &buffer{tag: strings.Clone(tag), step: alloc.Step, minStep: alloc.DBStep, lastTook: took, mark: noMark}
	b.first.init(alloc, now, a.Bound(tag))
	b.cur.Store(&b.first)
	b.wantNext.Store(true)
	return b
}

// moreLocked returns b.more, allocating it the first time. Called with
// b.mu held.
func (b *buffer) moreLocked() *bufferMore {
	m := b.more.Load()
	if m == nil {
		m = &bufferMore{lastLoad: b.first.loadedAt, curAt: b.first.loadedAt}
		m.retryAt.Store(math.MinInt64)
		b.more.Store(m)
	}
	return m
}

// lastLoadLocked is when the last load ended, as Allocator.since: the
// first segment's time until a later load ends. Called with b.mu held.
func (b *buffer) lastLoadLocked() int64 {
	if m := b.more.Load(); m != nil {
		return m.lastLoad
	}
	return b.first.loadedAt
}

// nextLocked is the prefetched half, or nil. Called with b.mu held.
func (b *buffer) nextLocked() *seg {
	if m := b.more.Load(); m != nil {
		return m.next
	}
	return nil
}

// prefetch starts loading the segment after s unless one is loaded,
// loading, or a failed load is still backing off, or s is no longer the
// current segment (the caller's id came from a segment already replaced).
func (b *buffer) prefetch(a *Allocator, s *seg) {
	if b.backingOff(a) || s.reached(a.Bound(b.tag)) {
		return
	}
	b.mu.Lock()
	if m := b.more.Load(); b.cur.Load() == s && (m == nil || m.next == nil && m.loading == nil) && !b.backingOff(a) {
		b.startLoadLocked(a)
	}
	b.mu.Unlock()
}

// backingOff reports whether a failed load's back-off is still running.
func (b *buffer) backingOff(a *Allocator) bool {
	m := b.more.Load()
	return m != nil && a.since(a.opts.Now()) < m.retryAt.Load()
}

// startLoadLocked starts the one background load of the next segment. Called
// with b.mu held and no load running.
func (b *buffer) startLoadLocked(a *Allocator) {
	m := b.moreLocked()
	step := b.step
	if m.failures == 0 { // an outage is not a slow segment: keep the step
		now := a.since(a.opts.Now())
		step = nextStep(b.step, b.minStep, time.Duration(now-m.lastLoad))
		issued, over := b.cur.Load().taken(), time.Duration(now-m.curAt)
		step = max(step, HoldStep(issued, over, max(AheadLoads*b.lastTook, a.opts.RideThrough)))
	}
	ch := make(chan struct{})
	if !a.spawn(func() { b.load(a, step, ch) }) {
		b.wantNext.Store(false) // closed: nothing will be loaded
		return
	}
	m.loading, m.stalled = ch, false
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
	m := b.more.Load() // set by startLoadLocked
	m.loading = nil
	if err != nil {
		m.failed++
		m.failures++
		m.lastErr = err
		backoff := a.opts.RetryMin
		for i := int32(1); i < m.failures && backoff < a.opts.RetryMax; i++ {
			backoff *= 2
		}
		m.retryAt.Store(a.since(now.Add(min(backoff, a.opts.RetryMax))))
		b.wantNext.Store(true)
		return
	}
	m.loads++
	m.failures = 0
	m.lastErr = nil
	m.retryAt.Store(math.MinInt64)
	b.step, b.minStep, m.lastLoad, b.lastTook = alloc.Step, alloc.DBStep, at, now.Sub(began)
	m.next = newSeg(alloc, at, a.Bound(b.tag))
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
	m := b.more.Load()
	if m != nil && m.next != nil {
		m.retired += s.size
		b.cur.Store(m.next)
		m.next, m.curAt = nil, a.since(a.opts.Now())
		m.pos ^= 1
		b.wantNext.Store(true)
		b.mu.Unlock()
		return nil
	}
	if m == nil || m.loading == nil {
		if bound := a.Bound(b.tag); s.reached(bound) {
			b.mu.Unlock()
			return fmt.Errorf("%w: %q issued its last id up to %d", ErrBoundReached, b.tag, bound)
		}
		if b.backingOff(a) {
			err := m.lastErr
			b.mu.Unlock()
			if errors.Is(err, ErrUnknownTag) {
				return fmt.Errorf("%w: %q", ErrUnknownTag, b.tag)
			}
			return a.unavailable(b.tag, err)
		}
		b.startLoadLocked(a)
		if m = b.more.Load(); m.loading == nil {
			b.mu.Unlock()
			return ErrClosed
		}
	}
	wait := m.loading
	if !m.stalled {
		m.stalled = true
		m.stalls++
	}
	b.mu.Unlock()
	m.waits.Add(1)
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
	cur, next := b.cur.Load(), b.nextLocked()
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

// counts are a buffer's figures of its life, read with b.mu held.
type counts struct {
	issued, loads, failed, waits, stalls uint64
	pos                                  int32
	loading                              bool
	lastErr                              error
	next                                 *seg
}

// countsLocked reads b's counts. Called with b.mu held.
func (b *buffer) countsLocked() counts {
	c := counts{issued: b.cur.Load().taken(), loads: 1}
	if m := b.more.Load(); m != nil {
		c.issued += m.retired
		c.loads += uint64(m.loads)
		c.failed = uint64(m.failed)
		c.waits, c.stalls = m.waits.Load(), uint64(m.stalls)
		c.pos, c.loading, c.lastErr, c.next = m.pos, m.loading != nil, m.lastErr, m.next
	}
	return c
}

func (b *buffer) state(a *Allocator) BufferState {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, c := b.cur.Load(), b.countsLocked()
	st := BufferState{
		Tag:          b.tag,
		Current:      int(c.pos),
		Loading:      c.loading,
		Step:         b.step,
		MinStep:      b.minStep,
		LastLoad:     a.at(b.lastLoadLocked()),
		LastLoadTook: b.lastTook,
		Issued:       c.issued,
		Loads:        c.loads,
		LoadFailures: c.failed,
		Waits:        c.waits,
		WaitedLoads:  c.stalls,
	}
	if c.lastErr != nil {
		st.LastError = c.lastErr.Error()
	}
	a.marksMu.Lock()
	st.HighMaxID, st.Regressions = b.mark.high, b.mark.regressions
	a.marksMu.Unlock()
	st.Segments[c.pos] = cur.state(a)
	st.Segments[c.pos^1] = c.next.state(a)
	return st
}
