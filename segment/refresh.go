package segment

import (
	"context"
	"fmt"
	"time"
)

// drop removes tag's buffer, if b is still the one published.
func (a *Allocator) drop(tag string, b *buffer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.buffers.Load().get(tag) == b {
		a.dropLocked(tag)
	}
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
	adds := a.beginListRead()
	tags, err := a.store.Tags(ctx)
	if err != nil {
		a.mu.Lock()
		a.endListReadLocked()
		a.mu.Unlock()
		return fmt.Errorf("refresh tags: %w", err)
	}
	a.forgetFailedUnlisted(tags)

	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.endListReadLocked()
	t := a.buffers.Load()
	known, withBuffer := a.compareListedLocked(t, tags)
	a.keepAddedLocked(known, adds)
	a.known = known
	// Only when fewer listed tags have buffers than there are buffers was
	// one of them not listed.
	if withBuffer != t.used {
		a.dropUnlistedLocked(t, tags, known)
	}
	return nil
}

// beginListRead begins one read of the tag list, and returns the count of
// tags added so far: those added during the read are kept, as are the
// buffers published during it.
func (a *Allocator) beginListRead() (adds uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.listReads++; a.listReads == 1 {
		a.publishedInRead = make(map[*buffer]bool)
	}
	return a.adds
}

// forgetFailedUnlisted forgets the failed first loads of tags that are not
// on the list read: their rows are gone.
func (a *Allocator) forgetFailedUnlisted(tags []Tag) {
	a.failedMu.Lock()
	defer a.failedMu.Unlock()
	if len(a.failed) == 0 {
		return
	}
	listed := make(map[string]bool, len(tags))
	for _, t := range tags {
		listed[t.Name] = true
	}
	for tag := range a.failed {
		if !listed[tag] {
			delete(a.failed, tag)
		}
	}
}

// compareListedLocked looks each listed tag up in the table t: one with a
// buffer is compared with its mark (a row read behind it is checked by a
// load of its own), one without is known from now on, where first loads
// look names up (not those taken in batches). It returns the known tags
// and how many listed tags have a buffer. Called with a.mu held.
func (a *Allocator) compareListedLocked(t *table, tags []Tag) (known map[string]bool, withBuffer int) {
	known = make(map[string]bool)
	_, batched := a.store.(BatchAllocator)
	keepKnown := !batched || a.opts.AboveReceived // see newBuffer: only look-ups read it
	var behind []string
	a.marksMu.Lock()
	for _, row := range tags {
		var m *mark
		if b := t.get(row.Name); b != nil {
			withBuffer++
			m = &b.mark
		} else {
			if keepKnown {
				known[row.Name] = true
			}
			m = a.marks[row.Name]
		}
		if m != nil && !a.opts.AboveReceived && row.MaxID < m.high {
			behind = append(behind, row.Name)
		}
	}
	a.marksMu.Unlock()
	for _, row := range behind {
		a.spawnLocked(func() { a.checkBehind(row) })
	}
	return known, withBuffer
}

// keepAddedLocked adds to known the tags added since the read began
// (adds), and forgets the others' additions: the list read has them.
// Called with a.mu held.
func (a *Allocator) keepAddedLocked(known map[string]bool, adds uint64) {
	for tag, at := range a.added {
		if at > adds {
			known[tag] = true
		} else {
			delete(a.added, tag)
		}
	}
}

// dropUnlistedLocked drops the buffers of t whose tags are neither listed
// nor known, unless they were published during the read. Called with a.mu
// held.
func (a *Allocator) dropUnlistedLocked(t *table, tags []Tag, known map[string]bool) {
	listed := make(map[string]bool, len(tags))
	for _, row := range tags {
		listed[row.Name] = true
	}
	var gone []string
	t.each(func(b *buffer) {
		if !listed[b.tag] && !known[b.tag] && !a.publishedInRead[b] {
			gone = append(gone, b.tag)
		}
	})
	a.dropLocked(gone...)
}

// endListReadLocked ends one read of the tag list; the buffers published
// during the reads are forgotten once none runs. Called with a.mu held.
func (a *Allocator) endListReadLocked() {
	if a.listReads--; a.listReads == 0 {
		a.publishedInRead = nil
	}
}
