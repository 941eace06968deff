package bizid

import (
	"fmt"
	"strings"
	"time"
)

// Reset is how often a formatted tag's sequence starts again from 1.
type Reset string

// The reset periods.
const (
	Never Reset = "never"
	Day   Reset = "day"
	Month Reset = "month"
	Year  Reset = "year"
)

// ParseReset parses a reset period; "" is Never.
func ParseReset(s string) (Reset, error) {
	switch r := Reset(s); r {
	case "":
		return Never, nil
	case Never, Day, Month, Year:
		return r, nil
	}
	return "", fmt.Errorf("%w: reset %q is not one of day, month, year, never", ErrInvalidFormat, s)
}

// keyLayout is the layout of a period's key: the part of its row's name
// after the '@'. Keys of one tag have one length and sort as their
// periods do.
func (r Reset) keyLayout() string {
	switch r {
	case Day:
		return "20060102"
	case Month:
		return "200601"
	case Year:
		return "2006"
	}
	return ""
}

// KeyLen is the length of the period keys of r; 0 for Never.
func (r Reset) KeyLen() int { return len(r.keyLayout()) }

// shows says what a date must show to tell r's periods apart.
func (r Reset) shows() string {
	switch r {
	case Day:
		return "the year, month and day (as in {date:20060102})"
	case Month:
		return "the year and month (as in {date:200601})"
	}
	return "the year (as in {date:2006})"
}

// key is the key of the period that holds at, which is in the tag's zone.
func (r Reset) key(at time.Time) string {
	if r == Never {
		return ""
	}
	return at.Format(r.keyLayout())
}

// bounds are the first instant of the period that holds at and the first
// of the next one, in at's zone. Midnight that a change of clocks skips
// is the first instant after it (time.Date normalizes).
func (r Reset) bounds(at time.Time) (start, end time.Time) {
	y, m, d := at.Date()
	loc := at.Location()
	switch r {
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, loc), time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	case Month:
		return time.Date(y, m, 1, 0, 0, 0, 0, loc), time.Date(y, m+1, 1, 0, 0, 0, 0, loc)
	case Year:
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc), time.Date(y+1, 1, 1, 0, 0, 0, 0, loc)
	}
	return time.Time{}, time.Date(1<<30, 1, 1, 0, 0, 0, 0, time.UTC)
}

// RowSep separates a tag's name from a period key in the name of the
// period's leaf_alloc row: orders@20261123.
const RowSep = "@"

// RowName is the name of the leaf_alloc row that numbers tag's period
// key; the tag's own row for Never (key "").
func RowName(tag, key string) string {
	if key == "" {
		return tag
	}
	return tag + RowSep + key
}

// SplitRowName splits a name as RowName makes a period's: the tag before
// the last RowSep and a key of 4, 6 or 8 digits (a year's, a month's or a
// day's) after it. ok is false for a name that no period's row has.
// Whether tag resets, and by periods of that key's length, is for its
// settings to say (Settings.PeriodKey).
func SplitRowName(name string) (tag, key string, ok bool) {
	i := strings.LastIndex(name, RowSep)
	if i < 1 {
		return "", "", false
	}
	tag, key = name[:i], name[i+len(RowSep):]
	switch len(key) {
	case Year.KeyLen(), Month.KeyLen(), Day.KeyLen():
	default:
		return "", "", false
	}
	if strings.Trim(key, "0123456789") != "" {
		return "", "", false
	}
	return tag, key, true
}

// Period is one period of a tag.
type Period struct {
	Key        string    // "20261123"; "" for Never
	Row        string    // the leaf_alloc row of its numbers
	Start, End time.Time // [Start, End)
}

// PeriodAt is the period of tag under r that holds at (in the tag's zone).
func PeriodAt(tag string, r Reset, at time.Time) Period {
	key := r.key(at)
	start, end := r.bounds(at)
	return Period{Key: key, Row: RowName(tag, key), Start: start, End: end}
}
