package service

import (
	"math"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// TagSettings are the settings of a formatted or opaque tag that an admin
// call gave: a nil member was not given.
type TagSettings struct {
	Format, Reset, TimeZone *string
	Opaque                  *int64
}

// given reports whether any member was given.
func (g TagSettings) given() bool {
	return g.Format != nil || g.Reset != nil || g.TimeZone != nil || g.Opaque != nil
}

// settings are the members given, with a formatted tag's reset never
// when none was given.
func (g TagSettings) settings() (bizid.Settings, error) {
	var set bizid.Settings
	if g.Format != nil {
		set.Format = *g.Format
	}
	if g.Reset != nil {
		set.Reset = bizid.Reset(*g.Reset)
	}
	if g.TimeZone != nil {
		set.TimeZone = *g.TimeZone
	}
	if g.Opaque != nil {
		if bits := *g.Opaque; bits != bizid.Bits63 && bits != bizid.Bits53 {
			return set, Errorf(InvalidRequest, "opaque must be 63 or 53 (the bits of the ids)")
		}
		set.OpaqueBits = int(*g.Opaque)
	}
	if set.Formatted() && set.Reset == "" {
		set.Reset = bizid.Never
	}
	return set, nil
}

// NewTagSettings is the one rule of a new tag's settings, which the admin
// calls of both edges and `leaf tag add` apply alike: t must be a valid
// tag; with settings given (special), a formatted or opaque tag, the
// reset never by default, an opaque one given keyID (the fingerprint of
// the key new opaque tags get; "" where none is configured) and a max_id
// within its bits; ordered with settings only for a formatted tag. Errors
// are the API's codes, with the message both ways answer.
func NewTagSettings(t segment.Tag, ordered bool, g TagSettings, keyID string) (set bizid.Settings, special bool, err error) {
	if set, err = g.settings(); err != nil {
		return set, false, err
	}
	if err := t.Validate(); err != nil {
		return set, false, err
	}
	if ordered && set.Opaque() {
		// An opaque tag's ids hide their order, and come from the ranges
		// of every instance (docs/business-ids.md).
		return set, false, Errorf(InvalidFormat, "an opaque tag is not ordered: its ids hide their order; give ordered to a plain or formatted tag")
	}
	if !g.given() {
		return set, false, nil
	}
	set.Tag, set.Ordered = t.Name, ordered
	if set.Opaque() {
		if keyID == "" {
			return set, true, Errorf(InvalidFormat, "opaque tags need a key: set --opaque-key (LEAF_OPAQUE_KEY) on every instance")
		}
		set.KeyID = keyID
		if top := opaqueTop(set.OpaqueBits); t.MaxID > top {
			return set, true, Errorf(InvalidFormat, "max_id %d is outside the %d bits of the tag's opaque ids (at most %d)", t.MaxID, set.OpaqueBits, top)
		}
	}
	if err := set.Validate(); err != nil {
		return set, true, WithTag(t.Name, err)
	}
	return set, true, nil
}

// opaqueTop is the largest number of an opaque tag of bits.
func opaqueTop(bits int) int64 {
	if bits >= 63 {
		return math.MaxInt64
	}
	return int64(1)<<bits - 1
}

// over is the settings an update leaves a tag with that had old: next
// (the members given) with the members not given keeping their values, and
// the key and pruned mark kept.
func (g TagSettings) over(old, next bizid.Settings) bizid.Settings {
	next.KeyID, next.PrunedBefore = old.KeyID, old.PrunedBefore
	if g.Format == nil {
		next.Format = old.Format
	}
	if g.Reset == nil {
		next.Reset = old.Reset
	}
	if g.TimeZone == nil {
		next.TimeZone = old.TimeZone
	}
	if g.Opaque == nil {
		next.OpaqueBits = old.OpaqueBits
	}
	return next
}
