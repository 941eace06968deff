package segment

import "context"

// Allocation is the result of raising a tag's max_id once.
type Allocation struct {
	// MaxID is max_id after the raise: the range handed out is
	// [MaxID-Step, MaxID-1].
	MaxID int64
	// Step is how much max_id was raised by.
	Step int64
	// DBStep is the step stored in the row (the floor of the adaptive step).
	DBStep int64
}

// Start is the first id of the allocated range.
func (a Allocation) Start() int64 { return a.MaxID - a.Step }

// Store is what the allocator needs from the database.
type Store interface {
	// Allocate raises the tag's max_id by step atomically and returns the
	// new max_id. A step <= 0 means the row's own step. Near the int64
	// maximum the step may be cut to the ids left (Allocation.Step says
	// what was taken). It returns ErrUnknownTag when there is no row of
	// exactly this name, ErrMisconfigured for a row whose step is below 1
	// and ErrExhausted when max_id is already the int64 maximum.
	Allocate(ctx context.Context, tag string, step int64) (Allocation, error)
	// AllocateAbove is Allocate after raising max_id to at least floor,
	// atomically, so that the range starts at floor or above.
	AllocateAbove(ctx context.Context, tag string, step, floor int64) (Allocation, error)
	// Tag returns one row, or ErrUnknownTag.
	Tag(ctx context.Context, tag string) (Tag, error)
	// Tags returns every row, ordered by name.
	Tags(ctx context.Context) ([]Tag, error)
	// FindTags returns those of names that have a row of exactly that
	// name, in any order: a row that only a collation matches ("ORDERS"
	// for "orders") is not found, nor is a name the table cannot hold.
	FindTags(ctx context.Context, names []string) ([]string, error)
}

// HandBacker is implemented by stores that can take back the unused tail of
// a range (see Allocator.HandBack).
type HandBacker interface {
	// HandBack sets the tag's max_id from end back to first in one
	// compare-and-set, only while max_id is still end, and reports whether
	// it did.
	HandBack(ctx context.Context, tag string, end, first int64) (bool, error)
}

// BatchAllocator is implemented by stores that can take the first range of
// several tags in one call. The allocator then serves the first loads of
// tags that arrive together with one call (see firstload.go).
type BatchAllocator interface {
	// AllocateBatch does for each of tags, all different, what
	// Allocate(ctx, tag, 0) does: it raises the row's max_id by the row's
	// own step. It returns one result per tag, in the order of tags, each
	// either the range taken or the error Allocate would return for that
	// tag alone (ErrUnknownTag, ErrMisconfigured, ErrExhausted). An error
	// of the whole call means that no range is handed out: one that was
	// taken all the same is lost, never issued twice.
	AllocateBatch(ctx context.Context, tags []string) ([]BatchResult, error)
}

// BatchResult is one tag's part of BatchAllocator.AllocateBatch.
type BatchResult struct {
	Allocation
	Err error // nil when Allocation is the tag's range
}
