package storeset

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leafid/leaf/segment"
)

// Allocate is AllocateAbove with no floor.
func (s *Stores) Allocate(ctx context.Context, tag string, step int64) (segment.Allocation, error) {
	return s.AllocateAbove(ctx, tag, step, 0)
}

// AllocateAbove takes the tag's next range, at or above floor, from the
// first store that is up and can give one, in the configured order. A store
// whose row is found behind the highest mark known of it (restored from a
// backup, or failed over to a copy that missed writes) is moved past that
// mark plus the failover jump first.
func (s *Stores) AllocateAbove(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	if s.lone != nil {
		return s.lone.AllocateAbove(ctx, tag, step, floor)
	}
	if err := s.route(ctx, []string{tag}); err != nil {
		return segment.Allocation{}, err
	}
	if s.Homed(tag) {
		return s.allocateHome(ctx, tag, step, floor)
	}
	var errs []error
	unknown := 0
	for _, pass := range []bool{true, false} { // first the stores that are up, then the others
		for _, m := range s.members {
			if m.up() != pass {
				continue
			}
			a, err := s.allocateFrom(ctx, m, tag, step, floor)
			if err == nil {
				return a, nil
			}
			if ctx.Err() != nil {
				return segment.Allocation{}, err
			}
			switch {
			case errors.Is(err, segment.ErrUnknownTag):
				unknown++
			case errors.Is(err, segment.ErrMisconfigured), errors.Is(err, segment.ErrExhausted):
				return segment.Allocation{}, err
			}
			errs = append(errs, fmt.Errorf("store %q: %w", m.name, err))
		}
	}
	if unknown == len(s.members) {
		return segment.Allocation{}, segment.ErrUnknownTag
	}
	return segment.Allocation{}, fmt.Errorf("%w: no store gave a range: %w", segment.ErrStoreUnavailable, errors.Join(errs...))
}

// allocateFrom takes a range of tag from m under the set in force. A set
// found changed, or changing, is read again until the change is over or
// the call's time is up: a change holds loads for a few round trips.
func (s *Stores) allocateFrom(ctx context.Context, m *member, tag string, step, floor int64) (segment.Allocation, error) {
	wait, cancelWait := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancelWait()
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		s.mu.RLock()
		set, id := s.set, s.ids[m]
		s.mu.RUnlock()
		c, ok := set.Class(m.name)
		if !ok {
			return segment.Allocation{}, fmt.Errorf("%w: not a member of the set in force (version %d)", segment.ErrStoreUnavailable, set.Version)
		}
		if id == "" { // not checked against the set yet, or a change is under way
			if err := s.recheck(wait, pause); err != nil {
				return segment.Allocation{}, fmt.Errorf("%w: not checked against the set in force (version %d): %w", segment.ErrStoreUnavailable, set.Version, err)
			}
			continue
		}
		mark := s.mark(ctx, m, id, tag)
		from := max(floor, mark, s.fenceOf(id, tag))
		cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		a, found, err := m.st.AllocateIn(cctx, tag, step, from, c, set.Version)
		if errors.Is(err, segment.ErrUnknownTag) && s.copyRow(cctx, m, tag) {
			a, found, err = m.st.AllocateIn(cctx, tag, step, from, c, set.Version)
		}
		if err == nil && found < mark {
			// The store went back in time: the ranges it gave after the
			// last mark recorded elsewhere may be lost with it, and the
			// range just taken may be one of them. Take one past the jump.
			a, _, err = m.st.AllocateIn(cctx, tag, step, max(floor, s.fence(m, id, tag, mark)), c, set.Version)
		}
		cancel()
		if errors.Is(err, ErrSetChanged) {
			if err := s.recheck(wait, pause); err != nil {
				return segment.Allocation{}, fmt.Errorf("%w: the set changed: %w", segment.ErrStoreUnavailable, err)
			}
			continue
		}
		if err != nil {
			return segment.Allocation{}, err
		}
		s.gave(id, tag, a.MaxID)
		return a, nil
	}
}

// copyRow gives m the row of tag that another store has, from max_id 1,
// and reports whether m has one now; a row that is not plain where it is
// is never copied (see home.go). A tag created while m did not answer,
// or before the copy m was restored from, gets its row this way; the
// class keeps its ids apart, and the marks find a row that had ids before.
func (s *Stores) copyRow(ctx context.Context, m *member, tag string) bool {
	for _, o := range s.members {
		if o == m || !o.up() {
			continue
		}
		t, err := o.st.Tag(ctx, tag)
		if err != nil || !plainIn(ctx, o, tag) {
			continue
		}
		_, err = m.st.CreateTag(ctx, segment.Tag{Name: t.Name, MaxID: 1, Step: t.Step, Description: t.Description})
		return err == nil || errors.Is(err, segment.ErrTagExists)
	}
	return false
}
