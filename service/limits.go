package service

import (
	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// The limits of a request, the same over every protocol. docs/http-api.md states
// them, and the Go client's copies (client.MaxRange,
// client.MaxSnowflakeBatch) are held equal to them by its tests.
const (
	// MaxCount is the largest batch, of segment ids, snowflake ids or
	// UUIDs.
	MaxCount = 10000
	// MaxRangeCount is the largest range. A range is two numbers whatever
	// its size, so it may be far larger than a batch; it stops where the
	// adaptive step does, since a range never spans two segments.
	MaxRangeCount = segment.MaxStep
)

// MaxTextJSON bounds a formatted id written as a JSON string: each byte of
// its format as at most six (a '<' is \u003c; a date widens its layout
// less, "MST" writing "+0530"), a number of up to bizid.MaxSeqWidth digits,
// and the quotes. An owner's batch of MaxCount such texts is read whole.
const MaxTextJSON = 6*bizid.MaxFormatLen + bizid.MaxSeqWidth + 2
