package snowflake

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidInterval: an interval of time that holds no id of the layout
// (its end before its start, before the epoch, or after the time field has
// run out).
var ErrInvalidInterval = errors.New("invalid interval of time")

// Bounds is the lowest and the highest id of layout l, with its epoch at
// epochMs (Unix milliseconds), that an id made at any instant from from
// to to, both included, can be: the first id of from's unit of time and
// the last of to's. Every id between them decodes (Decode) to a unit
// within that span, and every id outside them to a unit outside it, so
// that "id BETWEEN lo AND hi" finds the rows made in the interval, widened
// to whole units. An interval that begins before the epoch begins at it;
// one that ends after the time field has run out ends with it. One that
// ends before it begins, ends before the epoch or begins after the end is
// ErrInvalidInterval.
func (l Layout) Bounds(epochMs int64, from, to time.Time) (lo, hi int64, err error) {
	l = l.orDefault()
	if to.Before(from) {
		return 0, 0, fmt.Errorf("%w: it ends at %s, before it begins at %s", ErrInvalidInterval, fmtTime(to), fmtTime(from))
	}
	unitMs := l.Unit.Milliseconds()
	first, last := floorDiv(from.UnixMilli()-epochMs, unitMs), floorDiv(to.UnixMilli()-epochMs, unitMs)
	maxTime := int64(1)<<l.TimeBits - 1
	switch {
	case last < 0:
		return 0, 0, fmt.Errorf("%w: it ends at %s, before the epoch %s", ErrInvalidInterval, fmtTime(to), fmtMs(epochMs))
	case first > maxTime:
		return 0, 0, fmt.Errorf("%w: it begins at %s, after the layout's time runs out at %s", ErrInvalidInterval, fmtTime(from), fmtTime(l.End(epochMs)))
	}
	first, last = max(first, 0), min(last, maxTime)
	timeShift, _, _ := l.shifts()
	return first << timeShift, last<<timeShift | (1<<timeShift - 1), nil
}

// Bounds is Layout.Bounds with the generator's layout and epoch.
func (g *Generator) Bounds(from, to time.Time) (lo, hi int64, err error) {
	return g.layout.Bounds(g.epochMs, from, to)
}

// Epoch is the start of the ids' time field.
func (g *Generator) Epoch() time.Time { return time.UnixMilli(g.epochMs).UTC() }

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
