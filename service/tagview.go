package service

import (
	"context"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// TagView is a tag as the admin calls show it.
type TagView struct {
	segment.Tag
	// Ordered is set in the answer of a creation of an ordered tag, and
	// for every formatted tag served by one owner (ordered, or of a
	// capped format).
	Ordered bool
	// The settings of a formatted or opaque tag; empty for a plain one.
	// A formatted tag shows its reset, and its zone (UTC when none was
	// given).
	Format       string
	Reset        string
	TimeZone     string
	Opaque       int
	KeyID        string
	PrunedBefore string
}

func viewOf(t segment.Tag, set bizid.Settings, has bool) TagView {
	v := TagView{Tag: t}
	if !has {
		return v
	}
	v.Format, v.TimeZone, v.Opaque, v.KeyID, v.PrunedBefore = set.Format, set.TimeZone, set.OpaqueBits, set.KeyID, set.PrunedBefore
	v.Ordered = set.Owned()
	if set.Formatted() {
		v.Reset = string(set.Reset)
		if v.TimeZone == "" {
			v.TimeZone = "UTC"
		}
	}
	return v
}

// view is t with its settings when it has some. A failed read of them
// shows the tag without.
func (a *TagAdmin) view(ctx context.Context, t segment.Tag) TagView {
	if a.Settings == nil {
		return viewOf(t, bizid.Settings{}, false)
	}
	rows, err := a.Settings.LookupTags(ctx, []string{t.Name})
	r := rows[t.Name]
	return viewOf(t, r.Settings, err == nil && r.Kind == bizid.Special)
}
