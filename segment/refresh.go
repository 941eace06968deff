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
	a.mu.Lock()
	adds := a.adds // tags added during the read are kept, as are buffers published
	if a.listReads++; a.listReads == 1 {
		a.publishedInRead = make(map[*buffer]bool)
	}
	a.mu.Unlock()
	tags, err := a.store.Tags(ctx)
	if err != nil {
		a.mu.Lock()
		a.endListReadLocked()
		a.mu.Unlock()
		return fmt.Errorf("refresh tags: %w", err)
	}
	a.failedMu.Lock()
	if len(a.failed) > 0 {
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
	a.failedMu.Unlock()

	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.endListReadLocked()
	// Each listed tag is looked up in the table: one with a buffer is
	// compared with its mark, one without is known from now on, where
	// first loads look names up (not those taken in batches). Only when
	// fewer listed tags have buffers than there are buffers was one of
	// them not listed, and the list is made into a set to find which.
	t := a.buffers.Load()
	known := make(map[string]bool)
	_, batched := a.store.(BatchAllocator)
	keepKnown := !batched || a.opts.AboveReceived // see newBuffer: only look-ups read it
	withBuffer := 0
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
	for tag, at := range a.added {
		if at > adds {
			known[tag] = true
		} else {
			delete(a.added, tag)
		}
	}
	a.known = known
	if withBuffer == t.used {
		return nil
	}
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
	return nil
}

// endListReadLocked ends one read of the tag list; the buffers published
// during the reads are forgotten once none runs. Called with a.mu held.
func (a *Allocator) endListReadLocked() {
	if a.listReads--; a.listReads == 0 {
		a.publishedInRead = nil
	}
}
