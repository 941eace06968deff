package segment_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

// memStore is an in-memory segment.Store with knobs for faults.
type memStore struct {
	mu    sync.Mutex
	rows  map[string]*segment.Tag
	calls int              // Allocate calls
	lists int              // Tags calls
	steps []int64          // step asked by each Allocate
	fail  error            // when set, Allocate fails with it
	block chan struct{}    // when set, Allocate waits for it to close (or ctx)
	began chan string      // when set, receives the tag as each Allocate begins
	after func(tag string) // called after each successful Allocate
	fold  bool             // compare tags without case, as MySQL's collations do

	finds      int           // FindTags calls
	found      int           // names asked about by FindTags, in all
	findBlock  chan struct{} // when set, FindTags waits for it to close (or ctx)
	findBegan  chan int      // when set, receives the number of names as each FindTags begins
	findActive int           // FindTags calls running now
	findMost   int           // the most FindTags calls that ever ran at once

	failAbove error // when set, AllocateAbove fails with it
}

func newMemStore(rows ...segment.Tag) *memStore {
	s := &memStore{rows: make(map[string]*segment.Tag)}
	for _, r := range rows {
		s.rows[r.Name] = &r
	}
	return s
}

func (s *memStore) Allocate(ctx context.Context, tag string, step int64) (segment.Allocation, error) {
	return s.allocate(ctx, tag, step, math.MinInt64)
}

func (s *memStore) AllocateAbove(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	s.mu.Lock()
	fail := s.failAbove
	s.mu.Unlock()
	if fail != nil {
		return segment.Allocation{}, fail
	}
	return s.allocate(ctx, tag, step, floor)
}

func (s *memStore) allocate(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	s.mu.Lock()
	s.calls++
	s.steps = append(s.steps, step)
	block, began, fail := s.block, s.began, s.fail
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
	defer s.mu.Unlock()
	if s.fold {
		tag = strings.ToLower(tag)
	}
	r, ok := s.rows[tag]
	if !ok {
		return segment.Allocation{}, segment.ErrUnknownTag
	}
	if step <= 0 {
		step = r.Step
	}
	if step <= 0 {
		return segment.Allocation{}, fmt.Errorf("%w: step %d", segment.ErrMisconfigured, step)
	}
	base := max(r.MaxID, floor)
	if base == math.MaxInt64 {
		return segment.Allocation{}, segment.ErrExhausted
	}
	if base > 0 {
		step = min(step, math.MaxInt64-base)
	}
	r.MaxID = max(r.MaxID, floor) + step
	if s.after != nil {
		s.after(tag)
	}
	return segment.Allocation{MaxID: r.MaxID, Step: step, DBStep: r.Step}, nil
}

func (s *memStore) Tag(_ context.Context, tag string) (segment.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.rows[tag]; ok {
		return *r, nil
	}
	return segment.Tag{}, segment.ErrUnknownTag
}

func (s *memStore) Tags(context.Context) ([]segment.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.fail != nil {
		return nil, s.fail
	}
	var out []segment.Tag
	for _, r := range s.rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FindTags answers by exact name, whatever fold says: the store keeps only
// exact matches of what its collation finds.
func (s *memStore) FindTags(ctx context.Context, names []string) ([]string, error) {
	s.mu.Lock()
	s.finds++
	s.found += len(names)
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

func (s *memStore) findCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finds
}

func (s *memStore) set(f func(s *memStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *memStore) listCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

func (s *memStore) allocCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// clock is the manual clock of the allocator's tests.
type clock = testkit.Clock

func newClock() *clock { return testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0) }

var errDown = errors.New("database is down")

// newAllocator returns an allocator with a manual clock, closed at cleanup.
func newAllocator(tb testing.TB, st segment.Store, c *clock) *segment.Allocator {
	tb.Helper()
	a := segment.New(st, segment.Options{Now: c.Now, RefreshInterval: -1})
	tb.Cleanup(func() { _ = a.Close() })
	return a
}

// mustNext takes one id or fails the test.
func mustNext(tb testing.TB, a *segment.Allocator, tag string) int64 {
	tb.Helper()
	id, err := a.Next(context.Background(), tag)
	if err != nil {
		tb.Fatalf("Next(%q): %v", tag, err)
	}
	return id
}

// take takes n ids and checks that they are consecutive from first.
func take(tb testing.TB, a *segment.Allocator, tag string, first int64, n int) {
	tb.Helper()
	for i := range n {
		if id := mustNext(tb, a, tag); id != first+int64(i) {
			tb.Fatalf("id %d of %q = %d, want %d", i, tag, id, first+int64(i))
		}
	}
}

func state(tb testing.TB, a *segment.Allocator, tag string) segment.BufferState {
	tb.Helper()
	for _, st := range a.Snapshot() {
		if st.Tag == tag {
			return st
		}
	}
	tb.Fatalf("no buffer for %q", tag)
	return segment.BufferState{}
}

func (s *memStore) String() string { return fmt.Sprintf("memStore(%d rows)", len(s.rows)) }

// HandBack is the store's compare-and-set of max_id from end to first.
func (s *memStore) HandBack(_ context.Context, tag string, end, first int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[tag]
	if !ok || r.MaxID != end {
		return false, nil
	}
	r.MaxID = first
	return true, nil
}
