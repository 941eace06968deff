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
	if a.byTag[tag] == b {
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
	born, adds := a.born, a.adds // buffers born and tags added during the read are kept
	a.mu.Unlock()
	tags, err := a.store.Tags(ctx)
	if err != nil {
		return fmt.Errorf("refresh tags: %w", err)
	}
	known := make(map[string]bool, len(tags))
	for _, t := range tags {
		known[t.Name] = true
		if !a.opts.AboveReceived && t.MaxID < a.mark(t.Name).high {
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
	var gone []string
	for tag, b := range a.byTag {
		if !known[tag] && b.born <= born {
			gone = append(gone, tag)
		}
	}
	a.dropLocked(gone...)
	return nil
}
