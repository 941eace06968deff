// Package segmenttest provides an in-memory segment.Store for tests:
// MemStore, a leaf_alloc table held in a map that follows the rules of the
// real stores, with knobs for faults (failures, stalls, a collation that
// ignores case) and counters of the calls it answered.
package segmenttest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/leafid/leaf/segment"
)

// MemStore is an in-memory leaf_alloc. It implements segment.Store,
// segment.HandBacker, and CreateTag and UpdateTag of the admin API, by the
// rules of the real stores: a tag is the row of exactly that name, a row
// whose step is below 1 is misconfigured, one whose max_id is the int64
// maximum is exhausted, and tags are created and changed after
// Tag.Validate and TagUpdate.Validate, max_id only ever rising.
//
// Its knobs and counters are safe to use while the store is in use.
type MemStore struct {
	shared bool // see NewShared; fixed at construction

	mu   sync.Mutex // protects the fields below
	rows map[string]*segment.Tag
	next int64 // with shared: the first id of the next range, for every row
	fold bool
	now  func() time.Time

	kinds map[string]segment.Kind // what Classify says of the tags that are not plain

	fail      error
	failTag   map[string]error // Allocate's error for one tag
	failAbove error
	block     <-chan struct{}
	began     chan<- string
	after     func(tag string)
	findBlock <-chan struct{}
	findBegan chan<- int

	allocs     int     // Allocate and AllocateAbove calls
	batches    []int   // the number of tags of each AllocateBatch call
	steps      []int64 // the step asked by each of them
	lists      int     // Tags calls
	finds      int     // FindTags calls
	findActive int     // FindTags calls running now
	findMost   int     // the most FindTags calls that ever ran at once
}

var (
	_ segment.Store      = (*MemStore)(nil)
	_ segment.HandBacker = (*MemStore)(nil)
	_ segment.Classifier = (*MemStore)(nil)
)

// New returns a store holding rows, each with its own max_id, as the
// database keeps them.
func New(rows ...segment.Tag) *MemStore {
	s := &MemStore{rows: make(map[string]*segment.Tag, len(rows))}
	for _, r := range rows {
		s.rows[r.Name] = &r
	}
	return s
}

// NewShared returns a store holding rows that all take their ranges from
// one sequence starting at 1, so that an id is unique across every tag and
// a test can keep all the ids of a run in one set: an id seen twice is a
// fault wherever it came from. Allocations do not move the rows' own
// max_id (UpdateTag still may, and a row at the int64 maximum is still
// exhausted); HandBack gives a range back to the sequence.
func NewShared(rows ...segment.Tag) *MemStore {
	s := New(rows...)
	s.shared, s.next = true, 1
	return s
}

// SetFail makes every call fail with err (nil: succeed again). Allocate
// and FindTags take it as it is when they begin, before any block.
func (s *MemStore) SetFail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// SetFailTag makes the loads of tag fail with err (nil: succeed again),
// the other tags' unchanged.
func (s *MemStore) SetFailTag(tag string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failTag == nil {
		s.failTag = map[string]error{}
	}
	if err == nil {
		delete(s.failTag, tag)
	} else {
		s.failTag[tag] = err
	}
}

// SetFailAbove makes AllocateAbove fail with err, without counting the
// call (nil: succeed again).
func (s *MemStore) SetFailAbove(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAbove = err
}

// SetAllocateBlock makes each Allocate and AllocateAbove send its tag on
// began as it begins, and then wait until block is closed or its context
// ends. Either may be nil.
func (s *MemStore) SetAllocateBlock(block <-chan struct{}, began chan<- string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.block, s.began = block, began
}

// SetFindBlock makes each FindTags send the number of names it was asked
// about on began as it begins, and then wait until block is closed or its
// context ends. Either may be nil.
func (s *MemStore) SetFindBlock(block <-chan struct{}, began chan<- int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.findBlock, s.findBegan = block, began
}

// SetAfter makes each successful Allocate and AllocateAbove call f with
// the tag before it returns (nil: no call).
func (s *MemStore) SetAfter(f func(tag string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.after = f
}

// SetFold makes Allocate and AllocateAbove match a tag to a row without
// regard to case, as MySQL's collations do; the store's other calls still
// match names exactly.
func (s *MemStore) SetFold(fold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fold = fold
}

// SetNow sets the clock of the rows' update time, written by CreateTag and
// UpdateTag; it is the time of day, to the second, unless set.
func (s *MemStore) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Put adds t, or replaces the row of its name, as an INSERT or UPDATE from
// outside would: no rule is checked.
func (s *MemStore) Put(t segment.Tag) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[t.Name] = &t
}

// Delete removes the row of name, if any.
func (s *MemStore) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rows, name)
}

// Edit changes the row of name in place with f, under the store's lock: a
// failover that loses max_id, or an operator's fix of a step. It panics
// when there is no such row.
func (s *MemStore) Edit(name string, f func(*segment.Tag)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[name]
	if !ok {
		panic(fmt.Sprintf("segmenttest: Edit of %q, which has no row", name))
	}
	f(r)
}

// AllocateCalls is the number of Allocate and AllocateAbove calls so far.
func (s *MemStore) AllocateCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocs
}

// Steps are the steps asked by each Allocate and AllocateAbove call so
// far, in order.
func (s *MemStore) Steps() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.steps...)
}

// BatchSizes are the numbers of tags of each AllocateBatch call so far
// (see Batched), in order.
func (s *MemStore) BatchSizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.batches...)
}

// TagsCalls is the number of Tags calls so far.
func (s *MemStore) TagsCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// FindTagsCalls is the number of FindTags calls so far.
func (s *MemStore) FindTagsCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finds
}

// MostFindTagsAtOnce is the most FindTags calls that ever ran at once.
func (s *MemStore) MostFindTagsAtOnce() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.findMost
}

func (s *MemStore) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("MemStore(%d rows)", len(s.rows))
}

// Allocate raises the tag's max_id by step, the row's own when step <= 0.
func (s *MemStore) Allocate(ctx context.Context, tag string, step int64) (segment.Allocation, error) {
	return s.allocate(ctx, tag, step, math.MinInt64)
}

// AllocateAbove is Allocate after raising max_id to at least floor.
func (s *MemStore) AllocateAbove(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	s.mu.Lock()
	fail := s.failAbove
	s.mu.Unlock()
	if fail != nil {
		return segment.Allocation{}, fail
	}
	return s.allocate(ctx, tag, step, floor)
}

func (s *MemStore) allocate(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	s.mu.Lock()
	s.allocs++
	s.steps = append(s.steps, step)
	block, began, fail := s.block, s.began, s.fail
	if err := s.failTag[tag]; err != nil && fail == nil {
		fail = err
	}
	s.mu.Unlock()
	if began != nil {
		began <- tag
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return segment.Allocation{}, ctx.Err()
		}
	}
	if fail != nil {
		return segment.Allocation{}, fail
	}
	s.mu.Lock()
	a, err := s.allocateLocked(tag, step, floor)
	after := s.after
	s.mu.Unlock()
	if err == nil && after != nil {
		after(tag)
	}
	return a, err
}

func (s *MemStore) allocateLocked(tag string, step, floor int64) (segment.Allocation, error) {
	if s.fold {
		tag = strings.ToLower(tag)
	}
	r, ok := s.rows[tag]
	if !ok {
		return segment.Allocation{}, segment.ErrUnknownTag
	}
	end := &r.MaxID
	if s.shared {
		end = &s.next
	}
	base := max(*end, floor)
	if r.MaxID == math.MaxInt64 {
		base = r.MaxID
	}
	step, err := segment.LoadStep(step, r.Step, base)
	if err != nil {
		return segment.Allocation{}, err
	}
	*end = base + step
	return segment.Allocation{MaxID: *end, Step: step, DBStep: r.Step}, nil
}

// BatchStore is a MemStore that also takes first loads in batches.
type BatchStore struct{ *MemStore }

var _ segment.BatchAllocator = BatchStore{}

// Batched returns s as a segment.BatchAllocator: the same rows, knobs and
// counters, and AllocateBatch besides.
func (s *MemStore) Batched() BatchStore { return BatchStore{s} }

// AllocateBatch takes the first range of each of tags in one call, as a
// real store does: exactly the rows of those names (whatever SetFold
// says), each tag's result on its own. SetFail fails the whole call;
// SetFailTag fails that tag's result. Each tag is sent on the channel of
// SetAllocateBlock as the call begins, and the call then waits for its
// block; SetAfter is called for each tag raised. AllocateCalls does not
// count the call: BatchSizes does.
func (s BatchStore) AllocateBatch(ctx context.Context, tags []string) ([]segment.BatchResult, error) {
	s.mu.Lock()
	s.batches = append(s.batches, len(tags))
	block, began, fail := s.block, s.began, s.fail
	s.mu.Unlock()
	seen := make(map[string]bool, len(tags))
	for _, tag := range tags {
		if seen[tag] {
			return nil, fmt.Errorf("segmenttest: %q twice in one batch", tag)
		}
		seen[tag] = true
		if began != nil {
			began <- tag
		}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	out := make([]segment.BatchResult, len(tags))
	s.mu.Lock()
	fold := s.fold
	s.fold = false
	for i, tag := range tags {
		if err := s.failTag[tag]; err != nil {
			out[i].Err = err
			continue
		}
		out[i].Allocation, out[i].Err = s.allocateLocked(tag, 0, math.MinInt64)
	}
	s.fold = fold
	after := s.after
	s.mu.Unlock()
	if after != nil {
		for i, tag := range tags {
			if out[i].Err == nil {
				after(tag)
			}
		}
	}
	return out, nil
}

// HandBack sets the tag's max_id (with NewShared, the sequence) from end
// back to first, only while it is still end, and reports whether it did.
func (s *MemStore) HandBack(_ context.Context, tag string, end, first int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return false, s.fail
	}
	r, ok := s.rows[tag]
	if !ok {
		return false, nil
	}
	p := &r.MaxID
	if s.shared {
		p = &s.next
	}
	if *p != end {
		return false, nil
	}
	*p = first
	return true, nil
}

// Tag returns the row of exactly this name, or segment.ErrUnknownTag.
func (s *MemStore) Tag(_ context.Context, name string) (segment.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return segment.Tag{}, s.fail
	}
	if r, ok := s.rows[name]; ok {
		return *r, nil
	}
	return segment.Tag{}, segment.ErrUnknownTag
}

// Tags returns every row, ordered by name.
func (s *MemStore) Tags(context.Context) ([]segment.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.fail != nil {
		return nil, s.fail
	}
	out := make([]segment.Tag, 0, len(s.rows))
	for _, r := range s.rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FindTags returns those of names that have a row of exactly that name,
// whatever SetFold says: a store keeps only the exact matches among what
// its collation finds.
func (s *MemStore) FindTags(ctx context.Context, names []string) ([]string, error) {
	s.mu.Lock()
	s.finds++
	s.findActive++
	s.findMost = max(s.findMost, s.findActive)
	block, began, fail := s.findBlock, s.findBegan, s.fail
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.findActive--
		s.mu.Unlock()
	}()
	if began != nil {
		began <- len(names)
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, n := range names {
		if _, ok := s.rows[n]; ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// CreateTag adds t after t.Validate and returns it as stored, or
// segment.ErrTagExists when a row has its name.
func (s *MemStore) CreateTag(_ context.Context, t segment.Tag) (segment.Tag, error) {
	if err := t.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return segment.Tag{}, s.fail
	}
	if _, ok := s.rows[t.Name]; ok {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, segment.ErrTagExists)
	}
	t.UpdateTime = s.nowLocked()
	s.rows[t.Name] = &t
	return t, nil
}

// UpdateTag changes the fields of u that are set, after u.Validate, and
// returns the row as stored: segment.ErrUnknownTag without a row of
// exactly this name, segment.ErrInvalidMaxID for a max_id below the row's.
func (s *MemStore) UpdateTag(_ context.Context, name string, u segment.TagUpdate) (segment.Tag, error) {
	if err := u.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return segment.Tag{}, s.fail
	}
	r, ok := s.rows[name]
	if !ok {
		return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, segment.ErrUnknownTag)
	}
	if u.MaxID != nil && *u.MaxID < r.MaxID {
		return segment.Tag{}, fmt.Errorf("update tag %q: %w: %d is below the current %d; max_id may only be raised",
			name, segment.ErrInvalidMaxID, *u.MaxID, r.MaxID)
	}
	if u.MaxID != nil {
		r.MaxID = *u.MaxID
	}
	if u.Step != nil {
		r.Step = *u.Step
	}
	if u.Description != nil {
		r.Description = *u.Description
	}
	r.UpdateTime = s.nowLocked()
	return *r, nil
}

func (s *MemStore) nowLocked() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now().UTC().Truncate(time.Second)
}

// SetNotPlain makes Classify call tags refused from now on, as a real
// store calls the ordered tags.
func (s *MemStore) SetNotPlain(tags ...string) { s.setKind(segment.Refused, tags) }

// SetSpecial makes Classify call tags special from now on, as a real store
// calls the formatted and opaque tags.
func (s *MemStore) SetSpecial(tags ...string) { s.setKind(segment.Special, tags) }

func (s *MemStore) setKind(k segment.Kind, tags []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kinds == nil {
		s.kinds = make(map[string]segment.Kind)
	}
	for _, t := range tags {
		s.kinds[t] = k
	}
}

// Classify returns the kinds SetNotPlain and SetSpecial gave those of tags.
func (s *MemStore) Classify(_ context.Context, tags []string) (map[string]segment.Kind, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]segment.Kind)
	for _, t := range tags {
		if k, ok := s.kinds[t]; ok {
			out[t] = k
		}
	}
	return out, nil
}
