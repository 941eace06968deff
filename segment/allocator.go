package segment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// Allocator issues segment-mode ids for any number of tags. It is safe for
// concurrent use. Close stops its goroutines.
type Allocator struct {
	store  Store
	opts   Options
	origin time.Time // opts.Now() at New: back-off deadlines count from it

	// buffers is the hot path's table of buffers, read without a lock; it
	// is written, and replaced when it grows, under mu.
	buffers atomic.Pointer[table]
	first   singleflight.Group // first loads, by tag
	lookups lookups            // reads of names not on the tag list

	firstBatches firstBatches // first loads taken together (BatchAllocator)

	mu sync.Mutex // guards the fields below and writes to buffers
	// known are the tags of the last list read that had no buffer then,
	// and those Added or found by a lookup since: the names a first
	// request needs no lookup for. A tag with a buffer needs none either,
	// nor one whose first load is taken in a batch: through a store that
	// takes batches, the list's names are kept only if some loads look up.
	known    map[string]bool
	added    map[string]uint64 // tags Added or found by a lookup, with the value of adds then
	adds     uint64            // tags Added or found
	closed   bool
	children sync.WaitGroup // every goroutine started; Add only under mu while !closed
	// listReads counts the reads of the tag list under way (Refresh), and
	// publishedInRead holds the buffers published while one was: a tag
	// created after the list was read is not dropped for missing from it.
	listReads       int
	publishedInRead map[*buffer]bool

	ctx    context.Context // cancelled by Close; parent of every store call
	cancel context.CancelFunc

	// marksMu protects marks and the marks of the buffers; no other lock
	// is taken after it. A tag's mark is in its published buffer, or here
	// while it has none (a first load under way, a buffer dropped): it
	// moves with the buffer's publication and drop, both under marksMu.
	marksMu sync.Mutex
	marks   map[string]*mark

	failedMu sync.Mutex            // protects failed
	failed   map[string]*FailedTag // tags whose first load failed, until one succeeds

	retired retiredBuffers // counts of dropped buffers, for EachTag's totals (stats.go)

	bounds atomic.Pointer[map[string]int64] // declared bounds (bound.go)
}

// New returns an allocator over store and starts its periodic tag refresh.
func New(store Store, opts Options) *Allocator {
	a := &Allocator{store: store, opts: opts.withDefaults(), known: make(map[string]bool),
		added: make(map[string]uint64), marks: make(map[string]*mark), failed: make(map[string]*FailedTag)}
	a.origin = a.opts.Now()
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.buffers.Store(newTable(0))
	if a.opts.RefreshInterval > 0 {
		a.spawn(a.refreshLoop)
	}
	return a
}

// since is t as nanoseconds after a.origin. With the real clock the
// difference is taken on the monotonic clock, so a step of the wall clock
// neither stretches nor cuts a back-off.
func (a *Allocator) since(t time.Time) int64 { return int64(t.Sub(a.origin)) }

// at is the time d nanoseconds after a.origin, the inverse of since.
func (a *Allocator) at(d int64) time.Time { return a.origin.Add(time.Duration(d)) }

// spawn runs f in a goroutine owned by the allocator, unless it is closed.
func (a *Allocator) spawn(f func()) bool {
	a.mu.Lock()
	ok := a.spawnLocked(f)
	a.mu.Unlock()
	return ok
}

// spawnLocked is spawn with a.mu held.
func (a *Allocator) spawnLocked(f func()) bool {
	if a.closed {
		return false
	}
	a.children.Add(1)
	go func() {
		defer a.children.Done()
		f()
	}()
	return true
}

// Close stops the refresh and waits for loads in flight to end; callers
// waiting for a load get ErrClosed. Ids already buffered are still handed
// out; nothing new is loaded.
func (a *Allocator) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.children.Wait()
	return nil
}

// Next returns the next id for tag. It returns ErrUnknownTag for a tag the
// store does not have, and an error wrapping ErrUnavailable when no id can
// be issued now.
func (a *Allocator) Next(ctx context.Context, tag string) (int64, error) {
	// Next, NextN and NextRange each find the buffer with these lines
	// rather than through a function of their own: get is inlined, and a
	// function that also calls newBuffer would not be (Go's inlining
	// budget), which adds a call to every id.
	var b *buffer
	t := a.buffers.Load()
	if n := len(tag); n >= 4 && n <= 16 {
		// table.lookup written out for a tag whose words are the whole
		// tag, so no bytes are left to compare: lookup is a call (too
		// big to inline). 7.8 ns a call for a 6-byte tag against 7.3 ns
		// written out, beside 5.1 ns for a bare atomic add (BENCHMARKS.md).
		var lo, hi uint64
		if n >= 8 {
			lo, hi = load64(tag), load64(tag[n-8:])
		} else {
			lo, hi = load32(tag), load32(tag[n-4:])
		}
		for i := t.home(lo, hi, n); ; i = (i + 1) & t.mask {
			e := &t.entries[i]
			if b = e.b.Load(); b == nil || e.lo == lo && e.hi == hi && len(e.tag) == n {
				break
			}
		}
	} else {
		b = t.get(tag)
	}
	if b == nil {
		var err error
		if b, err = a.newBuffer(ctx, tag); err != nil {
			return 0, err
		}
	}
	for { // take's loop, written out: a call here would cost every id one
		s := b.cur.Load()
		if off := s.used.Add(1) - 1; off < s.size {
			if off >= s.prefetchAt && b.wantNext.Load() {
				b.prefetch(a, s)
			}
			return s.start + int64(off), nil
		}
		if err := b.advance(ctx, a, s); err != nil {
			return 0, err
		}
	}
}

// take hands out the buffer's next id, as Next does once it found it.
func (b *buffer) take(ctx context.Context, a *Allocator) (int64, error) {
	for {
		s := b.cur.Load()
		if off := s.used.Add(1) - 1; off < s.size {
			if off >= s.prefetchAt && b.wantNext.Load() {
				b.prefetch(a, s)
			}
			return s.start + int64(off), nil
		}
		if err := b.advance(ctx, a, s); err != nil {
			return 0, err
		}
	}
}

// NextLoaded is Next for a tag that has a buffer; loaded is false, and
// nothing is done, for one that has none: its caller learns what the tag
// is before its first load (the service's tag registry).
func (a *Allocator) NextLoaded(ctx context.Context, tag string) (id int64, loaded bool, err error) {
	b := a.buffers.Load().get(tag)
	if b == nil {
		return 0, false, nil
	}
	id, err = b.take(ctx, a)
	return id, true, err
}

// NextN returns n ids for tag in increasing order. They may span segments.
func (a *Allocator) NextN(ctx context.Context, tag string, n int) ([]int64, error) {
	if n < 0 {
		return nil, fmt.Errorf("negative count %d", n)
	}
	b := a.buffers.Load().get(tag)
	if b == nil {
		var err error
		if b, err = a.newBuffer(ctx, tag); err != nil {
			return nil, err
		}
	}
	ids := make([]int64, 0, n)
	for len(ids) < n {
		s := b.cur.Load()
		want := uint64(n - len(ids))
		end := s.used.Add(want)
		off := end - want
		if off < s.size {
			end = min(end, s.size)
			for o := off; o < end; o++ {
				ids = append(ids, s.start+int64(o))
			}
			if end > s.prefetchAt && b.wantNext.Load() {
				b.prefetch(a, s)
			}
			continue
		}
		if err := b.advance(ctx, a, s); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// NextRange takes up to n consecutive ids for tag, [start, start+count),
// from the current segment: fewer than n where the segment ends, never
// none. Like every id, the range is never handed out again.
func (a *Allocator) NextRange(ctx context.Context, tag string, n int) (start int64, count int, err error) {
	if n < 1 {
		return 0, 0, fmt.Errorf("count %d is below 1", n)
	}
	b := a.buffers.Load().get(tag)
	if b == nil {
		if b, err = a.newBuffer(ctx, tag); err != nil {
			return 0, 0, err
		}
	}
	for {
		s := b.cur.Load()
		want := uint64(n)
		end := s.used.Add(want)
		if off := end - want; off < s.size {
			end = min(end, s.size)
			if end > s.prefetchAt && b.wantNext.Load() {
				b.prefetch(a, s)
			}
			return s.start + int64(off), int(end - off), nil
		}
		if err := b.advance(ctx, a, s); err != nil {
			return 0, 0, err
		}
	}
}

func (a *Allocator) unavailable(tag string, err error) error {
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnknownTag) {
		return err
	}
	if a.ctx.Err() != nil {
		return ErrClosed
	}
	return fmt.Errorf("%w: load segment %q: %w", ErrUnavailable, tag, err)
}

// publishLocked makes b the buffer of tag, with the tag's mark. Called
// with a.mu held.
func (a *Allocator) publishLocked(tag string, b *buffer) {
	t := a.buffers.Load()
	old := t.get(tag)
	a.marksMu.Lock()
	defer a.marksMu.Unlock()
	if m := a.marks[tag]; m != nil {
		b.mark.add(*m)
		delete(a.marks, tag)
	}
	if old != nil && old != b {
		b.mark.add(old.mark)
		a.retireLocked(old)
	}
	if n := t.set(b.tag, b); n != t {
		a.buffers.Store(n)
	}
}

// dropLocked drops the buffers of tags, with one new table for all of
// them; their marks stay. Called with a.mu held.
func (a *Allocator) dropLocked(tags ...string) {
	t := a.buffers.Load()
	gone := make(map[*buffer]bool, len(tags))
	a.marksMu.Lock()
	defer a.marksMu.Unlock()
	for _, tag := range tags {
		if b := t.get(tag); b != nil && !gone[b] {
			gone[b] = true
			a.retireLocked(b)
			if b.mark != noMark {
				m := b.mark
				a.marks[tag] = &m
			}
		}
	}
	if len(gone) > 0 {
		a.buffers.Store(t.without(gone))
	}
}

// buffersLocked lists every buffer. Called with a.mu held.
func (a *Allocator) buffersLocked() []*buffer {
	t := a.buffers.Load()
	bufs := make([]*buffer, 0, t.used)
	t.each(func(b *buffer) { bufs = append(bufs, b) })
	return bufs
}

// Snapshot describes every tag's buffer, ordered by tag.
func (a *Allocator) Snapshot() []BufferState {
	a.mu.Lock()
	bufs := a.buffersLocked()
	a.mu.Unlock()
	slices.SortFunc(bufs, func(x, y *buffer) int { return strings.Compare(x.tag, y.tag) })
	out := make([]BufferState, 0, len(bufs))
	for _, b := range bufs {
		out = append(out, b.state(a))
	}
	return out
}
