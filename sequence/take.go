package sequence

import (
	"context"
	"fmt"
	"time"
)

// Taking and handing over sections.

// takeAll takes the sections with one call of the store, so that a start
// (every section of every space and ordered tag to take) costs the round
// trips of one take, not of one take per section. The events are told in
// the order of the sections.
func (q *Sequencer) takeAll(ctx context.Context, takes []*section) []error {
	var (
		ids  []SectionID
		want []*section
	)
	for _, s := range takes {
		s.mu.Lock()
		owned := s.owned
		s.mu.Unlock()
		if !owned {
			ids = append(ids, SectionID{Space: s.space, Section: s.index})
			want = append(want, s)
		}
	}
	if len(want) == 0 {
		return nil
	}
	t0 := q.opts.Now()
	got, err := q.opts.Store.AcquireSections(ctx, ids, q.me(), q.opts.Lease)
	errs := make([]error, len(want))
	for i, s := range want {
		var a Acquired
		if err == nil {
			a = got[i]
		}
		ok, err := q.acquired(s, a, err, t0)
		if ok {
			q.opts.OnEvent(Event{Kind: "taken", Space: s.space, Section: s.index})
		}
		errs[i] = err
	}
	return errs
}

// take claims a section whose lease is free (or still this member's, from
// before a restart of the Sequencer's state) and starts serving it above
// its max_seq. ok is false when the store refused: another holds it.
func (q *Sequencer) take(ctx context.Context, s *section) (ok bool, err error) {
	s.mu.Lock()
	owned := s.owned
	s.mu.Unlock()
	if owned {
		return true, nil
	}
	t0 := q.opts.Now()
	maxSeq, ok, err := q.opts.Store.AcquireSection(ctx, s.space, s.index, q.me(), q.opts.Lease)
	if ok, err = q.acquired(s, Acquired{MaxSeq: maxSeq, OK: ok}, err, t0); ok {
		q.opts.OnEvent(Event{Kind: "taken", Space: s.space, Section: s.index})
	}
	return ok, err
}

// acquired serves s from a take the store answered with a and err, begun
// at t0: the lease runs from no earlier than t0.
func (q *Sequencer) acquired(s *section, a Acquired, err error, t0 time.Time) (bool, error) {
	if err != nil {
		s.refused.Store(&err)
		return false, fmt.Errorf("take section %d of space %q: %w", s.index, s.space, err)
	}
	s.refused.Store(nil)
	if !a.OK {
		return false, nil
	}
	s.mu.Lock()
	s.takeLocked(a.MaxSeq, t0.Add(q.opts.Lease-q.opts.Margin))
	s.mu.Unlock()
	none := ""
	s.owner.Store(&none)
	q.taken.Add(1)
	return true, nil
}

// handOver stops serving a section and clears its lease, so that the
// member that wins it takes it at its next round; requests for it go
// there from now on.
func (q *Sequencer) handOver(ctx context.Context, s *section, winner Member) {
	s.mu.Lock()
	_ = s.awaitLocked(ctx) // what a raise in flight takes is handed back too
	row, end, first := s.releaseLocked(q)
	s.mu.Unlock()
	s.owner.Store(&winner.Addr)
	q.handBack(ctx, s.space, row, end, first)
	err := q.opts.Store.ReleaseSection(ctx, s.space, s.index, q.opts.ID)
	// A release that failed leaves the lease to run out.
	q.opts.OnEvent(Event{Kind: "released", Space: s.space, Section: s.index, Err: err})
}
