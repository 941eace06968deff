package sequence

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Round runs one round of ownership: it reads the spaces, records this
// member's heartbeat, renews the leases held here, reads the members and
// the sections, drops the sections lost, hands over those that another
// live member wins, and takes those this member wins whose lease is free.
// The background rounds call it; tests call it themselves.
func (q *Sequencer) Round(ctx context.Context) error {
	q.roundMu.Lock()
	defer q.roundMu.Unlock()
	if q.closed.Load() {
		return ErrClosed
	}
	spaces, err := q.opts.Store.Spaces(ctx)
	if err != nil {
		return fmt.Errorf("read spaces: %w", err)
	}
	for _, s := range spaces {
		q.add(s)
	}
	tags := 0
	if q.opts.Ordered != nil && q.opts.Tags != nil {
		names, err := q.opts.Ordered.OrderedTags(ctx)
		if err != nil {
			return fmt.Errorf("read ordered tags: %w", err)
		}
		for _, t := range names {
			q.addOrdered(t)
		}
		tags = len(names)
	}
	if len(spaces) == 0 && tags == 0 {
		return nil // nothing to serve, no member to be
	}
	me := Member{ID: q.opts.ID, Addr: q.opts.Addr}
	if err := q.opts.Store.Heartbeat(ctx, me, q.opts.Lease); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	// Every lease renewed by the next statement runs out at the store's
	// now plus the lease, and the store's now comes after t0.
	t0 := q.opts.Now()
	deadline := t0.Add(q.opts.Lease - q.opts.Margin)
	if err := q.opts.Store.RenewSections(ctx, me.ID, q.opts.Lease); err != nil {
		return fmt.Errorf("renew leases: %w", err)
	}
	rows, err := q.opts.Store.Sections(ctx)
	if err != nil {
		return fmt.Errorf("read sections: %w", err)
	}
	members, err := q.opts.Store.Members(ctx)
	if err != nil {
		return fmt.Errorf("read members: %w", err)
	}

	var errs []error
	for _, r := range rows {
		s := q.lookup(r.Space, r.Section)
		if s == nil {
			continue // a space created since Spaces: the next round
		}
		mine := r.Holder == me.ID
		winner := rendezvous(members, r.Space, r.Section)
		// Requests go to the holder of a live lease, or else to the
		// member about to take the section, which answers "retry" until
		// it has.
		owner := ""
		switch {
		case r.Live && !mine && r.Addr == me.Addr:
			// An earlier process on this address, killed: its lease
			// runs out before anyone serves the section.
		case r.Live && !mine:
			owner = r.Addr
		case !r.Live && winner.ID != me.ID:
			owner = winner.Addr
		}
		s.owner.Store(&owner)

		s.mu.Lock()
		owned := s.owned
		switch {
		case owned && mine:
			s.deadline = deadline
		case owned:
			s.dropLocked(q)
			q.opts.OnEvent(Event{Kind: "lost", Space: r.Space, Section: r.Section})
			owned = false
		}
		s.mu.Unlock()

		switch {
		case owned && winner.ID != "" && winner.ID != me.ID:
			q.handOver(ctx, s, winner)
		case !owned && mine && winner.ID != me.ID:
			// Held in the store but not served here (a release that
			// failed): the renewals above would keep it from the winner.
			q.handOver(ctx, s, winner)
		case !owned && winner.ID == me.ID && (!r.Live || mine):
			if err := q.take(ctx, s, me); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// take claims a section whose lease is free (or still this member's, from
// before a restart of the Sequencer's state) and starts serving it above
// its max_seq.
func (q *Sequencer) take(ctx context.Context, s *section, me Member) error {
	t0 := q.opts.Now()
	maxSeq, ok, err := q.opts.Store.AcquireSection(ctx, s.space, s.index, me, q.opts.Lease)
	if err != nil {
		return fmt.Errorf("take section %d of space %q: %w", s.index, s.space, err)
	}
	if !ok {
		return nil // another was first
	}
	s.mu.Lock()
	s.takeLocked(maxSeq, t0.Add(q.opts.Lease-q.opts.Margin))
	s.mu.Unlock()
	none := ""
	s.owner.Store(&none)
	q.taken.Add(1)
	q.opts.OnEvent(Event{Kind: "taken", Space: s.space, Section: s.index})
	return nil
}

// handOver stops serving a section and clears its lease, so that the
// member that wins it takes it at its next round; requests for it go
// there from now on.
func (q *Sequencer) handOver(ctx context.Context, s *section, winner Member) {
	s.mu.Lock()
	s.dropLocked(q)
	s.mu.Unlock()
	s.owner.Store(&winner.Addr)
	err := q.opts.Store.ReleaseSection(ctx, s.space, s.index, q.opts.ID)
	// A release that failed leaves the lease to run out.
	q.opts.OnEvent(Event{Kind: "released", Space: s.space, Section: s.index, Err: err})
}

// rendezvous is the member that wins a section: the one with the highest
// score of its id and the section's name. When a member joins or leaves,
// only the sections it wins or won change hands.
func rendezvous(members []Member, spaceName string, index int) Member {
	var (
		best      Member
		bestScore uint64
	)
	for _, m := range members {
		sc := score(m.ID, spaceName, index)
		if best.ID == "" || sc > bestScore || sc == bestScore && m.ID > best.ID {
			best, bestScore = m, sc
		}
	}
	return best
}

// score hashes member, space and section with FNV-1a and mixes the result
// (splitmix64's finalizer), so that scores of near names are unrelated.
func score(member, spaceName string, index int) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= prime
		}
		h ^= 0xff
		h *= prime
	}
	add(member)
	add(spaceName)
	add(strconv.Itoa(index))
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
