package main

import (
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

// layoutText is a layout's widths as --snowflake-layout reads them: T,W,S.
func layoutText(l snowflake.Layout) string {
	return fmt.Sprintf("%d,%d,%d", l.TimeBits, l.WorkerBits, l.SequenceBits)
}

// layout reads --snowflake-layout (the widths, as T,W,S),
// --snowflake-time-unit and --snowflake-order (its names, spaces around
// them ignored). Only their syntax: the rules of a layout are
// snowflake.Layout.Validate's, applied in validateSnowflake.
func (c *serveCmd) layout(p *parser) (snowflake.Layout, error) {
	example := layoutText(snowflake.DefaultLayout())
	var l snowflake.Layout
	fields := strings.Split(c.Layout, ",")
	if len(fields) != 3 {
		return l, p.refused(refusal{"snowflake-layout", c.Layout, "want the bits of time, worker id and sequence as T,W,S, e.g. " + example})
	}
	var bits [3]int
	for i, f := range fields {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return l, p.refused(refusal{"snowflake-layout", c.Layout, fmt.Sprintf("%s is not a number of bits; want T,W,S, e.g. %s", printable(strings.TrimSpace(f)), example)})
		}
		bits[i] = n
	}
	l.TimeBits, l.WorkerBits, l.SequenceBits = bits[0], bits[1], bits[2]
	unit, ok := snowflake.ParseUnit(c.TimeUnit)
	if !ok {
		return l, p.refused(refusal{"snowflake-time-unit", c.TimeUnit, "want " + snowflake.UnitChoices()})
	}
	names := strings.Split(c.Order, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	order, ok := snowflake.ParseOrder(strings.Join(names, ","))
	if !ok {
		return l, p.refused(refusal{"snowflake-order", c.Order, "want " + snowflake.OrderChoices() + "; the time is always on top, so that ids grow with time"})
	}
	l.Unit, l.Order = unit, order
	return l, nil
}

// validateSnowflake checks the epoch, the snowflake layout, the worker id
// it allows and, with snowflake mode on, that the layout's range from the
// epoch has not run out at now: so that none of them fails a start
// halfway through, after the store was opened and migrated.
func (c *serveCmd) validateSnowflake(p *parser, l snowflake.Layout, now time.Time) error {
	if c.Epoch == 0 {
		// Refused rather than honoured: snowflake.Settings reads an
		// EpochMs of 0 as "the default", so 0 used to become the default
		// without a word; the 41 bits counted from 1970 run out in 2039.
		return p.refused(refusal{"snowflake-epoch", "0", fmt.Sprintf("not accepted (0 used to mean the default; an epoch of 1970 would run out in 2039): give the epoch in Unix milliseconds, e.g. the default %d", snowflake.DefaultEpochMs)})
	}
	if err := snowflake.CheckEpoch(c.Epoch, now); err != nil {
		return p.refused(refusal{"snowflake-epoch", strconv.FormatInt(c.Epoch, 10), err.Error()})
	}
	// Named as parsed, not as given: the given text may hold spaces or
	// control characters from a variable.
	given := fmt.Sprintf("--snowflake-layout %s --snowflake-time-unit %s", layoutText(l), snowflake.UnitSymbol(l.Unit))
	if l.Order != snowflake.TimeWorkerSequence {
		given += " --snowflake-order " + l.Order.String()
	}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%w: %s: %w", errUsage, given, err)
	}
	if c.WorkerID != -1 && !l.ValidWorkerID(c.WorkerID) {
		return fmt.Errorf("%w: --snowflake-worker-id %d: want -1 or 0..%d (%d worker bits in %s)",
			errUsage, c.WorkerID, l.MaxWorkerID(), l.WorkerBits, given)
	}
	if c.SnowflakeLease < minSnowflakeLease || c.SnowflakeLease > maxSnowflakeLease {
		return fmt.Errorf("%w: --snowflake-lease %v: want %v..%v", errUsage, c.SnowflakeLease, minSnowflakeLease, maxSnowflakeLease)
	}
	if end := l.End(c.Epoch); c.Snowflake && l.Exhausted(c.Epoch, now) {
		return fmt.Errorf("%w: --snowflake-epoch %d with %s: the %d-bit time field ran out at %s; "+
			"a later epoch or a wider time field starts a new range, and changes the ids (docs/snowflake.md, \"Snowflake layouts\")",
			errUsage, c.Epoch, given, l.TimeBits, end.Format(time.RFC3339Nano))
	}
	return nil
}
