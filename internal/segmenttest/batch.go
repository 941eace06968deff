package segmenttest

import (
	"context"
	"fmt"
	"math"

	"github.com/leafid/leaf/segment"
)

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
