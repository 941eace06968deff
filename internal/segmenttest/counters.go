package segmenttest

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
