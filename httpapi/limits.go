package httpapi

// Body, batch and range limits.
const (
	// maxBodyBytes bounds a request body; larger is 413.
	maxBodyBytes = 64 << 10
	// MaxCount is the largest batch.
	MaxCount = 10000
	// MaxRangeCount is the largest range. A range is two numbers whatever
	// its size, so it may be far larger than a batch; it stops there as
	// the adaptive step does, since a range never spans two segments.
	MaxRangeCount = 1_000_000
)
