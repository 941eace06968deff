package httpapi

import "github.com/leafid/leaf/service"

// The limits of a request, the same over every protocol (package service).
const (
	// maxBodyBytes bounds a request body; larger is 413.
	maxBodyBytes = 64 << 10
	// MaxCount is the largest batch, of segment ids, snowflake ids or
	// UUIDs.
	MaxCount = service.MaxCount
	// MaxRangeCount is the largest range.
	MaxRangeCount = service.MaxRangeCount
)
