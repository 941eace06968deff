package storeset

import (
	"context"
	"errors"
	"fmt"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// HomeRows are the rows of the home store that the tag administration
// writes beside leaf_alloc's: ordered tags, and the settings of formatted
// and opaque tags (store.Store implements it).
type HomeRows interface {
	CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error)
	CreateSpecialTag(ctx context.Context, t segment.Tag, s bizid.Settings) (segment.Tag, error)
	SetTagSettings(ctx context.Context, old bizid.Settings, had bool, s bizid.Settings) error
	TagSettings(ctx context.Context) ([]bizid.Settings, error)
	LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error)
}

// TagRows are where tags are created and changed, by leaf serve's admin
// calls and by leaf tag add alike (service.TagRows and OrderedTagRows):
// a plain tag in every store of the set, each numbering it in its own
// class; an ordered one in the home store alone, once no store of the set
// has its name.
type TagRows struct {
	s    *Stores
	home HomeRows
}

// SettingsRows keep the settings of formatted and opaque tags in the home
// store (service.SettingsRows): such a tag is created only when no store
// of the set has its name, and a plain tag of a set, whose numbers come
// from every store, never takes settings.
type SettingsRows struct {
	HomeRows
	s *Stores
}

// Rows are the set's tag rows and settings, with home the home store.
func (s *Stores) Rows(home HomeRows) (TagRows, SettingsRows) {
	return TagRows{s: s, home: home}, SettingsRows{HomeRows: home, s: s}
}

func (r TagRows) CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	return r.s.CreateTag(ctx, t)
}

func (r TagRows) UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error) {
	return r.s.UpdateTag(ctx, name, u)
}

func (r TagRows) Tag(ctx context.Context, name string) (segment.Tag, error) {
	return r.s.Tag(ctx, name)
}

func (r TagRows) Tags(ctx context.Context) ([]segment.Tag, error) { return r.s.Tags(ctx) }

func (r TagRows) CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	if err := r.s.CheckFree(ctx, t.Name); err != nil {
		return segment.Tag{}, err
	}
	return r.home.CreateOrderedTag(ctx, t)
}

func (r SettingsRows) CreateSpecialTag(ctx context.Context, t segment.Tag, set bizid.Settings) (segment.Tag, error) {
	if err := r.s.CheckFree(ctx, t.Name); err != nil {
		return segment.Tag{}, err
	}
	return r.HomeRows.CreateSpecialTag(ctx, t, set)
}

func (r SettingsRows) SetTagSettings(ctx context.Context, old bizid.Settings, had bool, set bizid.Settings) error {
	if !had && r.s.Several() {
		return fmt.Errorf("%w: with several stores a plain tag's numbers come from every store, each in its own part of the number space, while a formatted tag's come from the home store alone: create a new tag", bizid.ErrFixed)
	}
	return r.HomeRows.SetTagSettings(ctx, old, had, set)
}

// CheckFree refuses a name that a store of the set has: a tag that lives
// in the home store alone (ordered, formatted, opaque) must have no row of
// its name in another store, which would number it in its class. Every
// store must answer: one that does not may hold a plain tag of the name,
// whose ids the new tag would issue again. A lone store refuses a name it
// has by itself.
func (s *Stores) CheckFree(ctx context.Context, name string) error {
	if !s.Several() {
		return nil
	}
	for _, m := range s.members {
		_, err := m.st.Tag(ctx, name)
		switch {
		case err == nil:
			return fmt.Errorf("create tag %q: %w", name, segment.ErrTagExists)
		case !errors.Is(err, segment.ErrUnknownTag):
			return fmt.Errorf("create tag %q: store %q did not answer, and may have a tag of this name: %w", name, m.name, err)
		}
	}
	return nil
}
