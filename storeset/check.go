package storeset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leafid/leaf/segment"
)

// readSet reads every member's record and returns the newest set, after
// checking it against the configuration (see check), and the identities
// of the members that answered and hold that set.
func (s *Stores) readSet(ctx context.Context, strict bool) (Set, map[*member]string, error) {
	recs := make([]Record, len(s.members))
	errs := make([]error, len(s.members))
	var wg sync.WaitGroup
	for i, m := range s.members {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
			defer cancel()
			recs[i], errs[i] = m.st.Record(cctx)
		})
	}
	wg.Wait()

	var (
		answered []string
		byID     = map[string]string{}
		ids      = map[*member]string{}
	)
	for i, m := range s.members {
		if errs[i] != nil {
			continue
		}
		r := recs[i]
		answered = append(answered, m.name)
		if other, ok := byID[r.StoreID]; ok {
			return Set{}, nil, fmt.Errorf("%w: stores %q and %q are the same database (store id %s)", ErrMismatch, other, m.name, r.StoreID)
		}
		byID[r.StoreID] = m.name
		ids[m] = r.StoreID
	}
	if len(answered) == 0 {
		return Set{}, nil, fmt.Errorf("%w: no store answered: %w", segment.ErrStoreUnavailable, errors.Join(errs...))
	}
	newest, _, err := Newest(recs, errs, false)
	if err != nil {
		return Set{}, nil, err
	}
	if newest.Version == 0 {
		return Set{}, nil, fmt.Errorf("%w: the stores %s belong to no set yet: create it with `leaf store init`", ErrMismatch, strings.Join(answered, ", "))
	}
	if err := s.check(newest, recs, errs, strict); err != nil {
		return Set{}, nil, err
	}
	for i, m := range s.members {
		if errs[i] == nil && (recs[i].Version < newest.Version || recs[i].State != Active) {
			delete(ids, m) // a change of the set has not reached it (or is under way): not used until it has
		}
	}
	return newest, ids, nil
}

// check compares the configuration with set: each store that answered is
// the database the set knows by its name and is not retired, and, when
// strict (at start), the names are the set's. A set changed while serving
// may have members this instance has no address for, or no longer have one
// it has: it serves from the members it has, each in its class of the new
// set, until it is restarted with the new configuration.
func (s *Stores) check(set Set, recs []Record, errs []error, strict bool) error {
	var configured []string
	for _, m := range s.members {
		configured = append(configured, m.name)
	}
	var problems []string
	for _, m := range s.members {
		if _, ok := set.Member(m.name); !ok && strict {
			problems = append(problems, fmt.Sprintf("%q is configured but not in the set", m.name))
		}
	}
	for _, name := range set.Names() {
		if !slices.Contains(configured, name) && strict {
			problems = append(problems, fmt.Sprintf("%q is in the set but not configured", name))
		}
	}
	for i, m := range s.members {
		want, ok := set.Member(m.name)
		if !ok || errs[i] != nil {
			continue
		}
		r := recs[i]
		switch {
		case r.StoreID != want.Store:
			problems = append(problems, fmt.Sprintf("%q is database %s, but the set's %q is database %s", m.name, r.StoreID, m.name, want.Store))
		case r.State == Retired:
			problems = append(problems, fmt.Sprintf("%q is retired", m.name))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("%w (configured: %s; the set, version %d: %s): %s", ErrMismatch,
			strings.Join(configured, ", "), set.Version, strings.Join(set.Names(), ", "), strings.Join(problems, "; "))
	}
	return nil
}

// recheck waits pause, then reads the set again (one read for all the
// callers that ask meanwhile).
func (s *Stores) recheck(ctx context.Context, pause time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(pause):
	}
	ch := s.rereads.DoChan("", func() (any, error) { return nil, s.refresh(s.ctx) })
	select {
	case <-ctx.Done():
		return ctx.Err()
	case r := <-ch:
		return r.Err
	}
}

// refresh reads the set again and adopts it when it is not older, with
// the identities of the members checked against it.
func (s *Stores) refresh(ctx context.Context) error {
	set, ids, err := s.readSet(ctx, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	before := s.set
	if set.Version >= s.set.Version {
		s.set, s.ids = set, ids
	}
	s.mu.Unlock()
	if set.Version > before.Version && s.opts.OnChange != nil {
		s.opts.OnChange(before, set)
	}
	return nil
}
