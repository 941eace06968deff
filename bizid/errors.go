package bizid

import (
	"errors"
	"fmt"
)

// Errors of formatted and opaque tags.
var (
	// ErrInvalidFormat: a format, reset period, time zone or opaque
	// width that is refused; the message says why.
	ErrInvalidFormat = errors.New("invalid format")
	// ErrPeriodClosed: the period asked for ended longer ago than the
	// grace and its row may have been pruned: its numbers are never
	// issued again.
	ErrPeriodClosed = errors.New("period closed")
	// ErrSequenceFull: a fixed-width sequence ({seq:N!}) has shown its
	// largest number for this period.
	ErrSequenceFull = errors.New("sequence full for this period")
	// ErrNotNumeric: the tag's ids are texts or opaque numbers, which a
	// contiguous range cannot give.
	ErrNotNumeric = errors.New("tag does not issue contiguous numbers")
	// ErrNotOpaque: revealing the number of an id of a tag that is not
	// opaque.
	ErrNotOpaque = errors.New("tag is not opaque")
	// ErrNoKey: no opaque key is configured, or not the one a tag's ids
	// were made with.
	ErrNoKey = errors.New("opaque key missing")
	// ErrOutOfDomain: a number outside an opaque tag's domain.
	ErrOutOfDomain = errors.New("number outside the opaque domain")
	// ErrFixed: a change to the format or reset of a tag that has them.
	ErrFixed = errors.New("format fixed")
	// ErrExhausted: an opaque tag's row passed the largest number of its
	// domain (2^53-1 for 53 bits): it issues no more ids.
	ErrExhausted = errors.New("opaque tag has issued the last id of its domain")
	// ErrNoOwner: the tag's numbers come from one owner (an ordered or
	// capped formatted tag) and this instance serves no owned tags.
	ErrNoOwner = errors.New("tag served by one owner, which this instance cannot reach")
)

// LeftError is an Owner's refusal of more numbers than a period has left;
// nothing was taken. It is an ErrSequenceFull.
type LeftError struct{ Left int64 }

func (e *LeftError) Error() string {
	return fmt.Sprintf("%s: %d numbers left", ErrSequenceFull, e.Left)
}

// Is makes a LeftError an ErrSequenceFull.
func (e *LeftError) Is(target error) bool { return target == ErrSequenceFull }

// PeriodRowError says that a name asked for as a tag is the row of a
// period of a formatted tag (Row is RowName(Tag, Key)): its numbers are
// issued only as that tag's texts, never by their own name.
type PeriodRowError struct {
	Row, Tag, Key string
}

func (e *PeriodRowError) Error() string {
	return fmt.Sprintf("biz tag %q is the row of period %s of formatted tag %q; ask for %q", e.Row, e.Key, e.Tag, e.Tag)
}
