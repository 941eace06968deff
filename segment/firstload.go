package segment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

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
	a.publishLocked(tag, b)
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
