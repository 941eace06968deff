package segment

import "context"

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
