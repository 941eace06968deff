package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/leafid/leaf/segment"
)

// Health is the state of the store as its calls see it.
type Health struct {
	// Up is false from the first call that found the database unreachable
	// (refused, timed out, connection lost, or no node that may take
	// writes) until a probe gets an answer again.
	Up bool
	// Since is when the state began.
	Since time.Time
	// Err is why it went down; when it comes back up, why it was down.
	Err error
	// Failed counts the calls refused or failed while down; on recovery,
	// all of them.
	Failed uint64
	// DownFor is, on recovery, how long the store was down.
	DownFor time.Duration
}

// health tracks whether the database answers. While it is down every call
// fails at once with segment.ErrStoreUnavailable, and the calls in flight
// when it went down are cancelled: nothing waits on a database known not
// to answer. A probe loop brings it back up.
type health struct {
	onChange func(Health)
	changeMu sync.Mutex    // held across a change and its onChange call, so changes are reported in order
	wake     chan struct{} // tells the probe loop the store just went down

	mu       sync.Mutex // protects the fields below
	up       bool
	checking bool // a call ran out of time: until a probe decides, calls are refused
	since    time.Time
	err      error
	failed   uint64
	gen      context.Context // cancelled when the store goes down
	cancel   context.CancelFunc
}

func newHealth(onChange func(Health)) *health {
	h := &health{onChange: onChange, up: true, since: time.Now(), wake: make(chan struct{}, 1)}
	h.gen, h.cancel = context.WithCancel(context.Background())
	return h
}

// state returns the current health.
func (h *health) state() Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Health{Up: h.up, Since: h.since, Err: h.err, Failed: h.failed}
}

// admit returns the context that calls starting now run under (cancelled
// if the store goes down or comes under suspicion), or an error while the
// store is down or being checked.
func (h *health) admit() (context.Context, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !h.up:
		h.failed++
		return nil, fmt.Errorf("%w: down since %s: %w", segment.ErrStoreUnavailable,
			h.since.UTC().Format(time.RFC3339Nano), h.err)
	case h.checking:
		return nil, fmt.Errorf("%w: a call got no answer in time; checking the database", segment.ErrStoreUnavailable)
	}
	return h.gen, nil
}

// suspect puts the store under suspicion after a call ran out of time:
// the calls in flight are cancelled and new ones refused, so that nothing
// waits on a database that may not answer, but nothing is reported until
// a probe decides (down, or cleared). It reports whether the store was up
// and not already under suspicion.
func (h *health) suspect() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.up || h.checking {
		return false
	}
	h.checking = true
	h.cancel()
	return true
}

// cleared ends a suspicion that a probe found groundless.
func (h *health) cleared() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.up && h.checking {
		h.checking = false
		h.gen, h.cancel = context.WithCancel(context.Background())
	}
}

// isUp reports whether the store is up, for the fast paths below.
func (h *health) isUp() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.up
}

// down records that the database did not answer. It is called on failures
// only, so it need not spare changeMu as answered does.
func (h *health) down(err error) {
	h.changeMu.Lock()
	defer h.changeMu.Unlock()
	h.mu.Lock()
	if !h.up {
		h.failed++
		h.mu.Unlock()
		return
	}
	h.up, h.checking, h.since, h.err, h.failed = false, false, time.Now(), err, 1
	h.cancel()
	st := Health{Up: false, Since: h.since, Err: err, Failed: 1}
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	h.notify(st)
}

// answered records that the database answered.
func (h *health) answered() {
	if h.isUp() {
		return
	}
	h.changeMu.Lock()
	defer h.changeMu.Unlock()
	h.mu.Lock()
	if h.up {
		h.mu.Unlock()
		return
	}
	now := time.Now()
	st := Health{Up: true, Since: now, Err: h.err, Failed: h.failed, DownFor: now.Sub(h.since)}
	h.up, h.since, h.err, h.failed = true, now, nil, 0
	h.gen, h.cancel = context.WithCancel(context.Background())
	h.mu.Unlock()
	h.notify(st)
}

func (h *health) notify(st Health) {
	if h.onChange != nil {
		h.onChange(st)
	}
}

// Health returns the state of the database as the store's calls found it.
func (s *Store) Health() Health { return s.health.state() }
