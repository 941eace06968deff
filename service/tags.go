package service

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// TagRows are the rows of leaf_alloc the admin calls manage.
type TagRows interface {
	CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error)
	UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error)
	Tag(ctx context.Context, name string) (segment.Tag, error)
	Tags(ctx context.Context) ([]segment.Tag, error)
}

// OrderedTagRows creates ordered tags; the TagRows of a server that can
// serve them implements it.
type OrderedTagRows interface {
	CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error)
}

// SettingsRows keep the settings of formatted and opaque tags (store.Store
// implements it).
type SettingsRows interface {
	CreateSpecialTag(ctx context.Context, t segment.Tag, s bizid.Settings) (segment.Tag, error)
	SetTagSettings(ctx context.Context, old bizid.Settings, had bool, s bizid.Settings) error
	TagSettings(ctx context.Context) ([]bizid.Settings, error)
	// LookupTags reads what names are (TagKinds): an update reads the settings
	// it changes from the store, not from what this instance last read.
	TagKinds
}

// OrderedAdded is told of an ordered tag created here (sequence.Sequencer
// is), so that it is served at once.
type OrderedAdded interface {
	AddedOrdered(ctx context.Context, tag string)
}

// TagAdmin is what the admin calls of both edges do with tags: create one
// (plain, ordered, or formatted or opaque), change it, read it, with the
// same rules and the same error codes whatever the protocol. The edges
// read their requests into its arguments and show its TagView.
type TagAdmin struct {
	// Rows are leaf_alloc's rows.
	Rows TagRows
	// Settings keep the settings of formatted and opaque tags, and Kinds
	// records what kind each tag is; settings are refused when Settings is
	// nil or Kinds has no compiler.
	Settings SettingsRows
	Kinds    *Registry
	// Ordered is told of the ordered tags created; nil refuses them (the
	// instance runs without sequences).
	Ordered OrderedAdded
	// Log receives the trail of the changes made, at INFO; nil keeps
	// none.
	Log *slog.Logger
	// Bounds keep the tags' declared bounds; nil refuses them. BoundSet,
	// unless nil, is told of each bound set, to hold here at once.
	Bounds   TagBounds
	BoundSet func(tag string, bound int64)

	nonASCII foldedTags // the tags of names not ASCII, for new ASCII names
}

// Off is the error of an admin call for tags where their administration
// is off (no rows to keep), nil where it is on.
func (a *TagAdmin) Off() error {
	if a.Rows == nil {
		return TagsOff()
	}
	return nil
}

// Named is the check of an admin call for the tag name, before anything
// else of the call is read: administration off, then a name that cannot be
// a tag's. Get and Update make it; an edge that reads a body asks it first.
func (a *TagAdmin) Named(name string) error {
	if err := a.Off(); err != nil {
		return err
	}
	return segment.ValidateTag(name)
}

// refuseSettings refuses settings where they cannot be kept here.
func (a *TagAdmin) refuseSettings() error {
	if a.compiler() == nil {
		return bizOff()
	}
	return nil
}

// compiler compiles settings here, nil where they are refused.
func (a *TagAdmin) compiler() Compiler {
	if a.Settings == nil || a.Kinds == nil {
		return nil
	}
	return a.Kinds.Compiler()
}

// refuseOwned refuses settings that make a tag served by one owner at a time
// (ordered, or a capped format) where this server serves no such tags.
func (a *TagAdmin) refuseOwned(set bizid.Settings) error {
	if a.Ordered != nil || !set.Owned() {
		return nil
	}
	if set.Ordered {
		return Errorf(InvalidRequest, "ordered tags are not served here: they need sequences on")
	}
	return Errorf(InvalidRequest, "a capped format ({seq:N!}) is served by one owner at a time, so that every instance can issue its numbers to the last: it needs sequences on")
}

// bizOff refuses settings and reveals where this server serves no
// formatted or opaque tags.
func bizOff() error {
	return Errorf(InvalidRequest, "formatted and opaque tags are not enabled on this server (they need segment mode on)")
}

// NewTag is an admin call's new tag as given: Step and MaxID nil when
// the call left them out (segment.DefaultStep and 1, the same defaults
// on every edge), Settings the members of a formatted or opaque tag given.
type NewTag struct {
	Name        string
	Step, MaxID *int64
	Description string
	Ordered     bool
	Settings    TagSettings
}

// tag is n's row, with the defaults of what was left out.
func (n NewTag) tag() segment.Tag {
	t := segment.Tag{Name: n.Name, Step: segment.DefaultStep, MaxID: 1, Description: n.Description}
	if n.Step != nil {
		t.Step = *n.Step
	}
	if n.MaxID != nil {
		t.MaxID = *n.MaxID
	}
	return t
}

// Create creates n: ordered, or formatted or opaque when settings are
// given, else plain, by the rule of NewTagSettings.
func (a *TagAdmin) Create(ctx context.Context, n NewTag) (TagView, error) {
	v, err := a.create(ctx, n)
	if err == nil {
		trail{a.Log}.tagCreated(ctx, v)
	}
	return v, err
}

func (a *TagAdmin) create(ctx context.Context, n NewTag) (TagView, error) {
	if err := a.Off(); err != nil {
		return TagView{}, err
	}
	t, ordered, g := n.tag(), n.Ordered, n.Settings
	if g.given() {
		if err := a.refuseSettings(); err != nil {
			return TagView{}, err
		}
	}
	keyID := ""
	if c := a.compiler(); c != nil {
		keyID, _ = c.CurrentKeyID()
	}
	set, special, err := NewTagSettings(t, ordered, g, keyID)
	if err == nil {
		err = a.refuseAlikeTag(ctx, t.Name)
	}
	if err == nil && !ascii(t.Name) {
		defer a.nonASCII.forget()
	}
	switch {
	case err != nil:
		return TagView{}, err
	case special:
		return a.createSpecial(ctx, t, set)
	case ordered:
		oa, ok := a.Rows.(OrderedTagRows)
		if !ok || a.Ordered == nil {
			return TagView{}, Errorf(InvalidRequest, "ordered tags are not served here: they need sequences on")
		}
		created, err := oa.CreateOrderedTag(ctx, t)
		if err != nil {
			return TagView{}, WithTag(t.Name, err)
		}
		if a.Kinds != nil {
			a.Kinds.Ordered(created.Name)
		}
		a.Ordered.AddedOrdered(ctx, created.Name)
		v := viewOf(created, bizid.Settings{}, false)
		v.Ordered = true
		return v, nil
	}
	created, err := a.Rows.CreateTag(ctx, t)
	if err != nil {
		return TagView{}, WithTag(t.Name, err)
	}
	return viewOf(created, bizid.Settings{}, false), nil
}

// withKey gives an opaque tag the fingerprint of the current key.
func (a *TagAdmin) withKey(set *bizid.Settings) error {
	if !set.Opaque() {
		return nil
	}
	id, ok := a.compiler().CurrentKeyID()
	if !ok {
		return Errorf(InvalidFormat, "opaque tags need a key: set --opaque-key (LEAF_OPAQUE_KEY) on every instance")
	}
	set.KeyID = id
	return nil
}

// createSpecial creates a formatted or opaque tag.
func (a *TagAdmin) createSpecial(ctx context.Context, t segment.Tag, set bizid.Settings) (TagView, error) {
	if err := a.refuseOwned(set); err != nil {
		return TagView{}, err
	}
	created, err := a.Settings.CreateSpecialTag(ctx, t, set)
	if err != nil {
		return TagView{}, WithTag(t.Name, err)
	}
	a.Kinds.Put(set)
	return viewOf(created, set, true), nil
}

// Update changes tag name by u and the settings given. A change of
// settings comes first: a plain tag given a format whose texts hold a
// non-digit, or a formatted tag's new zone (bizid.CheckChange says what
// may change).
func (a *TagAdmin) Update(ctx context.Context, name string, u segment.TagUpdate, g TagSettings) (TagView, error) {
	if err := a.Named(name); err != nil {
		return TagView{}, err
	}
	set, err := g.settings()
	if err != nil {
		return TagView{}, err
	}
	rows := u.Step != nil || u.MaxID != nil || u.Description != nil
	if !rows && !g.given() && u.Bound == nil {
		return TagView{}, Errorf(InvalidRequest, "nothing to update: give step, max_id, description, max, format, reset, time_zone or opaque")
	}
	if err := u.Validate(); err != nil {
		return TagView{}, err
	}
	if u.Bound != nil && a.Bounds == nil {
		return TagView{}, Errorf(InvalidRequest, "bounds are not kept here (they need segment mode on)")
	}
	before, err := a.Get(ctx, name)
	if err != nil {
		return TagView{}, err
	}
	if g.given() {
		if err := a.updateSettings(ctx, name, set, g); err != nil {
			return TagView{}, WithTag(name, err)
		}
	}
	if u.Bound != nil {
		if err := a.Bounds.SetTagBound(ctx, name, *u.Bound); err != nil {
			return TagView{}, WithTag(name, err)
		}
		if a.BoundSet != nil {
			a.BoundSet(name, *u.Bound)
		}
	}
	var t segment.Tag
	if rows {
		t, err = a.Rows.UpdateTag(ctx, name, u)
	} else {
		t, err = a.Rows.Tag(ctx, name)
	}
	if err != nil {
		return TagView{}, WithTag(name, err)
	}
	after := a.view(ctx, t)
	trail{a.Log}.tagChanged(ctx, before, after)
	return after, nil
}

// updateSettings applies the settings an update gave: settings for a
// plain tag, or a formatted tag's new zone.
func (a *TagAdmin) updateSettings(ctx context.Context, name string, given bizid.Settings, g TagSettings) error {
	if err := a.refuseSettings(); err != nil {
		return err
	}
	rows, err := a.Settings.LookupTags(ctx, []string{name})
	if err != nil {
		return err
	}
	row := rows[name]
	if row.Kind == bizid.NoRow {
		return segment.ErrUnknownTag
	}
	had, old := row.Kind == bizid.Special, row.Settings
	if !had && old.Ordered {
		// An ordered tag is served by its owner as plain numbers; it never
		// takes a format or opaque ids (docs/business-ids.md).
		return fmt.Errorf("%w: the tag is ordered, and an ordered tag cannot be made formatted or opaque", bizid.ErrFixed)
	}
	if !had {
		old = bizid.Settings{}
	}
	next := given
	next.Tag = name
	if had {
		next = g.over(old, next)
	} else if err := a.withKey(&next); err != nil {
		return err
	}
	// What may change at all comes first: a new format of a formatted
	// tag is format_fixed whether or not it would be valid.
	if err := bizid.CheckChange(old, had, next); err != nil {
		return err
	}
	if err := next.Validate(); err != nil {
		return err
	}
	if err := a.refuseOwned(next); err != nil {
		return err
	}
	if err := a.Settings.SetTagSettings(ctx, old, had, next); err != nil {
		return err
	}
	a.Kinds.Put(next)
	return nil
}

// Get returns tag name with its settings.
func (a *TagAdmin) Get(ctx context.Context, name string) (TagView, error) {
	if err := a.Named(name); err != nil {
		return TagView{}, err
	}
	t, err := a.Rows.Tag(ctx, name)
	if err != nil {
		return TagView{}, WithTag(name, err)
	}
	return a.view(ctx, t), nil
}

// List returns every tag with its settings.
func (a *TagAdmin) List(ctx context.Context) ([]TagView, error) {
	if err := a.Off(); err != nil {
		return nil, err
	}
	tags, err := a.Rows.Tags(ctx)
	if err != nil {
		return nil, err
	}
	sets := map[string]bizid.Settings{}
	if a.Settings != nil {
		all, err := a.Settings.TagSettings(ctx)
		if err != nil {
			return nil, err
		}
		for _, set := range all {
			sets[set.Tag] = set
		}
	}
	var bounds map[string]int64
	if a.Bounds != nil {
		if bounds, err = a.Bounds.TagBounds(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]TagView, 0, len(tags))
	for _, t := range tags {
		set, ok := sets[t.Name]
		v := viewOf(t, set, ok)
		v.Bound = bounds[t.Name]
		out = append(out, v)
	}
	return out, nil
}

// Revealed is an opaque id of a tag and the number it was made from.
type Revealed struct {
	Tag    string
	ID     int64
	Number int64
}

// Reveal turns id, an id of the opaque tag, back into the number it was
// made from. A tag that is not opaque, or has no row, is invalid_request;
// an id outside the tag's domain invalid_id, and so is an id the tag never
// issued: its number is not below the row's max_id, read now, so no range
// of the row ever held it (a forged or mistyped id decodes to a number of
// the whole domain, far above). A tag whose key this instance lacks is
// unavailable.
func (a *TagAdmin) Reveal(ctx context.Context, tag string, id int64) (Revealed, error) {
	if a.compiler() == nil {
		return Revealed{}, bizOff()
	}
	if err := segment.ValidateTag(tag); err != nil {
		return Revealed{}, err
	}
	if id < 0 {
		return Revealed{}, Errorf(InvalidID, "id must be a non-negative 64-bit integer")
	}
	e, err := a.Kinds.kind(ctx, tag)
	if err != nil {
		return Revealed{}, WithTag(tag, err)
	}
	if e.biz == nil {
		return Revealed{}, WithTag(tag, fmt.Errorf("%w: %q", bizid.ErrNotOpaque, tag))
	}
	n, err := e.biz.Reveal(id)
	if err != nil {
		return Revealed{}, WithTag(tag, err)
	}
	row, err := a.Rows.Tag(ctx, tag)
	if err != nil {
		return Revealed{}, WithTag(tag, err)
	}
	if n < 1 || n >= row.MaxID {
		return Revealed{}, Errorf(InvalidID, "id %d was never issued by biz tag %q", id, tag)
	}
	return Revealed{Tag: tag, ID: id, Number: n}, nil
}
