package segment

import "time"

// SegmentState describes one half of a tag's double buffer.
type SegmentState struct {
	// Start and End bound the range: ids Start..End-1.
	Start, End int64
	// Next is the next id this segment will hand out.
	Next int64
	// Remaining is how many ids are left in it.
	Remaining int64
	// LoadedAt is when the range was taken from the store.
	LoadedAt time.Time
}

// BufferState is a snapshot of one tag's double buffer, for the admin API
// and metrics. Counters count since the tag was first used by this process.
type BufferState struct {
	Tag string
	// Segments are the two halves; a nil half is empty.
	Segments [2]*SegmentState
	// Current is the index in Segments of the half ids come from.
	Current int
	// Loading is true while a load from the store is in flight.
	Loading bool
	// Step is the step of the last load; MinStep is the row's own step,
	// the floor of the adaptive step.
	Step, MinStep int64
	// LastLoad is when the last successful load finished, and
	// LastLoadTook how long it took (by Options.Now).
	LastLoad     time.Time
	LastLoadTook time.Duration
	// LastError is the last load's error, if that load failed.
	LastError string
	// Issued counts ids handed out; Loads and LoadFailures count loads;
	// Waits counts requests that had to wait for a load, WaitedLoads the
	// loads they waited for (one however many requests waited on it).
	Issued, Loads, LoadFailures, Waits, WaitedLoads uint64
	// HighMaxID is the highest max_id this process received for the tag;
	// Regressions counts the times the row was found behind it and moved
	// forward (see the package comment, "Fence").
	HighMaxID   int64
	Regressions uint64
}

// FailedTag is a tag of the list whose first load failed, so that it has
// no buffer to describe: a row at the int64 maximum, one with a bad step,
// or any tag while the store is down.
type FailedTag struct {
	Tag string
	// Err is the last failure's error.
	Err string
	// Failures counts the failed first loads since the last success; At is
	// when the last one failed.
	Failures uint64
	At       time.Time
}
