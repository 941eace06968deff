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

// DefaultCappedShare is the most of a capped period's numbers one call may
// take by default (Config.CappedShare): a tenth, so that no caller takes
// a period whole in one call and leaves every other caller sequence_full
// until the next.
const DefaultCappedShare = 0.1

// DefaultRangeMax is the most ids one range hands out by default
// (Config.RangeMax). A range asked larger is answered with this many: a
// range is "up to count", and every client takes what it is given. It is
// below segment.MaxStep, so that a caller asking the most at every call
// empties a segment in ten calls, not each: the store is written to once
// per ten such calls, not at every one.
const DefaultRangeMax = 100_000

// cappedMost is the most numbers of a period of capacity one call may take
// under share (at least one).
func cappedMost(capacity int64, share float64) int64 {
	return max(1, int64(float64(capacity)*share))
}
