package storeset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leafid/leaf/segment"
)

var _ segment.BatchAllocator = (*Stores)(nil)

// ClassResult is one tag's part of Store.AllocateBatchIn: the range taken,
// with the max_id the row was found at, or the error AllocateIn would
// return for that tag alone.
type ClassResult struct {
	segment.BatchResult
	Found int64
}

// AllocateBatch takes the first range of each of tags
// (segment.BatchAllocator), one transaction per store rather than one per
// tag: each tag goes to the store that would serve it one by one, the
// rows numbered in classes to the first store that is up and gives the
// batch (as AllocateAbove picks, the others in their order when it does
// not), the rows of the home store to the home store. The marks of the
// rows are read for the whole batch, one read per other store, and a row
// found behind its mark is moved past the failover jump, as a load of one
// tag does.
//
// A tag the store refuses is taken one by one (AllocateAbove), which
// decides as it always does: a row missing in that store but found in
// another (a tag created while the store did not answer) is copied there.
// A name no store that answers has is segment.ErrUnknownTag, told by one
// read of the names per other store.
func (s *Stores) AllocateBatch(ctx context.Context, tags []string) ([]segment.BatchResult, error) {
	if s.lone != nil {
		return s.lone.AllocateBatch(ctx, tags)
	}
	out := make([]segment.BatchResult, len(tags))
	if err := s.route(ctx, tags); err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out, nil
	}
	var homed, striped []int
	for i, tag := range tags {
		if s.Homed(tag) {
			homed = append(homed, i)
		} else {
			striped = append(striped, i)
		}
	}
	alone := s.batchHome(ctx, tags, homed, out)
	alone = append(alone, s.batchStriped(ctx, tags, striped, out)...)
	for _, i := range alone {
		a, err := s.AllocateAbove(ctx, tags[i], 0, 0)
		out[i] = segment.BatchResult{Allocation: a, Err: err}
	}
	return out, nil
}

// batchStriped takes the ranges of the tags of tags at idx, rows numbered
// in classes, from the first store that is up and gives the batch, into
// out; it returns those to take one by one.
func (s *Stores) batchStriped(ctx context.Context, tags []string, idx []int, out []segment.BatchResult) (alone []int) {
	if len(idx) == 0 {
		return nil
	}
	names := pick(tags, idx)
	var errs []error
passes:
	for _, pass := range []bool{true, false} { // first the stores that are up, then the others
		for _, m := range s.members {
			if m.up() != pass {
				continue
			}
			res, err := s.batchFrom(ctx, m, names)
			if err != nil {
				errs = append(errs, fmt.Errorf("store %q: %w", m.name, err))
				if ctx.Err() != nil {
					break passes
				}
				continue
			}
			var unknown []int
			for k, i := range idx {
				r := res[k].BatchResult
				switch {
				case r.Err == nil, errors.Is(r.Err, segment.ErrMisconfigured), errors.Is(r.Err, segment.ErrExhausted):
					out[i] = r
				case errors.Is(r.Err, segment.ErrUnknownTag):
					unknown = append(unknown, i)
				default:
					alone = append(alone, i)
				}
			}
			return append(alone, s.unknownElsewhere(ctx, m, tags, unknown, out)...)
		}
	}
	err := fmt.Errorf("%w: no store gave a range: %w", segment.ErrStoreUnavailable, errors.Join(errs...))
	for _, i := range idx {
		out[i].Err = err
	}
	return nil
}

// batchFrom takes a range of each of tags from m under the set in force,
// in one call, as allocateFrom does for one tag: a set found changed, or
// changing, is read again until the change is over or the call's time is
// up.
func (s *Stores) batchFrom(ctx context.Context, m *member, tags []string) ([]ClassResult, error) {
	wait, cancelWait := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancelWait()
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		s.mu.RLock()
		set, id := s.set, s.ids[m]
		s.mu.RUnlock()
		c, ok := set.Class(m.name)
		if !ok {
			return nil, fmt.Errorf("%w: not a member of the set in force (version %d)", segment.ErrStoreUnavailable, set.Version)
		}
		if id == "" { // not checked against the set yet, or a change is under way
			if err := s.recheck(wait, pause); err != nil {
				return nil, fmt.Errorf("%w: not checked against the set in force (version %d): %w", segment.ErrStoreUnavailable, set.Version, err)
			}
			continue
		}
		marks := s.marksOf(ctx, m, id, tags)
		cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		res, err := m.st.AllocateBatchIn(cctx, tags, s.floors(id, tags, marks), c, set.Version)
		if err == nil {
			s.pastStale(cctx, m, id, tags, marks, res, func(tag string, floor int64) (segment.Allocation, error) {
				a, _, err := m.st.AllocateIn(cctx, tag, 0, floor, c, set.Version)
				return a, err
			})
		}
		cancel()
		if errors.Is(err, ErrSetChanged) {
			if err := s.recheck(wait, pause); err != nil {
				return nil, fmt.Errorf("%w: the set changed: %w", segment.ErrStoreUnavailable, err)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		s.gaveAll(id, tags, res)
		return res, nil
	}
}

// batchHome takes the ranges of the tags of tags at idx, rows of the home
// store, from the home store in one call, into out; it returns those to
// take one by one.
func (s *Stores) batchHome(ctx context.Context, tags []string, idx []int, out []segment.BatchResult) (alone []int) {
	if len(idx) == 0 {
		return nil
	}
	m, err := s.home()
	s.mu.RLock()
	id := ""
	if err == nil {
		id = s.ids[m]
	}
	s.mu.RUnlock()
	if id == "" { // the home store is not known or not checked: one by one decides
		return idx
	}
	// A row whose range past the failover jump is still to take (fence)
	// is taken one by one, above its fence.
	fences := s.floors(id, pick(tags, idx), make([]int64, len(idx)))
	idx, alone = slices.Clone(idx), nil
	for k := len(idx) - 1; k >= 0; k-- {
		if fences[k] > 0 {
			alone = append(alone, idx[k])
			idx = slices.Delete(idx, k, k+1)
		}
	}
	if len(idx) == 0 {
		return alone
	}
	names := pick(tags, idx)
	marks := s.marksOf(ctx, m, id, names)
	cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	got, err := m.st.AllocateBatch(cctx, names)
	if err != nil {
		err = fmt.Errorf("%w: home store %q: %w", segment.ErrStoreUnavailable, m.name, err)
		for _, i := range idx {
			out[i].Err = err
		}
		return alone
	}
	res := make([]ClassResult, len(got))
	for k, r := range got {
		// The batch raises each row by its step from the max_id it read.
		res[k] = ClassResult{BatchResult: r, Found: r.Start()}
	}
	s.pastStale(cctx, m, id, names, marks, res, func(tag string, floor int64) (segment.Allocation, error) {
		return m.st.AllocateAbove(cctx, tag, 0, floor)
	})
	s.gaveAll(id, names, res)
	for k, i := range idx {
		r := res[k].BatchResult
		if r.Err != nil && !errors.Is(r.Err, segment.ErrUnknownTag) && !errors.Is(r.Err, segment.ErrMisconfigured) && !errors.Is(r.Err, segment.ErrExhausted) {
			r.Err = fmt.Errorf("%w: home store %q: %w", segment.ErrStoreUnavailable, m.name, r.Err)
		}
		out[i] = r
	}
	return alone
}

// pastStale takes again, past its mark plus the failover jump, the range of
// each tag of res whose row m (of identity id) was found behind its mark:
// the store went back in time, and the range just taken may be one it
// gave before (see allocateFrom). again takes one tag's range at or above
// a floor.
func (s *Stores) pastStale(ctx context.Context, m *member, id string, tags []string, marks []int64, res []ClassResult, again func(tag string, floor int64) (segment.Allocation, error)) {
	for k, r := range res {
		if r.Err != nil || r.Found >= marks[k] {
			continue
		}
		a, err := again(tags[k], s.fence(m, id, tags[k], marks[k]))
		res[k].Allocation, res[k].Err = a, err
	}
}

// floors are the floors of the ranges of tags from store id, whose marks
// are marks: each mark, or the fence of a row found behind its mark whose
// range past the jump is still to take.
func (s *Stores) floors(id string, tags []string, marks []int64) []int64 {
	out := make([]int64, len(tags))
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	for k, tag := range tags {
		out[k] = max(marks[k], s.fenced[id][tag])
	}
	return out
}

// unknownElsewhere answers segment.ErrUnknownTag, into out, for the tags of
// tags at idx that m does not have, when no other store that answers has
// them either, as the look-up of names does (FindTags); it returns those
// another store has, to take one by one, which copies the row to m. When
// the home store is not m and does not answer, a name no store has may be
// a row only the home store holds: it is unavailable then, not unknown.
func (s *Stores) unknownElsewhere(ctx context.Context, m *member, tags []string, idx []int, out []segment.BatchResult) (alone []int) {
	if len(idx) == 0 {
		return nil
	}
	names := pick(tags, idx)
	home, _ := s.home()
	found := map[string]bool{}
	var homeErr error
	for _, o := range s.members {
		if o == m {
			continue
		}
		if !o.up() {
			if o == home {
				homeErr = homeMissing(o, errors.New("it is down"))
			}
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		got, err := o.st.FindTags(cctx, names)
		cancel()
		if err != nil {
			if o == home {
				homeErr = homeMissing(o, err)
			}
			continue
		}
		for _, n := range got {
			found[n] = true
		}
	}
	for _, i := range idx {
		switch {
		case found[tags[i]]:
			alone = append(alone, i)
		case homeErr != nil:
			out[i].Err = fmt.Errorf("allocate %q: %w", tags[i], homeErr)
		default:
			out[i].Err = fmt.Errorf("allocate %q: %w", tags[i], segment.ErrUnknownTag)
		}
	}
	return alone
}

// pick returns the tags at idx.
func pick(tags []string, idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = tags[i]
	}
	return out
}
