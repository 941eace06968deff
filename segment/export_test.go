package segment

// LookupsWaiting is how many names wait for the next look-up read.
func LookupsWaiting(a *Allocator) int {
	a.lookups.mu.Lock()
	defer a.lookups.mu.Unlock()
	if a.lookups.next == nil {
		return 0
	}
	return len(a.lookups.next.names)
}

// Rules reached by the tests of package segment_test.
var (
	NextStep       = nextStep
	ValidateNewTag = validateNewTag
)

// FirstLoadsWaiting is how many tags wait for the next batch of first
// loads.
func FirstLoadsWaiting(a *Allocator) int {
	a.firstBatches.mu.Lock()
	defer a.firstBatches.mu.Unlock()
	if a.firstBatches.next == nil {
		return 0
	}
	return len(a.firstBatches.next.tags)
}

// KnownNames is how many names the allocator keeps beside its buffers as
// known to have a row (found by a look-up, Added, or listed).
func KnownNames(a *Allocator) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.known) + len(a.added)
}
