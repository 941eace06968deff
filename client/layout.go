package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SnowflakeLayout is how a server's snowflake ids are made, as
// Client.SnowflakeLayout reads it (GET /api/snowflake/layout): the time
// since Epoch in Unit on top, then the worker id and the sequence. With
// it, ids are decoded and the bounds of an interval computed without a
// call.
type SnowflakeLayout struct {
	// Unit is the time field's unit: a millisecond, 10 milliseconds or a
	// second.
	Unit time.Duration
	// TimeBits, WorkerBits and SequenceBits are the fields' widths.
	TimeBits, WorkerBits, SequenceBits int
	// SequenceAboveWorker is the order "time,sequence,worker"
	// (sonyflake's); false is Leaf's, "time,worker,sequence".
	SequenceAboveWorker bool
	// Epoch is the start of the time field.
	Epoch time.Time
}

// SnowflakeParts is a snowflake id taken apart.
type SnowflakeParts struct {
	ID int64
	// Time is the start of the id's unit of time, UTC.
	Time     time.Time
	WorkerID int64
	Sequence int64
}

func (l SnowflakeLayout) unitMs() int64 { return max(l.Unit.Milliseconds(), 1) }

func (l SnowflakeLayout) timeShift() uint { return uint(l.WorkerBits + l.SequenceBits) }

func (l SnowflakeLayout) maxID() int64 {
	return int64(uint64(1)<<uint(l.TimeBits+l.WorkerBits+l.SequenceBits) - 1)
}

// Decode takes an id of the layout apart, as GET /api/snowflake/decode
// does.
func (l SnowflakeLayout) Decode(id int64) (SnowflakeParts, error) {
	if id < 0 || id > l.maxID() {
		return SnowflakeParts{}, fmt.Errorf("%w: %d is outside 0..%d", ErrInvalidID, id, l.maxID())
	}
	workerShift, seqShift := uint(l.SequenceBits), uint(0)
	if l.SequenceAboveWorker {
		workerShift, seqShift = 0, uint(l.WorkerBits)
	}
	return SnowflakeParts{
		ID:       id,
		Time:     time.UnixMilli(l.Epoch.UnixMilli() + (id>>l.timeShift())*l.unitMs()).UTC(),
		WorkerID: id >> workerShift & (1<<uint(l.WorkerBits) - 1),
		Sequence: id >> seqShift & (1<<uint(l.SequenceBits) - 1),
	}, nil
}

// Bounds is the lowest and the highest id of the layout that an id made
// at any instant from from to to, both included, can be, as GET
// /api/snowflake/bounds says: every id between them decodes to a unit of
// time of the interval, widened to whole units, so that "id BETWEEN lo
// AND hi" finds the rows made in it. An interval that begins before the
// epoch begins at it; one that ends after the time field has run out ends
// with it. One that ends before it begins, ends before the epoch or
// begins after the end is ErrInvalidRequest, as the server's 400
// invalid_request; an id outside the layout's is ErrInvalidID.
func (l SnowflakeLayout) Bounds(from, to time.Time) (lo, hi int64, err error) {
	if to.Before(from) {
		return 0, 0, fmt.Errorf("%w: invalid interval of time: it ends at %v, before it begins at %v", ErrInvalidRequest, to, from)
	}
	epoch, unit := l.Epoch.UnixMilli(), l.unitMs()
	first, last := floorDiv(from.UnixMilli()-epoch, unit), floorDiv(to.UnixMilli()-epoch, unit)
	maxTime := int64(1)<<uint(l.TimeBits) - 1
	switch {
	case last < 0:
		return 0, 0, fmt.Errorf("%w: invalid interval of time: it ends at %v, before the epoch %v", ErrInvalidRequest, to, l.Epoch)
	case first > maxTime:
		return 0, 0, fmt.Errorf("%w: invalid interval of time: it begins at %v, after the layout's time runs out", ErrInvalidRequest, from)
	}
	first, last = max(first, 0), min(last, maxTime)
	s := l.timeShift()
	return first << s, last<<s | (1<<s - 1), nil
}

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	if a < 0 {
		a -= b - 1
	}
	return a / b
}

type layoutAnswer struct {
	TimeUnit     string `json:"time_unit"`
	TimeBits     int    `json:"time_bits"`
	WorkerBits   int    `json:"worker_bits"`
	SequenceBits int    `json:"sequence_bits"`
	Order        string `json:"order"`
	EpochMs      *int64 `json:"epoch_ms"`
	unit         time.Duration
}

func (a *layoutAnswer) check() error {
	a.unit = map[string]time.Duration{"ms": time.Millisecond, "10ms": 10 * time.Millisecond, "s": time.Second}[a.TimeUnit]
	n := a.TimeBits + a.WorkerBits + a.SequenceBits
	switch {
	case a.unit == 0:
		return fmt.Errorf("time_unit %q is none of ms, 10ms, s", a.TimeUnit)
	case a.TimeBits < 1 || a.WorkerBits < 1 || a.SequenceBits < 1 || n != 63 && n != 53:
		return fmt.Errorf("widths %d, %d, %d do not make 63 or 53 bits", a.TimeBits, a.WorkerBits, a.SequenceBits)
	case a.Order != "time,worker,sequence" && a.Order != "time,sequence,worker":
		return fmt.Errorf("order %q is unknown", a.Order)
	case a.EpochMs == nil:
		return errors.New("no epoch_ms")
	}
	return nil
}

// layout is the layout the answer says; check first.
func (a *layoutAnswer) layout() SnowflakeLayout {
	return SnowflakeLayout{
		Unit: a.unit, TimeBits: a.TimeBits, WorkerBits: a.WorkerBits, SequenceBits: a.SequenceBits,
		SequenceAboveWorker: a.Order == "time,sequence,worker", Epoch: time.UnixMilli(*a.EpochMs).UTC(),
	}
}

// SnowflakeLayout reads the layout of the servers' snowflake ids (every
// server of a fleet must share one: ids of two layouts do not compare).
func (c *Client) SnowflakeLayout(ctx context.Context) (SnowflakeLayout, error) {
	var a layoutAnswer
	if _, err := c.get(ctx, "snowflake layout", "/api/snowflake/layout", &a); err != nil {
		return SnowflakeLayout{}, err
	}
	return a.layout(), nil
}
