package app

import (
	"context"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// tagRows are the rows of leaf_alloc the tag administration creates plain
// and ordered tags in.
type tagRows interface {
	service.TagRows
	service.OrderedTagRows
}

// TagRows are where tags are created and changed, by leaf serve's admin
// calls and by leaf tag add alike, with the rows of their settings. Over
// one store (set nil) they are home's own. Over a set, a plain tag is
// created in every store of the set, each numbering it in its own class,
// and an ordered, formatted or opaque tag in the home store alone, once no
// store of the set has its name; a plain tag of a set never takes
// settings.
func TagRows(home *store.Store, set *storeset.Stores) (tagRows, service.SettingsRows) {
	if set == nil {
		return home, home
	}
	return setRows{Stores: set, home: home}, homeSettings{Store: home, set: set}
}

// setRows are the tag rows of a set: plain tags in every store, ordered
// ones in the home store.
type setRows struct {
	*storeset.Stores
	home *store.Store
}

func (r setRows) CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	if err := CheckFreeInSet(ctx, r.Stores, t.Name); err != nil {
		return segment.Tag{}, err
	}
	return r.home.CreateOrderedTag(ctx, t)
}
