package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leafid/leaf/snowflake"
)

// The bounds of --snowflake-lease. Below the least, the sixth of it that
// a renewal has before ids stop is below a second; above the most, a
// lease found gone back in time stops snowflake ids for longer than an
// operator would wait, and a dead holder's worker id stays taken as long.
const (
	minSnowflakeLease = 3 * time.Second
	maxSnowflakeLease = 10 * time.Minute
)

// validateSnowflake checks the snowflake layout, the worker id it allows
// and, with snowflake mode on, that the layout's range from the epoch has
// not run out at now: so that none of them fails a start halfway through,
// after the store was opened and migrated.
func (c *serveConfig) validateSnowflake(now time.Time) error {
	// Named as parsed, not as given: the given text may hold spaces or
	// control characters from a variable.
	l := c.layout
	given := fmt.Sprintf("--snowflake-layout %s --snowflake-time-unit %s", layoutFlag(l), timeUnitFlag(l.Unit))
	if l.Order != snowflake.TimeWorkerSequence {
		given += " --snowflake-order " + orderFlag(l.Order).String()
	}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%w: %s: %w", errUsage, given, err)
	}
	if c.workerID != -1 && !l.ValidWorkerID(c.workerID) {
		return fmt.Errorf("%w: --snowflake-worker-id %d: want -1 or 0..%d (%d worker bits in %s)",
			errUsage, c.workerID, l.MaxWorkerID(), l.WorkerBits, given)
	}
	if c.snowflakeLease < minSnowflakeLease || c.snowflakeLease > maxSnowflakeLease {
		return fmt.Errorf("%w: --snowflake-lease %v: want %v..%v", errUsage, c.snowflakeLease, minSnowflakeLease, maxSnowflakeLease)
	}
	if end := l.End(c.epochMs); c.snowflake && l.Exhausted(c.epochMs, now) {
		return fmt.Errorf("%w: --snowflake-epoch %d with %s: the %d-bit time field ran out at %s; "+
			"a later epoch or a wider time field starts a new range, and changes the ids (docs/snowflake.md, \"Snowflake layouts\")",
			errUsage, c.epochMs, given, l.TimeBits, end.Format(time.RFC3339Nano))
	}
	return nil
}

// epochFlag is --snowflake-epoch, in Unix milliseconds.
type epochFlag int64

func (e epochFlag) String() string { return strconv.FormatInt(int64(e), 10) }
func (e epochFlag) Get() any       { return int64(e) }

func (e *epochFlag) Set(s string) error {
	ms, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return err
	}
	if err := checkEpoch(ms); err != nil {
		return valueError{strconv.FormatInt(ms, 10), err}
	}
	*e = epochFlag(ms)
	return nil
}

// checkEpoch accepts the epochs that snowflake.CheckEpoch does but 0,
// from 1 ms after the Unix epoch to now. Zero is refused rather than
// honoured: snowflake.Settings reads an EpochMs of 0 as "the default", so
// 0 used to become 1288834974657 without a word. Honouring it would need a
// way to say "unset" other than 0 in the snowflake settings; what is lost
// is small, as the 41 bits counted from 1970 run out in 2039.
func checkEpoch(ms int64) error {
	if ms == 0 {
		return fmt.Errorf("not accepted (0 used to mean the default; an epoch of 1970 would run out in 2039): give the epoch in Unix milliseconds, e.g. the default %d", snowflake.DefaultEpochMs)
	}
	return snowflake.CheckEpoch(ms, time.Now())
}

// layoutFlag is --snowflake-layout: the widths of the time, worker id and
// sequence fields, as T,W,S. Set reads only their syntax; the rules of a
// layout are snowflake.Layout.Validate's, applied with the time unit once
// both are read (validateSnowflake).
type layoutFlag snowflake.Layout

// exampleLayout is the layout the messages of --snowflake-layout show:
// Leaf's, the default.
var exampleLayout = layoutFlag(snowflake.DefaultLayout())

func (l layoutFlag) String() string {
	return fmt.Sprintf("%d,%d,%d", l.TimeBits, l.WorkerBits, l.SequenceBits)
}

func (l *layoutFlag) Set(s string) error {
	fields := strings.Split(s, ",")
	if len(fields) != 3 {
		return valueError{s, fmt.Errorf("want the bits of time, worker id and sequence as T,W,S, e.g. %s", exampleLayout)}
	}
	var bits [3]int
	for i, f := range fields {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return valueError{s, fmt.Errorf("%s is not a number of bits; want T,W,S, e.g. %s", printable(strings.TrimSpace(f)), exampleLayout)}
		}
		bits[i] = n
	}
	l.TimeBits, l.WorkerBits, l.SequenceBits = bits[0], bits[1], bits[2]
	return nil
}

// timeUnitFlag is --snowflake-time-unit: the unit of the time field of a
// snowflake.Layout, one of snowflake.ParseUnit's.
type timeUnitFlag time.Duration

func (u timeUnitFlag) String() string { return snowflake.UnitSymbol(time.Duration(u)) }

func (u *timeUnitFlag) Set(s string) error {
	d, ok := snowflake.ParseUnit(s)
	if !ok {
		return valueError{s, errors.New("want " + snowflake.UnitChoices())}
	}
	*u = timeUnitFlag(d)
	return nil
}

// orderFlag is --snowflake-order: the order of the fields of a
// snowflake.Layout from the top, time,worker,sequence or
// time,sequence,worker. Spaces around a name are ignored, as in
// --snowflake-layout.
type orderFlag snowflake.Order

func (o orderFlag) String() string { return snowflake.Order(o).String() }

func (o *orderFlag) Set(s string) error {
	names := strings.Split(s, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	v, ok := snowflake.ParseOrder(strings.Join(names, ","))
	if !ok {
		return valueError{s, errors.New("want " + snowflake.OrderChoices() + "; the time is always on top, so that ids grow with time")}
	}
	*o = orderFlag(v)
	return nil
}
