package segmenttest

import "time"

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
