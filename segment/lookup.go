package segment

import (
	"context"
	"fmt"
	"sync"
)

// maxLookupBatch is the most names one look-up read asks the store about;
// a batch with more is read in several.
const maxLookupBatch = 500

// lookups answers whether names that were not on the last tag list have a
// row, by reading just those names. Reads are batched: at most one runs at
// a time, and the names asked for while it runs wait for the next one,
// which asks about all of them at once. So a tag created a moment ago is
// served on its first request, however many unknown names arrive beside
// it, and the store sees at most one look-up read in flight per allocator.
// Nothing is kept of a name once its read has answered.
type lookups struct {
	mu      sync.Mutex // guards the fields below
	next    *lookupBatch
	running bool
}

// lookupBatch is one read of several names; done is closed when it ends.
type lookupBatch struct {
	names map[string]struct{}
	done  chan struct{}
	found map[string]bool // the names that have a row, set before done
	err   error
}

// lookup answers whether tag, which was not on the last list, has a row: nil
// when it has (and it is now known), an error wrapping ErrUnknownTag when
// it has none, and one wrapping ErrUnavailable when the store could not say.
func (a *Allocator) lookup(ctx context.Context, tag string) error {
	l := &a.lookups
	l.mu.Lock()
	b := l.next
	if b == nil {
		b = &lookupBatch{names: make(map[string]struct{}), done: make(chan struct{})}
		l.next = b
	}
	b.names[tag] = struct{}{}
	start := !l.running
	if start {
		l.running, l.next = true, nil
	}
	l.mu.Unlock()
	if start && !a.spawn(func() { a.runLookups(b) }) {
		return ErrClosed
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return fmt.Errorf("%w: looking up %q: %w", ErrUnavailable, tag, ctx.Err())
	}
	switch {
	case b.found[tag]:
		return nil
	case b.err != nil:
		return a.unavailable(tag, b.err)
	}
	return fmt.Errorf("%w: %q", ErrUnknownTag, tag)
}

// runLookups reads batch b, then every batch that filled while it ran,
// until none is waiting.
func (a *Allocator) runLookups(b *lookupBatch) {
	l := &a.lookups
	for {
		a.readBatch(b)
		close(b.done)
		l.mu.Lock()
		b = l.next
		l.next = nil
		if b == nil {
			l.running = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

// readBatch asks the store which of b's names have a row and makes those
// known, as Added does, so that a list read already under way does not
// forget them.
func (a *Allocator) readBatch(b *lookupBatch) {
	ctx, cancel := context.WithTimeout(a.ctx, a.opts.LoadTimeout)
	defer cancel()
	names := make([]string, 0, len(b.names))
	for name := range b.names {
		names = append(names, name)
	}
	b.found = make(map[string]bool)
	for len(names) > 0 {
		n := min(len(names), maxLookupBatch)
		found, err := a.store.FindTags(ctx, names[:n])
		if err != nil {
			b.err = err
			break
		}
		for _, name := range found {
			b.found[name] = true
		}
		names = names[n:]
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for name := range b.found {
		if _, asked := b.names[name]; asked { // exactly a name asked for
			a.addedLocked(name)
		}
	}
}
