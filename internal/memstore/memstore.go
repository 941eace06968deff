// Package memstore is an in-memory segment.Store for tests that need a
// real allocator over many tags without a database: rows kept in a map,
// and a failure that can be set per tag.
package memstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/leafid/leaf/segment"
)

// Store holds the rows of leaf_alloc in memory. It is safe for concurrent
// use.
type Store struct {
	mu   sync.Mutex // guards the fields below
	rows map[string]*segment.Tag
	fail map[string]error // Allocate's error for a tag, when set
}

var _ segment.Store = (*Store)(nil)

// New returns a store holding rows.
func New(rows ...segment.Tag) *Store {
	s := &Store{rows: make(map[string]*segment.Tag, len(rows)), fail: map[string]error{}}
	for _, r := range rows {
		s.rows[r.Name] = &r
	}
	return s
}

// Fail makes the loads of tag fail with err from now on; a nil err ends
// that.
func (s *Store) Fail(tag string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.fail, tag)
		return
	}
	s.fail[tag] = err
}

func (s *Store) Allocate(ctx context.Context, tag string, step int64) (segment.Allocation, error) {
	return s.AllocateAbove(ctx, tag, step, math.MinInt64)
}

func (s *Store) AllocateAbove(_ context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail[tag]; err != nil {
		return segment.Allocation{}, err
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
	if base > 0 { // near the int64 maximum, take what is left
		step = min(step, math.MaxInt64-base)
	}
	r.MaxID = base + step
	return segment.Allocation{MaxID: r.MaxID, Step: step, DBStep: r.Step}, nil
}

func (s *Store) Tag(_ context.Context, tag string) (segment.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.rows[tag]; ok {
		return *r, nil
	}
	return segment.Tag{}, segment.ErrUnknownTag
}

func (s *Store) Tags(context.Context) ([]segment.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]segment.Tag, 0, len(s.rows))
	for _, r := range s.rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(x, y segment.Tag) int { return strings.Compare(x.Name, y.Name) })
	return out, nil
}

func (s *Store) FindTags(_ context.Context, names []string) ([]string, error) {
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
