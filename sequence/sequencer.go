package sequence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Sequencer issues the per-key sequences of every space, serving the
// sections this instance owns. It is safe for concurrent use.
type Sequencer struct {
	opts Options

	mu     sync.RWMutex // protects spaces
	spaces map[string]*space

	// ordered maps the ordered tags known here to their section; it is
	// replaced whole under orderedMu and read without a lock.
	orderedMu sync.Mutex
	ordered   atomic.Pointer[map[string]*section]

	keysInMemory  atomic.Int64
	keysForgotten atomic.Int64 // keys forgotten past Options.MaxKeys
	skips         skips        // numbers of ordered tags skipped (skipped.go)
	taken         atomic.Int64 // sections taken over since the start
	dropped       atomic.Int64 // sections released or lost since the start
	closed        atomic.Bool

	roundMu sync.Mutex // one round at a time; protects plans
	plans   []plan     // made by the last round, for leases' ends
	kick    chan struct{}
	stop    context.CancelFunc
	done    chan struct{}
}

// space is a space and its sections.
type space struct {
	Space
	sections []*section
	routes   routeCache // its routing table (routes.go)
	// settled: a round has read the leases of its sections and taken or
	// routed each; until then a request runs one (settleNew).
	settled atomic.Bool
}

// New returns a Sequencer and, unless opts.Interval is negative, starts
// its rounds in the background; Close stops them. The first round runs
// at once.
func New(opts Options) (*Sequencer, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	q := &Sequencer{opts: opts, spaces: make(map[string]*space), kick: make(chan struct{}, 1), done: make(chan struct{})}
	q.ordered.Store(&map[string]*section{})
	ctx, cancel := context.WithCancel(context.Background())
	q.stop = cancel
	if opts.Interval < 0 {
		close(q.done)
		return q, nil
	}
	go q.loop(ctx)
	return q, nil
}

// ID is this member's id.
func (q *Sequencer) ID() string { return q.opts.ID }

// Lease is the length of a section's lease.
func (q *Sequencer) Lease() time.Duration { return q.opts.Lease }

func (q *Sequencer) loop(ctx context.Context) {
	defer close(q.done)
	t := time.NewTicker(q.opts.Interval)
	defer t.Stop()
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	failing := false
	for {
		rctx, cancel := context.WithTimeout(ctx, q.opts.Interval+q.opts.Margin)
		err := q.Round(rctx)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			failing = true
			q.opts.OnEvent(Event{Kind: "error", Err: err})
		case failing:
			failing = false
			q.opts.OnEvent(Event{Kind: "recovered"})
		}
		cancel()
		if !q.wait(ctx, t, due) {
			return
		}
	}
}

// wait waits for the time of the next round, or a kick, carrying out
// meanwhile the plans for leases' ends as they come due; false when ctx
// ended.
func (q *Sequencer) wait(ctx context.Context, tick *time.Ticker, due *time.Timer) bool {
	for {
		if at, ok := q.nextPlan(); ok {
			due.Reset(at.Sub(q.opts.Now()))
		} else {
			due.Stop()
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
			return true
		case <-q.kick:
			return true
		case <-due.C:
			dctx, cancel := context.WithTimeout(ctx, q.opts.Interval+q.opts.Margin)
			q.atLeaseEnd(dctx)
			cancel()
		}
	}
}

// Next returns the next number of key in the space.
func (q *Sequencer) Next(ctx context.Context, spaceName, key string) (int64, error) {
	return q.NextN(ctx, spaceName, key, 1)
}

// NextN takes n numbers (1..MaxCount) of key and returns the first: they
// are first..first+n-1, all above every number key was given before.
func (q *Sequencer) NextN(ctx context.Context, spaceName, key string, n int) (int64, error) {
	if n < 1 || n > MaxCount {
		return 0, fmt.Errorf("sequence: count %d outside 1..%d", n, MaxCount)
	}
	sec, err := q.section(ctx, spaceName, key)
	if err != nil {
		return 0, err
	}
	return sec.next(ctx, q, key, int64(n))
}

// Current returns the last number issued to key, without taking one (see
// section.current for a key not issued since its section last moved).
func (q *Sequencer) Current(ctx context.Context, spaceName, key string) (int64, error) {
	sec, err := q.section(ctx, spaceName, key)
	if err != nil {
		return 0, err
	}
	return sec.current(q, key)
}

// section finds key's section, reading a space not known yet from the
// store.
func (q *Sequencer) section(ctx context.Context, spaceName, key string) (*section, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	sp, err := q.known(ctx, spaceName)
	if err != nil {
		return nil, err
	}
	return sp.sections[SectionOf(key, len(sp.sections))], nil
}

// known finds a space, reading one not known yet from the store.
func (q *Sequencer) known(ctx context.Context, spaceName string) (*space, error) {
	q.mu.RLock()
	sp := q.spaces[spaceName]
	q.mu.RUnlock()
	if sp == nil {
		if err := ValidateSpace(spaceName); err != nil {
			return nil, err
		}
		if q.closed.Load() {
			return nil, ErrClosed
		}
		s, err := q.opts.Store.Space(ctx, spaceName)
		if errors.Is(err, ErrUnknownSpace) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%w: read space %q: %w", ErrUnavailable, spaceName, err)
		}
		sp = q.add(s)
		q.Kick()
	}
	if !sp.settled.Load() {
		q.settleNew(ctx, sp.settled.Load)
	}
	return sp, nil
}

// settleNew runs a round for a space or an ordered tag that no round has
// settled yet (just created, here or by another instance), so that its
// first request finds each section taken here or routed to its owner,
// rather than answering "retry later" until the next round. Requests that
// come meanwhile share one round: once it has settled the space they find
// nothing left to do. A round that did not settle it (one that failed, or
// learned the spaces before this one was created) is followed by another.
// When Options.Interval is negative the caller runs the rounds, and this
// does nothing. A round that fails leaves the sections as they were: their
// requests answer unavailable until a round succeeds.
func (q *Sequencer) settleNew(ctx context.Context, settled func() bool) {
	if q.opts.Interval < 0 {
		return
	}
	q.roundMu.Lock()
	defer q.roundMu.Unlock()
	if settled() || q.closed.Load() {
		return
	}
	// The round is bounded as the background ones are, and not cut short
	// by a client that goes away: a take half done waits for the next.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opts.Interval+q.opts.Margin)
	defer cancel()
	_ = q.roundLocked(rctx) // the background rounds report failures
}

// Added tells the Sequencer of a space just created, so that its
// sections are claimed at once rather than at the next round (its first
// request waits for that; see settleNew).
func (q *Sequencer) Added(s Space) {
	q.add(s)
	q.Kick()
}

// Kick runs a round soon.
func (q *Sequencer) Kick() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// add knows the space from now on; a space never goes away.
func (q *Sequencer) add(s Space) *space {
	q.mu.Lock()
	defer q.mu.Unlock()
	if sp := q.spaces[s.Name]; sp != nil {
		return sp
	}
	sp := &space{Space: s, sections: make([]*section, s.Sections)}
	for i := range sp.sections {
		sp.sections[i] = &section{space: s.Name, index: i, step: s.Step}
	}
	q.spaces[s.Name] = sp
	return sp
}

// lookup is a known section, or nil.
func (q *Sequencer) lookup(spaceName string, index int) *section {
	if index == OrderedSection {
		return (*q.ordered.Load())[spaceName]
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	sp := q.spaces[spaceName]
	if sp == nil || index < 0 || index >= len(sp.sections) {
		return nil
	}
	return sp.sections[index]
}

// each calls f with every known section.
func (q *Sequencer) each(f func(*section)) {
	q.mu.RLock()
	all := make([]*space, 0, len(q.spaces))
	for _, sp := range q.spaces {
		all = append(all, sp)
	}
	q.mu.RUnlock()
	for _, sp := range all {
		for _, s := range sp.sections {
			f(s)
		}
	}
	for _, s := range *q.ordered.Load() {
		f(s)
	}
}

// Close stops the rounds, stops serving, clears the leases held here so
// that other instances take the sections at once, and leaves the members.
func (q *Sequencer) Close(ctx context.Context) error {
	if q.closed.Swap(true) {
		return nil
	}
	q.stop()
	<-q.done
	q.roundMu.Lock()
	defer q.roundMu.Unlock()
	var errs []error
	q.each(func(s *section) {
		s.mu.Lock()
		_ = s.awaitLocked(ctx) // what a raise in flight takes is handed back too
		row, end, first := s.releaseLocked(q)
		s.mu.Unlock()
		q.handBack(ctx, s.space, row, end, first)
	})
	// Every lease at once, after the hand-backs: the next owner of an
	// ordered tag raises its row after them.
	if err := q.opts.Store.ReleaseSections(ctx, q.opts.ID); err != nil {
		errs = append(errs, err)
	}
	if err := q.opts.Store.Leave(ctx, q.opts.ID); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Stats are the Sequencer's figures, for metrics and the status page.
type Stats struct {
	Spaces        int
	Sections      int   // sections of every space, and one per ordered tag
	SectionsOwned int   // sections (ordered tags included) served here now
	KeysInMemory  int64 // keys with a counter here
	KeysForgotten int64 // keys forgotten past Options.MaxKeys since the start
	Taken         int64 // sections taken over since the start
	Dropped       int64 // sections released or lost since the start
}

// Stats reads the figures.
func (q *Sequencer) Stats() Stats {
	st := Stats{KeysInMemory: q.keysInMemory.Load(), KeysForgotten: q.keysForgotten.Load(), Taken: q.taken.Load(), Dropped: q.dropped.Load()}
	q.mu.RLock()
	st.Spaces = len(q.spaces)
	q.mu.RUnlock()
	now := q.opts.Now()
	q.each(func(s *section) {
		st.Sections++
		s.mu.Lock()
		if s.owned && now.Before(s.deadline) {
			st.SectionsOwned++
		}
		s.mu.Unlock()
	})
	return st
}
