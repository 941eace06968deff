// Package segmenttest provides an in-memory segment.Store for tests:
// MemStore, a leaf_alloc table held in a map that follows the rules of the
// real stores, with knobs for faults (failures, stalls, a collation that
// ignores case) and counters of the calls it answered.
package segmenttest

import (
	"fmt"
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

	kinds map[string]kind // what LookupTags says of the tags that are not plain

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

func (s *MemStore) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("MemStore(%d rows)", len(s.rows))
}
