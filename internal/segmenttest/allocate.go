package segmenttest

import (
	"context"
	"math"
	"strings"

	"github.com/leafid/leaf/segment"
)

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
