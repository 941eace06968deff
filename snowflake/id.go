package snowflake

import "time"

// ID is a snowflake id taken apart.
type ID struct {
	ID       int64
	Time     time.Time // the start of the id's unit of time, UTC
	WorkerID int64
	Sequence int64
}

// TimestampMs is the id's time in Unix milliseconds.
func (d ID) TimestampMs() int64 { return d.Time.UnixMilli() }
