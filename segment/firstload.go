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
// Concurrent first requests for a tag share one load. Through a store that
// takes batches, the load is one tag of a batch (firstInBatch), which
// needs no look-up of the name: it raises only the rows of exactly the
// names asked, and answers ErrUnknownTag for the others (BatchAllocator).
// Otherwise a tag that was not on the last list read is looked up first
// (see lookups), so that a name with no row of exactly that name never
// reaches the statement that raises max_id.
func (a *Allocator) newBuffer(ctx context.Context, tag string) (*buffer, error) {
	a.mu.Lock()
	closed, known := a.closed, a.known[tag]
	a.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if b, batched, err := a.firstInBatch(ctx, tag); batched {
		return b, err
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

// firstLoad takes the tag's first segment and publishes its buffer, when
// the load is not taken in a batch. It runs once per tag at a time
// (singleflight), in a goroutine of its own that the caller may stop
// waiting for; it is bounded by LoadTimeout and Close.
func (a *Allocator) firstLoad(tag string) (*buffer, error) {
	if b := a.buffers.Load().get(tag); b != nil {
		return b, nil
	}
	began := a.opts.Now()
	alloc, err := a.allocateFirst(tag)
	if err = a.firstLoadEnded(tag, err); err != nil {
		return nil, err
	}
	b := newBuffer(a, tag, alloc, a.opts.Now().Sub(began))
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.publishFirstLocked(tag, b); err != nil {
		return nil, err
	}
	return b, nil
}

// firstLoadEnded records how tag's first load ended, err being the
// store's answer, and returns the error to answer with.
func (a *Allocator) firstLoadEnded(tag string, err error) error {
	switch {
	case errors.Is(err, ErrUnknownTag):
		a.forgetRow(tag)
		a.firstLoaded(tag, nil)
		return fmt.Errorf("%w: %q", ErrUnknownTag, tag)
	case err != nil:
		if !errors.Is(err, ErrClosed) && a.ctx.Err() == nil {
			a.firstLoaded(tag, err)
		}
		return a.unavailable(tag, err)
	}
	a.firstLoaded(tag, nil)
	return nil
}

// publishFirstLocked publishes b, the buffer of tag's first load, unless
// the allocator closed meanwhile. Called with a.mu held.
func (a *Allocator) publishFirstLocked(tag string, b *buffer) error {
	if a.closed {
		return ErrClosed
	}
	if a.listReads > 0 {
		a.publishedInRead[b] = true
	}
	a.publishLocked(tag, b)
	return nil
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
//
// The goroutine of a call publishes the buffers of all its tags, under
// one hold of the allocator's mutex, and the requests wait for the call
// itself: a first load in a batch costs no goroutine of its own, and no
// more wake-ups than the request's.
type firstBatches struct {
	mu      sync.Mutex // guards the fields below
	next    *firstBatch
	running int
	// pending are the tags of the batches waiting or running, until their
	// buffers are published: a request for one of them waits for its batch.
	pending map[string]*firstBatch
}

// firstBatch is one call for several tags; done is closed when it ends.
type firstBatch struct {
	tags    []string
	done    chan struct{}
	results map[string]firstResult // set before done
}

// firstResult is how one tag's first load in a batch ended: its buffer,
// published, or the error to answer with.
type firstResult struct {
	b   *buffer
	err error
}

// loadResult is one tag's answer of the store in a batch.
type loadResult struct {
	alloc Allocation
	err   error
}

// firstInBatch takes tag's first load in a batch, and waits for it, when
// the store takes batches and the range need not lie above a mark
// (Options.AboveReceived): batched is false otherwise. A request for a tag
// whose batch is waiting or running waits for that batch.
func (a *Allocator) firstInBatch(ctx context.Context, tag string) (b *buffer, batched bool, err error) {
	st, ok := a.store.(BatchAllocator)
	if !ok {
		return nil, false, nil
	}
	l := &a.firstBatches
	l.mu.Lock()
	fb, start := l.pending[tag], false
	if fb == nil {
		// Published after this request missed it: the pending entry is
		// removed only once the buffer is in the table.
		if b := a.buffers.Load().get(tag); b != nil {
			l.mu.Unlock()
			return b, true, nil
		}
		if a.opts.AboveReceived && a.mark(tag).high > 0 {
			l.mu.Unlock()
			return nil, false, nil
		}
		if fb = l.next; fb == nil {
			fb = &firstBatch{done: make(chan struct{})}
			l.next = fb
		}
		fb.tags = append(fb.tags, tag)
		if l.pending == nil {
			l.pending = make(map[string]*firstBatch)
		}
		l.pending[tag] = fb
		if start = l.running < maxLoadCalls; start {
			l.running++
			l.next = nil
		}
	}
	l.mu.Unlock()
	if start && !a.spawn(func() { a.runFirstBatches(st, fb) }) {
		return nil, true, ErrClosed
	}
	select {
	case <-fb.done:
	case <-ctx.Done():
		return nil, true, fmt.Errorf("%w: first load of %q: %w", ErrUnavailable, tag, ctx.Err())
	case <-a.ctx.Done(): // closed: the batches left are never run
		return nil, true, ErrClosed
	}
	r := fb.results[tag]
	if r.err != nil {
		return nil, true, r.err
	}
	return r.b, true, nil
}

// LoadFirst takes the first ranges of those of tags that have no buffer,
// in one batch of first loads through a store that takes batches, and
// waits for it (bounded by ctx): a caller that learned of many tags at
// once (the service's tag registry, which read what they are) has them
// loaded together, rather than by the first requests that then come one
// by one. A tag whose batch is waiting or running waits for that batch.
// How each load ended is not returned: the requests for a tag find its
// buffer, or load it again.
func (a *Allocator) LoadFirst(ctx context.Context, tags []string) {
	st, ok := a.store.(BatchAllocator)
	if !ok || len(tags) == 0 {
		return
	}
	l := &a.firstBatches
	fb := &firstBatch{done: make(chan struct{})}
	waits := map[*firstBatch]bool{}
	t := a.buffers.Load()
	l.mu.Lock()
	for _, tag := range tags {
		if p := l.pending[tag]; p != nil {
			waits[p] = true
			continue
		}
		if t.get(tag) != nil || a.opts.AboveReceived && a.mark(tag).high > 0 {
			continue // loaded, or loaded alone above its mark (firstInBatch)
		}
		fb.tags = append(fb.tags, tag)
		if l.pending == nil {
			l.pending = make(map[string]*firstBatch)
		}
		l.pending[tag] = fb
	}
	start := len(fb.tags) > 0 && l.running < maxLoadCalls
	switch {
	case start:
		l.running++
		waits[fb] = true
	case len(fb.tags) > 0 && l.next != nil: // every call runs: the tags join the next
		l.next.tags = append(l.next.tags, fb.tags...)
		for _, tag := range fb.tags {
			l.pending[tag] = l.next
		}
		waits[l.next] = true
	case len(fb.tags) > 0:
		l.next = fb
		waits[fb] = true
	}
	l.mu.Unlock()
	if start && !a.spawn(func() { a.runFirstBatches(st, fb) }) {
		return
	}
	for b := range waits {
		select {
		case <-b.done:
		case <-ctx.Done():
			return
		case <-a.ctx.Done():
			return
		}
	}
}

// allocateFirst takes the first range of tag by a load of its own, from a
// goroutine of the allocator's.
func (a *Allocator) allocateFirst(tag string) (Allocation, error) {
	var (
		alloc Allocation
		err   error
	)
	done := make(chan struct{})
	if !a.spawn(func() {
		defer close(done)
		alloc, err = a.allocate(tag, 0)
	}) {
		return Allocation{}, ErrClosed
	}
	<-done
	return alloc, err
}

// runFirstBatches takes batch b, then every batch that filled meanwhile,
// until none is waiting.
func (a *Allocator) runFirstBatches(st BatchAllocator, b *firstBatch) {
	l := &a.firstBatches
	for {
		began := a.opts.Now()
		loads := make(map[string]loadResult, len(b.tags))
		for tags := b.tags; len(tags) > 0; {
			n := min(len(tags), maxLoadBatch)
			a.allocateBatch(st, tags[:n], loads)
			tags = tags[n:]
		}
		b.results = a.publishBatch(b.tags, loads, a.opts.Now().Sub(began))
		l.mu.Lock()
		for _, tag := range b.tags {
			delete(l.pending, tag)
		}
		close(b.done)
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

// publishBatch records how the first loads of tags ended, as the store
// answered them in loads, and publishes the buffers of those that got a
// range, all under one hold of a.mu. took is how long the batch took.
func (a *Allocator) publishBatch(tags []string, loads map[string]loadResult, took time.Duration) map[string]firstResult {
	out := make(map[string]firstResult, len(tags))
	var loaded []*buffer
	for _, tag := range tags {
		r := loads[tag]
		if err := a.firstLoadEnded(tag, r.err); err != nil {
			out[tag] = firstResult{err: err}
			continue
		}
		loaded = append(loaded, newBuffer(a, tag, r.alloc, took))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range loaded {
		r := firstResult{b: b}
		if r.err = a.publishFirstLocked(b.tag, b); r.err != nil {
			r.b = nil
		}
		out[b.tag] = r
	}
	return out
}

// allocateBatch takes the first ranges of tags in one call and checks
// each as allocate does; a fence, rare, gets a deadline of its own.
func (a *Allocator) allocateBatch(st BatchAllocator, tags []string, into map[string]loadResult) {
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
