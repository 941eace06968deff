package snowflake

import (
	"fmt"
	"time"
)

// ID is a snowflake id taken apart.
type ID struct {
	ID       int64
	Time     time.Time // the start of the id's unit of time, UTC
	WorkerID int64
	Sequence int64
}

// TimestampMs is the id's time in Unix milliseconds.
func (d ID) TimestampMs() int64 { return d.Time.UnixMilli() }

// Decode takes an id of this generator's layout and epoch apart, its
// fields in the layout's order: its Time is the start of its unit.
// Negative ids, and with a 53-bit layout ids above 2^53-1, are
// ErrInvalidID; every other int64 is a value the layout can hold.
func (g *Generator) Decode(id int64) (ID, error) {
	switch {
	case id < 0:
		return ID{}, fmt.Errorf("%w: %d is negative", ErrInvalidID, id)
	case id > g.layout.MaxID():
		return ID{}, fmt.Errorf("%w: %d is above %d, the largest id of the %d-bit layout %s",
			ErrInvalidID, id, g.layout.MaxID(), g.layout.Bits(), g.layout)
	}
	return ID{
		ID:       id,
		Time:     time.UnixMilli(g.startMs(id >> g.timeShift)).UTC(),
		WorkerID: id >> g.workerShift & g.layout.MaxWorkerID(),
		Sequence: id >> g.seqShift & g.maxSeq,
	}, nil
}

// compose is the inverse of Decode for unit t since the epoch.
func (g *Generator) compose(t, workerID, seq int64) int64 {
	return t<<g.timeShift | workerID<<g.workerShift | seq<<g.seqShift
}
