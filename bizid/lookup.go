package bizid

import "context"

// lookupBatch is the names one look-up run reads; done is closed when it
// has.
type lookupBatch struct {
	names map[string]struct{}
	done  chan struct{}
	found map[string]lookupResult // set before done
	err   error
}

type lookupResult struct {
	set  Settings
	kind Kind
}

// lookup asks the store about name in the next look-up run.
func (is *Issuer) lookup(ctx context.Context, name string) (Settings, Kind, error) {
	is.mu.Lock()
	b := is.next
	if b == nil {
		b = &lookupBatch{names: make(map[string]struct{}), done: make(chan struct{})}
		is.next = b
	}
	b.names[name] = struct{}{}
	start := !is.running
	if start {
		if is.ctx.Err() != nil {
			is.mu.Unlock()
			return Settings{}, NoRow, ErrClosed
		}
		is.running, is.next = true, nil
		is.wg.Add(1)
	}
	is.mu.Unlock()
	if start {
		go is.runLookups(b)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return Settings{}, NoRow, ctx.Err()
	}
	if r, ok := b.found[name]; ok {
		return r.set, r.kind, nil
	}
	if b.err != nil {
		return Settings{}, NoRow, b.err
	}
	return Settings{}, NoRow, nil
}

// runLookups reads b, then each batch that filled meanwhile, until none
// waits. A name's read ends the batch's reads when it fails: the names
// not read yet get that error.
func (is *Issuer) runLookups(b *lookupBatch) {
	defer is.wg.Done()
	for {
		b.found = make(map[string]lookupResult, len(b.names))
		for name := range b.names {
			s, kind, err := is.opts.Store.LookupTag(is.ctx, name)
			if err != nil {
				b.err = err
				break
			}
			b.found[name] = lookupResult{s, kind}
		}
		close(b.done)
		is.mu.Lock()
		b, is.next = is.next, nil
		if b == nil {
			is.running = false
			is.mu.Unlock()
			return
		}
		is.mu.Unlock()
	}
}
