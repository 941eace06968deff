package storeset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/leafid/leaf/segment"
)

// Store is one independent store of a set, as the set uses it. The store
// package implements it.
type Store interface {
	segment.Store
	// CreateTag and UpdateTag administer the store's rows of leaf_alloc.
	CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error)
	UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error)
	// Record reads what the store says about itself and its set.
	Record(ctx context.Context) (Record, error)
	// SetRecord replaces the record with to while it is still from.
	SetRecord(ctx context.Context, from, to Record) (bool, error)
	// AllocateIn takes the tag's next range of class c at or above floor
	// while the store is active under version (ErrSetChanged otherwise),
	// and returns with it the max_id it found the row at.
	AllocateIn(ctx context.Context, tag string, step, floor int64, c segment.Class, version int64) (a segment.Allocation, found int64, err error)
	// Highest is the highest max_id of any row.
	Highest(ctx context.Context) (int64, error)
	// Marks, HighestMark and RecordMarks read and raise the marks this
	// store holds of another store's tags.
	Marks(ctx context.Context, storeID string, tags []string) (map[string]int64, error)
	HighestMark(ctx context.Context, storeID string) (int64, error)
	RecordMarks(ctx context.Context, storeID string, marks map[string]int64) error
}

// Named is a store as an instance is configured with it.
type Named struct {
	Name  string
	Store Store
	// Up reports whether the store answers now; nil means always.
	Up func() bool
}

// Defaults of Options.
const (
	DefaultMarkInterval = time.Second
	DefaultFailoverJump = segment.DefaultFailoverJump
)

// Options configures Stores. Zero fields take the defaults above.
type Options struct {
	// MarkInterval is how often the marks of the ranges taken are written
	// to the other stores: the window in which a store restored from a
	// backup can hide a range from an instance that just started.
	MarkInterval time.Duration
	// FailoverJump is how far past the highest mark known of a row a store
	// found behind it is moved (see the package comment).
	FailoverJump int64
	// CallTimeout bounds each store call of a load, so that a store that
	// does not answer leaves time to try the next; 0 means a third of
	// segment.DefaultLoadTimeout.
	CallTimeout time.Duration
	// OnStale, when set, is called each time a store's row is found behind
	// a mark recorded for it.
	OnStale func(store, tag string, mark int64)
}

// Stores serves one number space from several independent stores: it is
// the segment.Store of an allocator. Each load goes to the first configured
// store that is up, falling back to the others in their order; the range
// comes from that store's class of the set, so no two stores hand out the
// same id. It is safe for concurrent use; Close stops its goroutines.
type Stores struct {
	opts    Options
	members []*member // in the configured order: the first is preferred

	mu  sync.RWMutex // protects the fields below
	set Set
	ids map[*member]string // the identity of each member checked against set

	rereads singleflight.Group // reads of the set by recheck

	// homed holds the tags whose rows the home store numbers (home.go).
	homed sync.Map

	marksMu sync.Mutex                  // protects the fields below
	pending map[string]map[string]int64 // marks to write: store id -> tag -> max_id
	known   map[string]map[string]int64 // marks read of each store's tags, and what it gave us

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// member is a configured store.
type member struct {
	name string
	st   Store
	up   func() bool
}

// Open reads the record of every configured store and checks that they
// describe one set that matches the configuration: the same names, each
// name the database the set knows by it, no database given twice. It
// fails with an error wrapping ErrMismatch, saying what differs, when they
// do not; and when no store answers, since nothing can be checked then.
func Open(ctx context.Context, named []Named, opts Options) (*Stores, error) {
	if len(named) == 0 {
		return nil, errors.New("no store configured")
	}
	if opts.MarkInterval <= 0 {
		opts.MarkInterval = DefaultMarkInterval
	}
	if opts.FailoverJump <= 0 {
		opts.FailoverJump = DefaultFailoverJump
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = segment.DefaultLoadTimeout / 3
	}
	s := &Stores{opts: opts, pending: map[string]map[string]int64{}, known: map[string]map[string]int64{}}
	for _, n := range named {
		if err := ValidateName(n.Name); err != nil {
			return nil, err
		}
		up := n.Up
		if up == nil {
			up = func() bool { return true }
		}
		s.members = append(s.members, &member{name: n.Name, st: n.Store, up: up})
	}
	set, ids, err := s.readSet(ctx, true)
	if err != nil {
		return nil, err
	}
	s.set, s.ids = set, ids
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Go(s.markLoop)
	return s, nil
}

// Close writes the marks still pending, once, and stops.
func (s *Stores) Close() error {
	s.cancel()
	s.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CallTimeout)
	defer cancel()
	s.flushMarks(ctx)
	return nil
}

// Set returns the set of stores in force.
func (s *Stores) Set() Set {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.set
}

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
		cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		a, found, err := m.st.AllocateIn(cctx, tag, step, max(floor, mark), c, set.Version)
		if errors.Is(err, segment.ErrUnknownTag) && s.copyRow(cctx, m, tag) {
			a, found, err = m.st.AllocateIn(cctx, tag, step, max(floor, mark), c, set.Version)
		}
		if err == nil && found < mark {
			// The store went back in time: the ranges it gave after the
			// last mark recorded elsewhere may be lost with it, and the
			// range just taken may be one of them. Take one past the jump.
			if s.opts.OnStale != nil {
				s.opts.OnStale(m.name, tag, mark)
			}
			a, _, err = m.st.AllocateIn(cctx, tag, step, max(floor, mark+s.opts.FailoverJump), c, set.Version)
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
	defer s.mu.Unlock()
	if set.Version >= s.set.Version {
		s.set, s.ids = set, ids
	}
	return nil
}

// mark is the highest max_id known of m's row of tag: what other stores
// recorded, read the first time this process takes a range of tag from m,
// and what m gave this process since. A row found below it went back in
// time.
func (s *Stores) mark(ctx context.Context, m *member, id, tag string) int64 {
	s.marksMu.Lock()
	known, ok := s.known[id][tag]
	s.marksMu.Unlock()
	if ok {
		return known
	}
	s.mu.RLock()
	others := make(map[*member]string, len(s.ids))
	maps.Copy(others, s.ids)
	s.mu.RUnlock()
	for o := range others {
		if o == m || !o.up() {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		got, err := o.st.Marks(cctx, id, []string{tag})
		cancel()
		if err == nil {
			known = max(known, got[tag])
		}
	}
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.known[id] == nil {
		s.known[id] = map[string]int64{}
	}
	known = max(known, s.known[id][tag])
	s.known[id][tag] = known
	return known
}

// gave records that store id raised tag's max_id to maxID for this
// process: its mark, and one to write to the other stores.
func (s *Stores) gave(id, tag string, maxID int64) {
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.known[id] == nil {
		s.known[id] = map[string]int64{}
	}
	s.known[id][tag] = max(s.known[id][tag], maxID)
	if s.pending[id] == nil {
		s.pending[id] = map[string]int64{}
	}
	s.pending[id][tag] = max(s.pending[id][tag], maxID)
}

// markLoop writes the marks every MarkInterval, and reads the set again
// while a member has not been checked against it (it did not answer, or a
// change of the set has not reached it).
func (s *Stores) markLoop() {
	t := time.NewTicker(s.opts.MarkInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.flushMarks(s.ctx)
			s.mu.RLock()
			unchecked := len(s.ids) < len(s.members)
			s.mu.RUnlock()
			if unchecked {
				_ = s.refresh(s.ctx) // an error: the next tick tries again
			}
		}
	}
}

// flushMarks writes the pending marks to every other store; those a store
// could not take are kept for the next round.
func (s *Stores) flushMarks(ctx context.Context) {
	s.marksMu.Lock()
	pending := s.pending
	s.pending = map[string]map[string]int64{}
	s.marksMu.Unlock()
	s.mu.RLock()
	ids := make(map[*member]string, len(s.ids))
	maps.Copy(ids, s.ids)
	s.mu.RUnlock()
	for id, marks := range pending {
		for o, oid := range ids {
			if oid == id {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
			err := o.st.RecordMarks(cctx, id, marks)
			cancel()
			if err != nil {
				s.marksMu.Lock()
				if s.pending[id] == nil {
					s.pending[id] = map[string]int64{}
				}
				for tag, v := range marks {
					s.pending[id][tag] = max(s.pending[id][tag], v)
				}
				s.marksMu.Unlock()
			}
		}
	}
}

// Tag returns the tag's row from the first store that has it.
func (s *Stores) Tag(ctx context.Context, tag string) (segment.Tag, error) {
	var errs []error
	for _, m := range s.members {
		t, err := m.st.Tag(ctx, tag)
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, segment.ErrUnknownTag) {
			errs = append(errs, fmt.Errorf("store %q: %w", m.name, err))
		}
	}
	if len(errs) == len(s.members) {
		return segment.Tag{}, errors.Join(errs...)
	}
	return segment.Tag{}, fmt.Errorf("read tag %q: %w", tag, segment.ErrUnknownTag)
}

// Tags returns the tags of every store that answers, each once (as the
// first store in the configured order has it), ordered by name.
func (s *Stores) Tags(ctx context.Context) ([]segment.Tag, error) {
	byName := map[string]segment.Tag{}
	var errs []error
	for i := len(s.members) - 1; i >= 0; i-- {
		tags, err := s.members[i].st.Tags(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, t := range tags {
			byName[t.Name] = t
		}
	}
	if len(errs) == len(s.members) {
		return nil, errors.Join(errs...)
	}
	out := make([]segment.Tag, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out, nil
}

// FindTags returns those of names that some store that answers has.
func (s *Stores) FindTags(ctx context.Context, names []string) ([]string, error) {
	found := map[string]bool{}
	var errs []error
	for _, m := range s.members {
		got, err := m.st.FindTags(ctx, names)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, n := range got {
			found[n] = true
		}
	}
	if len(errs) == len(s.members) {
		return nil, errors.Join(errs...)
	}
	return slices.Collect(maps.Keys(found)), nil
}

// CreateTag creates the tag in every store that answers; it is
// segment.ErrTagExists when any of them has it already. A store that did
// not answer gets the row when a load first finds it missing there (see
// copyRow).
func (s *Stores) CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	if _, err := s.Tag(ctx, t.Name); err == nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, segment.ErrTagExists)
	}
	var (
		created segment.Tag
		errs    []error
		ok      bool
	)
	for _, m := range s.members {
		c, err := m.st.CreateTag(ctx, t)
		switch {
		case err == nil:
			if !ok {
				created, ok = c, true
			}
		case errors.Is(err, segment.ErrTagExists):
		default:
			errs = append(errs, fmt.Errorf("store %q: %w", m.name, err))
		}
	}
	if !ok {
		if len(errs) == 0 {
			return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, segment.ErrTagExists)
		}
		return segment.Tag{}, errors.Join(errs...)
	}
	return created, nil
}

// UpdateTag changes the tag in every store that has it.
func (s *Stores) UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error) {
	var (
		updated segment.Tag
		errs    []error
		ok      bool
	)
	for _, m := range s.members {
		t, err := m.st.UpdateTag(ctx, name, u)
		switch {
		case err == nil:
			if !ok {
				updated, ok = t, true
			}
		case errors.Is(err, segment.ErrUnknownTag):
		default:
			errs = append(errs, fmt.Errorf("store %q: %w", m.name, err))
		}
	}
	if !ok {
		if len(errs) == 0 {
			return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, segment.ErrUnknownTag)
		}
		return segment.Tag{}, errors.Join(errs...)
	}
	return updated, errors.Join(errs...)
}
