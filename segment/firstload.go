package segment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// newBuffer creates the tag's buffer with a first load from the store.
// Concurrent first requests for a tag share one load. A tag that was not
// on the last list read and whose first load is not taken in a batch is
// looked up first (see lookups), so that a name with no row of exactly
// that name never reaches the statement that raises max_id. A batch needs
// no look-up: it raises only the rows of exactly the names asked, and
// answers ErrUnknownTag for the others (BatchAllocator).
func (a *Allocator) newBuffer(ctx context.Context, tag string) (*buffer, error) {
	a.mu.Lock()
	closed, known, notPlain := a.closed, a.known[tag], a.notPlain[tag]
	a.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if notPlain {
		return nil, fmt.Errorf("%w: %q", ErrNotPlain, tag)
	}
	if _, batched := a.batchStore(tag); !known && !batched {
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
		b := r.Val.(*buffer)
		if b.special.Load() { // published: NextSpecial finds it
			return nil, fmt.Errorf("%w: %q", ErrSpecial, tag)
		}
		return b, nil
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
	began := a.opts.Now()
	alloc, err := a.allocateFirst(tag)
	switch {
	case errors.Is(err, ErrUnknownTag):
		a.forgetRow(tag)
		a.firstLoaded(tag, nil)
		return nil, fmt.Errorf("%w: %q", ErrUnknownTag, tag)
	case errors.Is(err, ErrNotPlain):
		a.MarkNotPlain(tag)
		a.firstLoaded(tag, nil)
		return nil, fmt.Errorf("%w: %q", ErrNotPlain, tag)
	case err != nil:
		if !errors.Is(err, ErrClosed) && a.ctx.Err() == nil {
			a.firstLoaded(tag, err)
		}
		return nil, a.unavailable(tag, err)
	}
	a.firstLoaded(tag, nil)
	b := newBuffer(a, tag, alloc, a.opts.Now().Sub(began))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, ErrClosed
	}
	if a.notPlain[tag] { // marked while its first load ran: the range is lost
		return nil, fmt.Errorf("%w: %q", ErrNotPlain, tag)
	}
	a.born++
	b.born = a.born
	if a.specials[tag] {
		b.special.Store(true)
	}
	a.publishLocked(tag, b)
	return b, nil
}

// maxLoadBatch is the most tags one call of a BatchAllocator asks for; a
// batch with more is taken in several.
const maxLoadBatch = 500

// maxLoadCalls is the most calls of a BatchAllocator that run at once. Two
// keep first loads going while one call waits (for a row another instance
// holds, say); more make smaller batches, each a transaction: on the
// 2-core development machine, where the database, leaf and the clients
// share the cores, four took a third more of leaf's and MariaDB's CPU per
// tag than one, and one and two were alike within the noise (100,000
// first requests from 64 clients in 8.0-12.0 s with one, 8.2-9.2 s with
// two).
const maxLoadCalls = 2

// firstBatches coalesces the first loads of different tags into calls of
// a BatchAllocator. Up to maxLoadCalls calls run at a time; a first load
// that begins while they all run waits for the next call, which takes
// every tag that waits, at once. A few tags at a time are each taken
// without waiting; many tags asked for together (an instance starting
// behind a load balancer) cost the database one transaction per batch
// instead of one per tag.
type firstBatches struct {
	mu      sync.Mutex // guards the fields below
	next    *firstBatch
	running int
}

// firstBatch is one call for several tags; done is closed when it ends.
type firstBatch struct {
	tags    []string
	done    chan struct{}
	results map[string]loadResult // set before done
}

type loadResult struct {
	alloc Allocation
	err   error
}

// allocateFirst takes the first range of tag: in a batch with the other
// tags whose first load runs now when the store takes batches, and by a
// load of its own otherwise, or when the range must lie above a mark
// (Options.AboveReceived). Either way the store is called from a
// goroutine of the allocator's.
func (a *Allocator) allocateFirst(tag string) (Allocation, error) {
	st, ok := a.batchStore(tag)
	if !ok {
		var (
			alloc Allocation
			err   error
		)
		done := make(chan struct{})
		if !a.spawn(func() {
			defer close(done)
			res := make(map[string]loadResult, 1)
			if err = a.classify([]string{tag}, res); err != nil {
				return
			}
			if r, ok := res[tag]; ok {
				err = r.err
				return
			}
			alloc, err = a.allocate(tag, 0)
		}) {
			return Allocation{}, ErrClosed
		}
		<-done
		return alloc, err
	}
	l := &a.firstBatches
	l.mu.Lock()
	b := l.next
	if b == nil {
		b = &firstBatch{done: make(chan struct{})}
		l.next = b
	}
	b.tags = append(b.tags, tag)
	start := l.running < maxLoadCalls
	if start {
		l.running++
		l.next = nil
	}
	l.mu.Unlock()
	if start && !a.spawn(func() { a.runFirstBatches(st, b) }) {
		return Allocation{}, ErrClosed
	}
	select {
	case <-b.done:
		r := b.results[tag]
		return r.alloc, r.err
	case <-a.ctx.Done(): // closed: the batches left are never run
		return Allocation{}, ErrClosed
	}
}

// batchStore returns the store as a BatchAllocator when the first load of
// tag is taken in a batch: when the store takes batches, and the range
// need not lie above a mark (Options.AboveReceived).
func (a *Allocator) batchStore(tag string) (BatchAllocator, bool) {
	st, ok := a.store.(BatchAllocator)
	if !ok || (a.opts.AboveReceived && a.mark(tag).high > 0) {
		return nil, false
	}
	return st, true
}

// runFirstBatches takes batch b, then every batch that filled meanwhile,
// until none is waiting.
func (a *Allocator) runFirstBatches(st BatchAllocator, b *firstBatch) {
	l := &a.firstBatches
	for {
		b.results = make(map[string]loadResult, len(b.tags))
		for tags := b.tags; len(tags) > 0; {
			n := min(len(tags), maxLoadBatch)
			a.allocateBatch(st, tags[:n], b.results)
			tags = tags[n:]
		}
		close(b.done)
		l.mu.Lock()
		b = l.next
		l.next = nil
		if b == nil {
			l.running--
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

// allocateBatch takes the first ranges of tags in one call and checks
// each as allocate does; a fence, rare, gets a deadline of its own.
func (a *Allocator) allocateBatch(st BatchAllocator, tags []string, into map[string]loadResult) {
	if err := a.classify(tags, into); err != nil {
		for _, tag := range tags {
			into[tag] = loadResult{err: err}
		}
		return
	}
	if len(into) > 0 {
		tags = slices.DeleteFunc(slices.Clone(tags), func(tag string) bool { _, done := into[tag]; return done })
		if len(tags) == 0 {
			return
		}
	}
	ctx, cancel := context.WithTimeout(a.ctx, a.opts.LoadTimeout)
	defer cancel()
	start := time.Now()
	highs := make([]int64, len(tags))
	for i, tag := range tags {
		highs[i] = a.mark(tag).high
	}
	res, err := st.AllocateBatch(ctx, tags)
	if err == nil && len(res) != len(tags) {
		err = fmt.Errorf("store returned %d results for %d tags", len(res), len(tags))
	}
	for i, tag := range tags {
		var r loadResult
		if r.err = err; err == nil {
			r.alloc, r.err = res[i].Allocation, res[i].Err
		}
		fctx, fcancel := ctx, context.CancelFunc(func() {})
		if r.err == nil && r.alloc.Start() < highs[i] {
			fctx, fcancel = context.WithTimeout(a.ctx, a.opts.LoadTimeout)
		}
		r.alloc, r.err = a.loaded(fctx, tag, highs[i], start, r.alloc, r.err)
		fcancel()
		into[tag] = r
	}
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
