package storeset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// The home store. What has one counter lives in one store of the set, its
// home (Set.Home): the sequences and ordered tags, whose owners take their
// numbers from one row each, and the formatted and opaque tags, whose
// numbers people read or must not tell apart from a gap in the classes.
// Their rows exist only in the home store and are numbered there as a
// single store numbers them, with no class: no other store has a row of
// the name, so no other store numbers it. A row is homed or striped for
// good: the set asks what each tag is before its first load (LookupTags,
// which the service's registry asks, or route), and the home store says
// which rows are special; a special
// row is never copied to another store (copyRow), nor a plain one created
// in the home store alone, and a plain tag cannot be given settings in a
// set (the admin API refuses it). While the home store does not answer,
// its rows are not served past the buffers, and the other rows are.

// Homing tells whether a store holds what lives in the home store of a
// set alone.
type Homing interface {
	// HomeRows counts the sequence spaces, ordered tags and formatted or
	// opaque tags the store holds.
	HomeRows(ctx context.Context) (int, error)
}

// LookupTags says what each of names is (bizid.Row), asking the home store, or,
// while it is not up, every store that is up: a name that any of them says
// is not plain is not, the most restricted answer winning. The rows that
// are homed (Row.Homed) are numbered in the home store from then on. An
// error of a store asked fails the call: a row of the home store must
// never be taken for a plain one because the home store's answer was
// missing. The service's tag registry asks it before any first load.
//
// The home store alone is asked while it is up because no other store
// holds what LookupTags finds: such rows are created in the home store
// alone, leaf store init and leaf store add refuse another store that
// holds any, and the home store is retired only empty. Asking the others
// too cost a read per store and batch of first loads: over three stores
// (databases of one server) the first requests of 100,000 tags took 1.71
// times as long as over one asking every store, 1.49 times asking the home
// store alone (medians of the ratios of 3 rounds, 2026-11-26; BENCHMARKS.md,
// "At the limit").
func (s *Stores) LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error) {
	if s.lone != nil {
		return s.lone.LookupTags(ctx, names)
	}
	var asked []*member
	for _, m := range s.members {
		if m.up() {
			asked = append(asked, m)
		}
	}
	if h, err := s.home(); err == nil && slices.Contains(asked, h) {
		asked = []*member{h}
	}
	if len(asked) == 0 {
		return nil, fmt.Errorf("%w: no store answers", segment.ErrStoreUnavailable)
	}
	// The stores are asked at once (when the home store is not up): a
	// batch of first loads waits for the slowest, not for the sum.
	rows := make([]map[string]bizid.Row, len(asked))
	errs := make([]error, len(asked))
	var wg sync.WaitGroup
	for i, m := range asked {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
			defer cancel()
			rows[i], errs[i] = m.st.LookupTags(cctx, names)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("store %q: %w", m.name, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := map[string]bizid.Row{}
	for _, got := range rows {
		for name, r := range got {
			out[name] = mergeRows(out[name], r)
		}
	}
	s.stripedMu.Lock()
	defer s.stripedMu.Unlock()
	if s.striped == nil {
		s.striped = make(map[string]struct{})
	}
	for name, r := range out {
		if r.Homed() {
			s.homed.Store(name, struct{}{})
		} else {
			s.striped[name] = struct{}{}
		}
	}
	return out, nil
}

// route makes sure the set knows whether each of tags is homed or
// striped before it takes their ranges: the service's registry asks
// LookupTags about most before their first load, and the others (the rows
// of the periods of formatted tags, tags whose settings came from a read
// of every tag's) are asked about here, once each.
func (s *Stores) route(ctx context.Context, tags []string) error {
	var missing []string
	s.stripedMu.Lock()
	for _, tag := range tags {
		if _, ok := s.homed.Load(tag); ok {
			continue
		}
		if _, ok := s.striped[tag]; !ok {
			missing = append(missing, tag)
		}
	}
	s.stripedMu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	if _, err := s.LookupTags(ctx, missing); err != nil {
		return fmt.Errorf("%w: which stores number %d tags: %w", segment.ErrStoreUnavailable, len(missing), err)
	}
	return nil
}

// mergeRows is what two stores' answers about one name say together: the
// most restricted of each.
func mergeRows(a, b bizid.Row) bizid.Row {
	ordered := a.Settings.Ordered || b.Settings.Ordered
	if b.Kind > a.Kind {
		a.Kind, a.Settings = b.Kind, b.Settings
	}
	a.Settings.Ordered = ordered
	if a.Period == nil {
		a.Period = b.Period
	}
	return a
}

// Homed reports whether tag's row is numbered in the home store.
func (s *Stores) Homed(tag string) bool {
	_, ok := s.homed.Load(tag)
	return ok
}

// home is the home member of the set in force.
func (s *Stores) home() (*member, error) {
	s.mu.RLock()
	name := s.set.HomeName()
	s.mu.RUnlock()
	for _, m := range s.members {
		if m.name == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("the set's home store %q is not configured", name)
}

// HomeName is the name of the home store of the set in force.
func (s *Stores) HomeName() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.set.HomeName()
}

// allocateHome takes a range of a homed row from the home store, with no
// class, at or above floor and the highest mark other stores hold of it,
// as allocateFrom does for a class.
func (s *Stores) allocateHome(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	m, err := s.home()
	if err != nil {
		return segment.Allocation{}, fmt.Errorf("%w: %w", segment.ErrStoreUnavailable, err)
	}
	s.mu.RLock()
	id := s.ids[m]
	s.mu.RUnlock()
	if id == "" { // not checked against the set yet: it did not answer
		wait, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		err := s.recheck(wait, time.Millisecond)
		cancel()
		s.mu.RLock()
		id = s.ids[m]
		s.mu.RUnlock()
		if id == "" {
			return segment.Allocation{}, fmt.Errorf("%w: home store %q not checked against the set: %v", segment.ErrStoreUnavailable, m.name, err)
		}
	}
	mark, fence := s.mark(ctx, m, id, tag), s.fenceOf(id, tag)
	cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	if mark > 0 && fence == 0 { // a fence: found behind already, and moved past the jump now
		// A row found behind the mark went back in time: the ranges taken
		// after the last mark recorded elsewhere may be lost with it, so
		// the next one starts past the jump (as allocateFrom's).
		t, err := m.st.Tag(cctx, tag)
		if err == nil && t.MaxID < mark {
			floor = max(floor, s.fence(m, id, tag, mark))
		}
	}
	a, err := m.st.AllocateAbove(cctx, tag, step, max(floor, mark, fence))
	if err != nil {
		if errors.Is(err, segment.ErrUnknownTag) || errors.Is(err, segment.ErrMisconfigured) || errors.Is(err, segment.ErrExhausted) {
			return segment.Allocation{}, err
		}
		return segment.Allocation{}, fmt.Errorf("%w: home store %q: %w", segment.ErrStoreUnavailable, m.name, err)
	}
	s.gave(id, tag, a.MaxID)
	return a, nil
}

// plainIn reports whether store m says tag is plain: a row copied to
// another store must be one.
func plainIn(ctx context.Context, m *member, tag string) bool {
	rows, err := m.st.LookupTags(ctx, []string{tag})
	return err == nil && rows[tag].Plain()
}
