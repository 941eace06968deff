package uuidv7

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidInterval: an interval of time that holds no version 7 UUID
// (its end before its start, before 1970 or after the 48-bit
// milliseconds run out).
var ErrInvalidInterval = errors.New("invalid interval of time")

// Bounds is the lowest and the highest version 7 UUID that one made at
// any instant from from to to, both included, can be: from's millisecond
// with every random bit 0, and to's with every random bit 1. A UUID lies
// between them (byte-wise, which is also the order of their text) exactly
// when its millisecond lies from from's to to's. An interval that begins
// before 1970 begins then; one that ends after the last millisecond ends
// with it.
func Bounds(from, to time.Time) (lo, hi UUID, err error) {
	if to.Before(from) {
		return lo, hi, fmt.Errorf("%w: it ends at %s, before it begins at %s", ErrInvalidInterval, fmtTime(to), fmtTime(from))
	}
	first, last := from.UnixMilli(), to.UnixMilli()
	switch {
	case last < 0:
		return lo, hi, fmt.Errorf("%w: it ends at %s, before 1970", ErrInvalidInterval, fmtTime(to))
	case first > maxMs:
		return lo, hi, fmt.Errorf("%w: it begins at %s, after the last millisecond a UUID holds", ErrInvalidInterval, fmtTime(from))
	}
	return compose(max(first, 0), 0, 0), compose(min(last, maxMs), 1<<12-1, 1<<62-1), nil
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
