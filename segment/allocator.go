// Package segment hands out ids from ranges ("segments") taken from a store,
// after Meituan's Leaf segment mode.
//
// Each biz tag has a double buffer. Ids come from the current segment with
// one atomic add. Once more than 10% of it is used, one background load asks
// the store for the next range, so that when the current segment runs out the
// next is already there and the switch costs a mutex, not a database round
// trip. A caller that finds both halves empty waits for the load in flight,
// bounded by its context.
//
// The step of each load adapts so that a segment lasts about 15 minutes:
// a segment that lasted under 15 minutes doubles the next step (up to
// MaxStep), one that lasted over 30 minutes halves it, never below the step
// stored in the database.
//
// # Fence
//
// The allocator remembers, per tag, the highest max_id it has received. A
// load that returns a range starting below it means the database went back
// in time (a failover to a replica that missed the last writes): the range
// is not used. Instead the row is moved forward, in one statement, past
// that mark plus Options.FailoverJump, and the range above is served. The
// jump protects the ranges that other instances took in the lost window,
// which this one never saw. The tag refresh looks for the same thing in the
// rows it reads, so a regression is found within a refresh interval even
// when no load is due.
package segment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// Defaults of Options.
const (
	DefaultLoadTimeout     = 3 * time.Second
	DefaultRefreshInterval = 60 * time.Second
	DefaultRetryMin        = 50 * time.Millisecond
	DefaultRetryMax        = 500 * time.Millisecond
	// DefaultFailoverJump is how far past the highest max_id it received
	// an allocator moves a row that went back in time: room for a billion
	// ids, what ten instances taking 100,000 ids a second each take in
	// sixteen minutes of replication lag. It costs nothing but numbers.
	DefaultFailoverJump = 1_000_000_000

	// TargetDuration is how long a segment should last; a segment that
	// lasted less doubles the next step.
	TargetDuration = 15 * time.Minute
	// prefetchPercent of a segment used starts the load of the next one.
	prefetchPercent = 10
)

// Options configures an Allocator. Zero fields take the defaults above.
type Options struct {
	// LoadTimeout bounds one call to the store.
	LoadTimeout time.Duration
	// RefreshInterval is how often the tag list is read back to drop tags
	// gone from the database. Negative disables the refresh.
	RefreshInterval time.Duration
	// RetryMin and RetryMax bound the back-off after a failed load: during
	// it no new load starts and callers with empty buffers fail at once.
	RetryMin, RetryMax time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// FailoverJump is how far past the highest max_id received a row that
	// went back in time is moved (see the package comment); 0 means
	// DefaultFailoverJump.
	FailoverJump int64
	// OnLoad, when set, is called after every load from the store.
	OnLoad func(tag string, took time.Duration, err error)
	// OnRegression, when set, is called each time a tag's row is found
	// behind the highest max_id this allocator received for it.
	OnRegression func(Regression)
}

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

func (o Options) withDefaults() Options {
	if o.LoadTimeout <= 0 {
		o.LoadTimeout = DefaultLoadTimeout
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	if o.RetryMin <= 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(DefaultRetryMax, o.RetryMin)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FailoverJump <= 0 {
		o.FailoverJump = DefaultFailoverJump
	}
	return o
}

// Allocator issues segment-mode ids for any number of tags. It is safe for
// concurrent use. Close stops its goroutines.
type Allocator struct {
	store  Store
	opts   Options
	origin time.Time // opts.Now() at New: back-off deadlines count from it

	// buffers is replaced whole (copy on write) when a tag is added or
	// dropped, so the hot path reads it without a lock.
	buffers atomic.Pointer[table]
	first   singleflight.Group // first loads, by tag
	lookups lookups            // reads of names not on the tag list

	mu       sync.Mutex // guards the fields below and writes to buffers
	known    map[string]bool
	added    map[string]uint64 // tags Added or found by a lookup, with the value of adds then
	adds     uint64            // tags Added or found
	born     uint64            // buffers published; stamps each buffer for Refresh
	closed   bool
	children sync.WaitGroup // every goroutine started; Add only under mu while !closed

	ctx    context.Context // cancelled by Close; parent of every store call
	cancel context.CancelFunc

	marksMu sync.Mutex // protects marks; taken with no other lock held after it
	marks   map[string]*mark

	failedMu sync.Mutex            // protects failed
	failed   map[string]*FailedTag // tags whose first load failed, until one succeeds
}

// mark is what the allocator remembers of a tag beyond its buffer's life.
type mark struct {
	high        int64 // highest max_id received; math.MinInt64 before the first
	regressions uint64
}

// New returns an allocator over store and starts its periodic tag refresh.
func New(store Store, opts Options) *Allocator {
	a := &Allocator{store: store, opts: opts.withDefaults(), known: make(map[string]bool),
		added: make(map[string]uint64), marks: make(map[string]*mark),
		failed: make(map[string]*FailedTag)}
	a.origin = a.opts.Now()
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.buffers.Store(newTable(nil))
	if a.opts.RefreshInterval > 0 {
		a.spawn(a.refreshLoop)
	}
	return a
}

// since is t as nanoseconds after a.origin. With the real clock the
// difference is taken on the monotonic clock, so a step of the wall clock
// neither stretches nor cuts a back-off.
func (a *Allocator) since(t time.Time) int64 { return int64(t.Sub(a.origin)) }

// spawn runs f in a goroutine owned by the allocator, unless it is closed.
func (a *Allocator) spawn(f func()) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
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
	b := a.buffers.Load().get(tag)
	if b == nil {
		var err error
		if b, err = a.newBuffer(ctx, tag); err != nil {
			return 0, err
		}
	}
	for {
		s := b.cur.Load()
		if off := s.used.Add(1) - 1; off < s.size {
			if off >= s.prefetchAt && b.wantNext.Load() {
				b.prefetch(s)
			}
			return s.start + int64(off), nil
		}
		if err := b.advance(ctx, s); err != nil {
			return 0, err
		}
	}
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
				b.prefetch(s)
			}
			continue
		}
		if err := b.advance(ctx, s); err != nil {
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
				b.prefetch(s)
			}
			return s.start + int64(off), int(end - off), nil
		}
		if err := b.advance(ctx, s); err != nil {
			return 0, 0, err
		}
	}
}

// newBuffer creates the tag's buffer with a first load from the store.
// Concurrent first requests for a tag share one load. A tag that was not
// on the last list read is looked up first (see lookups), so that a name
// with no row of exactly that name never reaches the statement that
// raises max_id.
func (a *Allocator) newBuffer(ctx context.Context, tag string) (*buffer, error) {
	a.mu.Lock()
	closed, known := a.closed, a.known[tag]
	a.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if !known {
		if err := a.lookup(ctx, tag); err != nil {
			return nil, err
		}
	}
	ch := a.first.DoChan(tag, func() (any, error) { return a.firstLoad(tag) })
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*buffer), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: first load of %q: %w", ErrUnavailable, tag, ctx.Err())
	}
}

// firstLoad takes the tag's first segment and publishes its buffer. It runs
// once per tag at a time (singleflight), in a goroutine of its own that the
// caller may stop waiting for; it is bounded by LoadTimeout and Close.
func (a *Allocator) firstLoad(tag string) (*buffer, error) {
	if b := a.buffers.Load().get(tag); b != nil {
		return b, nil
	}
	done := make(chan struct{})
	var b *buffer
	var err error
	if !a.spawn(func() {
		defer close(done)
		began := a.opts.Now()
		var alloc Allocation
		alloc, err = a.allocate(tag, 0)
		if err == nil {
			b = newBuffer(a, tag, alloc, a.opts.Now().Sub(began))
		}
	}) {
		return nil, ErrClosed
	}
	<-done
	switch {
	case errors.Is(err, ErrUnknownTag):
		a.forgetRow(tag)
		a.firstLoaded(tag, nil)
		return nil, fmt.Errorf("%w: %q", ErrUnknownTag, tag)
	case err != nil:
		if !errors.Is(err, ErrClosed) && a.ctx.Err() == nil {
			a.firstLoaded(tag, err)
		}
		return nil, a.unavailable(tag, err)
	}
	a.firstLoaded(tag, nil)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, ErrClosed
	}
	a.born++
	b.born = a.born
	m := maps.Clone(a.buffers.Load().byTag)
	if m == nil {
		m = make(map[string]*buffer)
	}
	m[tag] = b
	a.buffers.Store(newTable(m))
	return b, nil
}

// firstLoaded records how a first load of tag ended: a failure is kept
// until one succeeds or the tag is gone. Only tags of the list get here,
// so the record is bounded by the table's size.
func (a *Allocator) firstLoaded(tag string, err error) {
	a.failedMu.Lock()
	defer a.failedMu.Unlock()
	if err == nil {
		delete(a.failed, tag)
		return
	}
	f := a.failed[tag]
	if f == nil {
		f = &FailedTag{Tag: tag}
		a.failed[tag] = f
	}
	f.Err, f.At = err.Error(), a.opts.Now()
	f.Failures++
}

// Failed lists the tags whose first load failed and that have no buffer,
// ordered by tag.
func (a *Allocator) Failed() []FailedTag {
	a.failedMu.Lock()
	defer a.failedMu.Unlock()
	out := make([]FailedTag, 0, len(a.failed))
	for _, tag := range slices.Sorted(maps.Keys(a.failed)) {
		out = append(out, *a.failed[tag])
	}
	return out
}

// Added tells the allocator that tag was just created, so that it is
// served at once rather than after the next read of the tag list.
func (a *Allocator) Added(tag string) {
	a.mu.Lock()
	a.addedLocked(tag)
	a.mu.Unlock()
}

// addedLocked makes tag known, and kept by a Refresh whose read began
// before. Called with a.mu held.
func (a *Allocator) addedLocked(tag string) {
	a.adds++
	a.known[tag] = true
	a.added[tag] = a.adds
}

// forgetRow drops tag from the known tags: its row is gone.
func (a *Allocator) forgetRow(tag string) {
	a.mu.Lock()
	delete(a.known, tag)
	delete(a.added, tag)
	a.mu.Unlock()
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
	alloc, err := a.store.Allocate(ctx, tag, step)
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

// mark returns a copy of tag's mark, or an empty one (high at the int64
// minimum) when there is none: only rows the store raised for this
// allocator get one, so unknown tags cost no memory.
func (a *Allocator) mark(tag string) mark {
	a.marksMu.Lock()
	defer a.marksMu.Unlock()
	if m := a.marks[tag]; m != nil {
		return *m
	}
	return mark{high: math.MinInt64}
}

// markLocked returns tag's mark, creating it. Called with a.marksMu held.
func (a *Allocator) markLocked(tag string) *mark {
	m := a.marks[tag]
	if m == nil {
		m = &mark{high: math.MinInt64}
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

func (a *Allocator) unavailable(tag string, err error) error {
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnknownTag) {
		return err
	}
	if a.ctx.Err() != nil {
		return ErrClosed
	}
	return fmt.Errorf("%w: load segment %q: %w", ErrUnavailable, tag, err)
}

// drop removes tag's buffer, if b is still the one published.
func (a *Allocator) drop(tag string, b *buffer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.buffers.Load().get(tag) != b {
		return
	}
	m := maps.Clone(a.buffers.Load().byTag)
	delete(m, tag)
	a.buffers.Store(newTable(m))
}

func (a *Allocator) refreshLoop() {
	t := time.NewTicker(a.opts.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-t.C:
			_ = a.Refresh(a.ctx)
		}
	}
}

// Refresh reads the tag list from the store: it becomes the set of tags
// served, and the buffers of tags no longer there are dropped.
//
// A tag is served only under its row's exact name, as Leaf does: MySQL's
// collations match "ORDERS" to the row "orders", which would otherwise
// give each spelling a buffer of its own and ids out of order.
func (a *Allocator) Refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.LoadTimeout)
	defer cancel()
	a.mu.Lock()
	born, adds := a.born, a.adds // buffers born and tags added during the read are kept
	a.mu.Unlock()
	tags, err := a.store.Tags(ctx)
	if err != nil {
		return fmt.Errorf("refresh tags: %w", err)
	}
	known := make(map[string]bool, len(tags))
	for _, t := range tags {
		known[t.Name] = true
		if t.MaxID < a.mark(t.Name).high {
			a.spawn(func() { a.checkBehind(t.Name) })
		}
	}
	a.failedMu.Lock()
	for tag := range a.failed {
		if !known[tag] {
			delete(a.failed, tag)
		}
	}
	a.failedMu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	for tag, at := range a.added {
		if at > adds {
			known[tag] = true
		} else {
			delete(a.added, tag)
		}
	}
	a.known = known
	cur := a.buffers.Load().byTag
	m := make(map[string]*buffer, len(cur))
	for tag, b := range cur {
		if known[tag] || b.born > born {
			m[tag] = b
		}
	}
	if len(m) != len(cur) {
		a.buffers.Store(newTable(m))
	}
	return nil
}

// Snapshot describes every tag's buffer, ordered by tag.
func (a *Allocator) Snapshot() []BufferState {
	m := a.buffers.Load().byTag
	out := make([]BufferState, 0, len(m))
	for _, tag := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[tag].state())
	}
	return out
}

// Returned is what HandBack did for one tag.
type Returned struct {
	Tag string
	// From is the first id handed back and IDs how many: the row's max_id
	// went from From+IDs back to From.
	From, IDs int64
	// Moved is true when the row had moved on (another instance took a
	// range after this one's last), so nothing was handed back.
	Moved bool
	// Err is why the store could not be asked, or nil.
	Err error
}

// HandBack returns to the store, for every tag, the ids of its buffer that
// were never handed out, where they are the tail of the row: the row's
// max_id still ends where this allocator's last range ends. A restart then
// continues where this one stopped instead of a range further on. It is
// for a clean stop, after Close: every id not yet handed out is claimed
// first, so none is issued after it was given back. It does nothing when
// the store is not a HandBacker.
func (a *Allocator) HandBack(ctx context.Context) []Returned {
	hb, ok := a.store.(HandBacker)
	if !ok {
		return nil
	}
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if !closed {
		a.Close()
	}
	var out []Returned
	for _, st := range a.Snapshot() {
		b := a.buffers.Load().get(st.Tag)
		if b == nil {
			continue
		}
		first, end := b.claimRest()
		if first >= end {
			continue
		}
		r := Returned{Tag: b.tag, From: first, IDs: end - first}
		done, err := hb.HandBack(ctx, b.tag, end, first)
		switch {
		case err != nil:
			r.Err = err
		case !done:
			r.Moved = true
		}
		out = append(out, r)
	}
	return out
}

// NextStep is the step of the next load, given the step of the last one,
// the row's own step (the floor) and how long the last segment lasted.
func NextStep(step, minStep int64, lasted time.Duration) int64 {
	switch {
	case lasted < TargetDuration:
		step = min(step*2, MaxStep)
	case lasted >= 2*TargetDuration:
		step /= 2
	}
	return max(step, minStep, 1)
}
