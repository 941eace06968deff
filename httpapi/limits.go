package httpapi

import "github.com/leafid/leaf/leafapi"

// The limits of a request, the same over every protocol (package leafapi).
const (
	// maxBodyBytes bounds a request body; larger is 413.
	maxBodyBytes = 64 << 10
	// MaxCount is the largest batch, of segment ids, snowflake ids or
	// UUIDs.
	MaxCount = leafapi.MaxCount
	// MaxRangeCount is the largest range.
	MaxRangeCount = leafapi.MaxRangeCount
)
