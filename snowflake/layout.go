package snowflake

import (
	"fmt"
	"time"
)

// Layout is how an id's bits are shared among its three fields: the time
// since the epoch in Unit, on top, then the worker id and the sequence
// number within one unit of time, in Order. The zero Layout stands for
// DefaultLayout(); any other must set the unit and the three widths, and
// pass Validate.
//
// The three fields fill the low 63 bits, or the low 53 bits: ids below
// 2^53 are integers that a JavaScript number (a float64) holds exactly, so
// a browser can read them as numbers. Every bit above the fields is 0, the
// sign bit included, so every id is a positive int64. Only those two widths
// are accepted, so that a field given one bit short or long is an error
// rather than a smaller id space nobody asked for.
type Layout struct {
	// Unit is the time field's unit: time.Millisecond, 10*time.Millisecond
	// (sonyflake's) or time.Second.
	Unit time.Duration
	// TimeBits, WorkerBits and SequenceBits are the widths of the fields.
	TimeBits     int
	WorkerBits   int
	SequenceBits int
	// Order is the order of the worker id and the sequence below the
	// time; the zero Order is Leaf's, TimeWorkerSequence.
	Order Order
}

// Limits of a Layout.
const (
	// MaxTimeBitsMs, MaxTimeBits10ms and MaxTimeBitsS are the widest time
	// fields in milliseconds, in units of 10 milliseconds and in seconds:
	// about 4,460, 5,575 and 4,355 years. One bit more would let a range
	// from an epoch at or before now reach past the year 9999, which an
	// RFC 3339 time (the decode route's, the status page's) cannot write.
	MaxTimeBitsMs   = 47
	MaxTimeBits10ms = 44
	MaxTimeBitsS    = 37
	// MaxWorkerBits is the widest worker field: 65,536 worker ids. A
	// leased worker id is picked from a pool of 2^WorkerBits, which each
	// acquisition lists.
	MaxWorkerBits = 16
	// MaxSequenceBits is the widest sequence field: 2^32 ids in one unit
	// of time, far more than one process hands out even in a second.
	MaxSequenceBits = 32
	// IDBits and JSBits are the two widths the fields may fill: a whole
	// positive int64, or the integers a JavaScript number holds exactly.
	IDBits = 63
	JSBits = 53
)

// DefaultLayout is Leaf's (and Twitter's) layout: 41 bits of
// milliseconds, 10 of worker id, 12 of sequence.
func DefaultLayout() Layout {
	return Layout{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12}
}

// Limits of the default layout, DefaultLayout().
const (
	// MaxWorkerID is the largest worker id of the default layout (1023);
	// Layout.MaxWorkerID gives any layout's.
	MaxWorkerID = 1<<10 - 1
	// MaxSequence is the largest sequence number within a millisecond of
	// the default layout (4095); Layout.MaxSequence gives any layout's.
	MaxSequence = 1<<12 - 1
)

// Validate says why l cannot work, in an error wrapping
// ErrInvalidSettings, or returns nil.
func (l Layout) Validate() error {
	if !l.Order.valid() {
		return fmt.Errorf("%w: field order %v: want %s", ErrInvalidSettings, l.Order, OrderChoices())
	}
	maxTime := maxTimeBits(l.Unit)
	if maxTime == 0 {
		return fmt.Errorf("%w: time unit %v: want %s", ErrInvalidSettings, l.Unit, UnitChoices())
	}
	for _, f := range []struct {
		name      string
		bits, max int
	}{
		{"time", l.TimeBits, maxTime},
		{"worker", l.WorkerBits, MaxWorkerBits},
		{"sequence", l.SequenceBits, MaxSequenceBits},
	} {
		if f.bits < 1 || f.bits > f.max {
			return fmt.Errorf("%w: %d %s bits: want 1 to %d%s", ErrInvalidSettings, f.bits, f.name, f.max, whyMax(f.name, l.Unit))
		}
	}
	if n := l.Bits(); n != IDBits && n != JSBits {
		return fmt.Errorf("%w: %d time + %d worker + %d sequence bits make %d: want %d (a positive int64) or %d (an integer a JavaScript number holds exactly)",
			ErrInvalidSettings, l.TimeBits, l.WorkerBits, l.SequenceBits, n, IDBits, JSBits)
	}
	return nil
}

func whyMax(field string, unit time.Duration) string {
	switch field {
	case "time":
		return fmt.Sprintf(" with %ss (a wider field outlasts the year 9999)", UnitName(unit))
	case "worker":
		return " (the pool of worker ids to lease)"
	case "sequence":
		return " (ids in one unit of time)"
	}
	return ""
}

// Bits is the number of low bits of an id that the fields fill.
func (l Layout) Bits() int { return l.TimeBits + l.WorkerBits + l.SequenceBits }

// MaxWorkerID is the largest worker id, 2^WorkerBits-1.
func (l Layout) MaxWorkerID() int64 { return 1<<l.WorkerBits - 1 }

// ValidWorkerID says whether id is a worker id of l: 0..MaxWorkerID().
func (l Layout) ValidWorkerID(id int64) bool { return id >= 0 && id <= l.MaxWorkerID() }

// checkWorkerID checks that id fits layout l; from names where it came
// from when that was not the settings.
func checkWorkerID(id int64, l Layout, from string) error {
	if l.ValidWorkerID(id) {
		return nil
	}
	if from != "" {
		return fmt.Errorf("%s gave worker id %d, outside 0..%d", from, id, l.MaxWorkerID())
	}
	return fmt.Errorf("%w: worker id %d is outside 0..%d of %d worker bits", ErrInvalidSettings, id, l.MaxWorkerID(), l.WorkerBits)
}

// MaxSequence is the largest sequence number within one unit of time.
func (l Layout) MaxSequence() int64 { return 1<<l.SequenceBits - 1 }

// MaxID is the largest id of the layout.
func (l Layout) MaxID() int64 { return 1<<l.Bits() - 1 }

// IDsPerSecond is the most ids one worker issues in a second: the
// sequence numbers of a second's worth of time units.
func (l Layout) IDsPerSecond() int64 {
	return (l.MaxSequence() + 1) * int64(time.Second/l.Unit)
}

// End is the first instant (UTC) at which the time field counted from
// epochMs (Unix milliseconds) has run out and no id can be issued.
func (l Layout) End(epochMs int64) time.Time {
	return time.UnixMilli(epochMs + (1<<l.TimeBits)*l.Unit.Milliseconds()).UTC()
}

// String is the layout as "41,10,12 ms": the widths of time, worker id
// and sequence, then the unit, and then the order when it is not Leaf's:
// "39,16,8 10ms time,sequence,worker".
func (l Layout) String() string {
	s := fmt.Sprintf("%d,%d,%d %s", l.TimeBits, l.WorkerBits, l.SequenceBits, UnitSymbol(l.Unit))
	if l.Order != TimeWorkerSequence {
		s += " " + l.Order.String()
	}
	return s
}

// shifts are the positions of the fields' lowest bits.
func (l Layout) shifts() (timeShift, workerShift, seqShift uint8) {
	if l.Order == TimeSequenceWorker {
		return uint8(l.WorkerBits + l.SequenceBits), 0, uint8(l.WorkerBits)
	}
	return uint8(l.WorkerBits + l.SequenceBits), uint8(l.SequenceBits), 0
}

// orDefault is l, or DefaultLayout() for the zero Layout.
func (l Layout) orDefault() Layout {
	if l == (Layout{}) {
		return DefaultLayout()
	}
	return l
}
