package bizid

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // a tag's zone is found on a machine without a zone database too
)

// Settings are what a formatted or opaque tag stores beside its
// leaf_alloc row, in leaf_tag_format.
type Settings struct {
	Tag      string
	Format   string // "" for a tag that is only opaque
	Reset    Reset  // Never unless Format is set
	TimeZone string // IANA name; "" is UTC
	// OpaqueBits is 63 or 53 for an opaque tag, 0 otherwise; KeyID is the
	// fingerprint of its key.
	OpaqueBits int
	KeyID      string
	// PrunedBefore is the first period key whose row is kept: every
	// period before it has been pruned and is closed. "" when none was.
	PrunedBefore string
	// Ordered: the tag's numbers are issued by one owner at a time, in
	// order across the fleet (the tag has the lease row of an ordered
	// tag). A capped format is served so whether or not it is set.
	Ordered bool
}

// MaxTagLen is the longest name of a formatted tag with a reset: its
// period rows' names (tag@20261123) must fit leaf_alloc.biz_tag, 128
// characters.
const MaxTagLen = 128 - 1 - 8

// PeriodKey reports whether key, the part after RowSep of a row's name
// (SplitRowName), is a period key of this tag: the tag is formatted, resets,
// and its periods' keys have key's length. The row tag@key then numbers
// that period, and is served only as the tag's texts.
func (s Settings) PeriodKey(key string) bool {
	r, err := ParseReset(string(s.Reset))
	return err == nil && s.Formatted() && r != Never && len(key) == r.KeyLen()
}

// Formatted reports whether the tag's ids are texts.
func (s Settings) Formatted() bool { return s.Format != "" }

// Owned reports whether the tag's numbers come from one owner at a time
// (Tag.Owned): it is ordered, or its format is capped ({seq:N!}).
func (s Settings) Owned() bool {
	if s.Ordered {
		return true
	}
	if !s.Formatted() {
		return false
	}
	t, err := ParseTemplate(s.Format)
	if err != nil {
		return false
	}
	_, capped := t.SeqWidth()
	return capped
}

// Opaque reports whether the tag's ids are opaque numbers.
func (s Settings) Opaque() bool { return s.OpaqueBits != 0 }

// Location is the tag's time zone.
func (s Settings) Location() (*time.Location, error) {
	if s.TimeZone == "" || s.TimeZone == "UTC" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(s.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("%w: unknown time zone %q (an IANA name such as Asia/Shanghai)", ErrInvalidFormat, s.TimeZone)
	}
	return loc, nil
}

// Validate checks settings about to be stored: a template that cannot
// repeat a text under its reset and zone (Template.Check), or an opaque
// width, one of them and not both; and a tag whose name does not end in a
// space, for MySQL compares names with trailing spaces ignored and the
// settings would be keyed as another tag's. The error wraps
// ErrInvalidFormat.
func (s Settings) Validate() error {
	if strings.HasSuffix(s.Tag, " ") {
		return fmt.Errorf("%w: a tag whose name ends in a space takes no settings: MySQL compares names with trailing spaces ignored, so they would be keyed as those of %q", ErrInvalidFormat, strings.TrimRight(s.Tag, " "))
	}
	if _, err := ParseReset(string(s.Reset)); err != nil {
		return err
	}
	if s.TimeZone == "Local" {
		return fmt.Errorf("%w: time zone Local is each machine's own zone, so instances in other zones would issue other dates and periods at the same instant: give an IANA name such as Asia/Shanghai, or UTC", ErrInvalidFormat)
	}
	loc, err := s.Location()
	if err != nil {
		return err
	}
	switch {
	case s.Formatted() && s.Opaque():
		return fmt.Errorf("%w: a tag is formatted or opaque, not both", ErrInvalidFormat)
	case s.Ordered && s.Opaque():
		return fmt.Errorf("%w: an opaque tag is not ordered: its ids hide their order; give ordered to a formatted or plain tag", ErrInvalidFormat)
	case s.Opaque():
		if s.OpaqueBits != Bits63 && s.OpaqueBits != Bits53 {
			return fmt.Errorf("%w: opaque ids have 63 or 53 bits, not %d", ErrInvalidFormat, s.OpaqueBits)
		}
		if s.Reset != "" && s.Reset != Never || s.TimeZone != "" {
			return fmt.Errorf("%w: reset and time_zone belong to a format", ErrInvalidFormat)
		}
		return nil
	case !s.Formatted():
		if s.Reset != "" && s.Reset != Never || s.TimeZone != "" {
			return fmt.Errorf("%w: reset and time_zone need a format", ErrInvalidFormat)
		}
		// Settings with neither would make a special tag with nothing
		// to issue its ids by ("format": "" given to the API).
		_, err := ParseTemplate(s.Format)
		return err
	}
	t, err := ParseTemplate(s.Format)
	if err != nil {
		return err
	}
	r, _ := ParseReset(string(s.Reset))
	if r != Never && len([]rune(s.Tag)) > MaxTagLen {
		return fmt.Errorf("%w: a tag that resets has at most %d characters, so that its period rows' names fit leaf_alloc", ErrInvalidFormat, MaxTagLen)
	}
	return t.Check(r, loc)
}

// CheckChange reports whether a tag whose settings are old (had says
// whether it has any) may take the settings next, which Validate must
// also pass. Only changes that cannot repeat an id are allowed:
//   - a plain tag may become formatted when the format has a literal that
//     is not a digit, so that no text equals a number it issued;
//   - a formatted tag may change its time zone: the period rows are named
//     by their keys, so a period numbered under the old zone continues
//     where it stopped;
//
// and nothing else: a new format or reset could show again a text already
// issued, and opaque ids of a tag that issued plain numbers could equal
// them. The error wraps ErrFixed.
func CheckChange(old Settings, had bool, next Settings) error {
	if had {
		if old.Opaque() || next.Opaque() {
			return fmt.Errorf("%w: an opaque tag keeps its settings; create a new tag", ErrFixed)
		}
		if old.Format != next.Format || old.Reset != next.Reset {
			return fmt.Errorf("%w: the format and reset of a formatted tag cannot change, for texts under new ones could repeat texts already issued; only time_zone can; create a new tag", ErrFixed)
		}
		return nil
	}
	if next.Opaque() {
		return fmt.Errorf("%w: a tag that issued plain numbers cannot become opaque, for an opaque id could equal a number it issued; create a new tag", ErrFixed)
	}
	t, err := ParseTemplate(next.Format)
	if err != nil {
		return err
	}
	for _, p := range t.pieces {
		if p.kind == literal && strings.Trim(p.text, "0123456789") != "" {
			return nil
		}
	}
	return fmt.Errorf("%w: a tag that issued plain numbers can only take a format with a literal that is not a digit (as ORD- in ORD-{seq}), so that no text equals a number it issued", ErrFixed)
}
