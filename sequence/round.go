package sequence

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Round runs one round of ownership, in four steps, the two reads or
// writes of each step at the same time: it learns the spaces and ordered
// tags (learn), records this member's heartbeat and renews the leases held
// here (renew), reads the sections' leases and the live members (look), and settles every section by what it read (settle):
// routes its requests, drops it when lost, hands it over when another
// live member wins it, takes it when this member wins it and its lease is
// free, and plans what to do should another member's lease of it run out
// before the next round (see atLeaseEnd). The background rounds call it;
// tests call it themselves.
func (q *Sequencer) Round(ctx context.Context) error {
	q.roundMu.Lock()
	defer q.roundMu.Unlock()
	return q.roundLocked(ctx)
}

// roundLocked is Round with roundMu held.
func (q *Sequencer) roundLocked(ctx context.Context) error {
	if q.closed.Load() {
		return ErrClosed
	}
	served, err := q.learn(ctx)
	if err != nil || served == 0 {
		return err // with nothing to serve, no member to be
	}
	deadline, err := q.renew(ctx)
	if err != nil {
		return err
	}
	v, err := q.look(ctx)
	if err != nil {
		return err
	}
	var (
		plans   []plan
		takes   []*section
		ordered []*section
		settled = map[string]bool{}
	)
	for _, r := range v.rows {
		s := q.lookup(r.Space, r.Section)
		if s == nil {
			continue // a space created since learn: the next round
		}
		p, take := q.settle(ctx, s, r, v, deadline)
		if take {
			takes = append(takes, s)
		}
		if p.s != nil {
			plans = append(plans, p)
		}
		if r.Section != OrderedSection {
			settled[r.Space] = true
		} else {
			ordered = append(ordered, s)
		}
	}
	errs := q.takeAll(ctx, takes)
	q.plans = plans
	for _, s := range ordered {
		s.settled.Store(true)
	}
	q.mu.RLock()
	for name := range settled {
		if sp := q.spaces[name]; sp != nil {
			sp.settled.Store(true)
			// The round may have moved owners: the next table asked for
			// is read anew rather than up to routesMaxAge old.
			sp.routes.last.Store(nil)
		}
	}
	q.mu.RUnlock()
	return errors.Join(errs...)
}

// me is this member.
func (q *Sequencer) me() Member { return Member{ID: q.opts.ID, Addr: q.opts.Addr} }

// learn reads the spaces and the ordered tags, at the same time, known
// here from then on, and returns how many there are.
func (q *Sequencer) learn(ctx context.Context) (int, error) {
	var (
		spaces []Space
		names  []string
		tags   = q.opts.Ordered != nil && q.opts.Tags != nil
	)
	errSpaces, errTags := both(func() (err error) {
		spaces, err = q.opts.Store.Spaces(ctx)
		return err
	}, func() (err error) {
		if tags {
			names, err = q.opts.Ordered.OrderedTags(ctx)
		}
		return err
	})
	if errSpaces != nil {
		return 0, fmt.Errorf("read spaces: %w", errSpaces)
	}
	if errTags != nil {
		return 0, fmt.Errorf("read ordered tags: %w", errTags)
	}
	for _, s := range spaces {
		q.add(s)
	}
	for _, t := range names {
		q.addOrdered(t)
	}
	return len(spaces) + len(names), nil
}

// both runs f and g at the same time (two statements, two connections:
// one round trip rather than two) and returns their errors.
func both(f, g func() error) (errF, errG error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		errG = g()
	}()
	errF = f()
	<-done
	return errF, errG
}

// renew records this member's heartbeat and renews every lease it holds,
// at the same time, and returns the local deadline of those leases.
func (q *Sequencer) renew(ctx context.Context) (deadline time.Time, err error) {
	// Every lease renewed by RenewSections runs out at the store's now
	// plus the lease, and the store's now comes after t0.
	t0 := q.opts.Now()
	errBeat, errRenew := both(func() error {
		return q.opts.Store.Heartbeat(ctx, q.me(), q.opts.Lease)
	}, func() error {
		return q.opts.Store.RenewSections(ctx, q.opts.ID, q.opts.Lease)
	})
	if errBeat != nil {
		return time.Time{}, fmt.Errorf("heartbeat: %w", errBeat)
	}
	if errRenew != nil {
		return time.Time{}, fmt.Errorf("renew leases: %w", errRenew)
	}
	return t0.Add(q.opts.Lease - q.opts.Margin), nil
}

// view is what a round read of the leases and the members.
type view struct {
	rows    []SectionRow
	members []Member
	// at is when the read of rows returned, by the local clock: a lease
	// of a row runs out no earlier than at plus its Left.
	at time.Time
}

// look reads the sections' leases and the live members, at the same time,
// after the heartbeat: this member is among them.
func (q *Sequencer) look(ctx context.Context) (view, error) {
	var v view
	errSections, errMember := both(func() (err error) {
		v.rows, err = q.opts.Store.Sections(ctx)
		v.at = q.opts.Now()
		return err
	}, func() (err error) {
		v.members, err = q.opts.Store.Members(ctx)
		return err
	})
	if errSections != nil {
		return view{}, fmt.Errorf("read sections: %w", errSections)
	}
	if errMember != nil {
		return view{}, fmt.Errorf("read members: %w", errMember)
	}
	return v, nil
}

// settle brings one section in line with its row: it routes the
// section's requests, keeps serving it or drops it, then hands it over,
// says it is this member's to take now (take: the round takes every such
// section at once, after settling them all, with takeAll), or plans for
// the end of another member's lease of it.
func (q *Sequencer) settle(ctx context.Context, s *section, r SectionRow, v view, deadline time.Time) (p plan, take bool) {
	me := q.me()
	mine := r.Holder == me.ID
	winner := rendezvous(v.members, r.Space, r.Section)
	q.route(s, r, winner)
	owned := q.keep(s, r, mine, deadline)
	switch {
	case owned && winner.ID != "" && winner.ID != me.ID:
		q.handOver(ctx, s, winner)
	case !owned && mine && winner.ID != me.ID:
		// Held in the store but not served here (a release that
		// failed): the renewals would keep it from the winner.
		q.handOver(ctx, s, winner)
	case !owned && winner.ID == me.ID && (!r.Live || mine):
		return plan{}, true
	case r.Live && !mine:
		// Another member's lease: should that member stop renewing it
		// (killed, cut off the store), the heir takes the section the
		// moment the lease runs out.
		if heir := rendezvousWithout(v.members, r.Space, r.Section, r.Holder); heir.ID != "" {
			return plan{s: s, at: v.at.Add(r.Left), heir: heir}, false
		}
	}
	return plan{}, false
}

// route points the section's requests at the holder of its live lease,
// or else at the member about to take it, which answers "retry" until it
// has; at nobody when this member holds it or is about to take it.
func (q *Sequencer) route(s *section, r SectionRow, winner Member) {
	me := q.me()
	mine := r.Holder == me.ID
	owner := ""
	switch {
	case r.Live && !mine && r.Addr == me.Addr:
		// An earlier process on this address, killed: its lease runs
		// out before anyone serves the section.
	case r.Live && !mine:
		owner = r.Addr
	case !r.Live && winner.ID != me.ID:
		owner = winner.Addr
	}
	s.owner.Store(&owner)
}

// keep moves the local deadline of a section served here whose lease was
// just renewed, and drops a section served here whose lease the store
// gives another; it says whether the section is still served here.
func (q *Sequencer) keep(s *section, r SectionRow, mine bool, deadline time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.owned:
		return false
	case mine:
		s.deadline = deadline
		return true
	}
	s.skipHeldLocked(q, SkipLeaseLost)
	s.dropLocked(q)
	q.opts.OnEvent(Event{Kind: "lost", Space: r.Space, Section: r.Section})
	return false
}

// plan is what this member does when another member's lease of a section
// runs out, unless a round reads it renewed first: the heir, the member
// that wins the section among the live members but the holder, takes it;
// the other members send its requests to the heir.
type plan struct {
	s    *section
	at   time.Time // the lease's end by the local clock, at the earliest
	heir Member
}

// nextPlan is the time of the earliest plan, false when there is none.
func (q *Sequencer) nextPlan() (time.Time, bool) {
	q.roundMu.Lock()
	defer q.roundMu.Unlock()
	if len(q.plans) == 0 {
		return time.Time{}, false
	}
	first := q.plans[0].at
	for _, p := range q.plans[1:] {
		if p.at.Before(first) {
			first = p.at
		}
	}
	return first, true
}

// atLeaseEnd carries out the plans whose time has come, made by the last
// round: so a section whose owner died is taken when its lease runs out,
// not at the heir's next round after that. Whether the lease ran out is
// the store's to say, by its own clock, in the statement that takes it;
// a take it refuses (the holder renewed after the round's read, or this
// member's clock ran ahead of the store's) asks for a round, which reads
// the lease again and plans anew. The background rounds call it when the
// first plan is due.
func (q *Sequencer) atLeaseEnd(ctx context.Context) {
	q.roundMu.Lock()
	defer q.roundMu.Unlock()
	if q.closed.Load() {
		return
	}
	now := q.opts.Now()
	me := q.me()
	again := false
	kept := q.plans[:0]
	for _, p := range q.plans {
		switch {
		case p.at.After(now):
			kept = append(kept, p)
		case p.heir.ID != me.ID:
			p.s.owner.Store(&p.heir.Addr)
		default:
			ok, err := q.take(ctx, p.s)
			if err != nil || !ok {
				again = true
			}
		}
	}
	clear(q.plans[len(kept):])
	q.plans = kept
	if again {
		q.Kick()
	}
}

// rendezvous is the member that wins a section: the one with the highest
// score of its id and the section's name. When a member joins or leaves,
// only the sections it wins or won change hands.
func rendezvous(members []Member, spaceName string, index int) Member {
	return rendezvousWithout(members, spaceName, index, "")
}

// rendezvousWithout is the member that would win a section if the member
// without were gone.
func rendezvousWithout(members []Member, spaceName string, index int, without string) Member {
	var (
		best      Member
		bestScore uint64
	)
	for _, m := range members {
		if m.ID == without {
			continue
		}
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
