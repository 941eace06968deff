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
	// Bound is the largest id the tag may issue, 0 when it declared none.
	Bound int64
}

// TagBounds keep the bounds tags declare (store.Store implements it).
type TagBounds interface {
	TagBounds(ctx context.Context) (map[string]int64, error)
	TagBound(ctx context.Context, tag string) (int64, error)
	SetTagBound(ctx context.Context, tag string, bound int64) error
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
	var v TagView
	if a.Settings == nil {
		v = viewOf(t, bizid.Settings{}, false)
	} else {
		rows, err := a.Settings.LookupTags(ctx, []string{t.Name})
		r := rows[t.Name]
		v = viewOf(t, r.Settings, err == nil && r.Kind == bizid.Special)
	}
	if a.Bounds != nil {
		v.Bound, _ = a.Bounds.TagBound(ctx, t.Name) // a failed read shows none
	}
	return v
}
