package app

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// setOfTwo is a set of two fresh SQLite stores, with its home store and
// the other.
func setOfTwo(t *testing.T) (set *storeset.Stores, home, other *store.Store) {
	t.Helper()
	ctx := context.Background()
	a := storetest.Open(t, store.SQLite, storetest.SQLite(t))
	b := storetest.Open(t, store.SQLite, storetest.SQLite(t))
	named := []storeset.Named{{Name: "a", Store: a}, {Name: "b", Store: b}}
	if _, err := storeset.Init(ctx, named); err != nil {
		t.Fatal(err)
	}
	set, err := storeset.Open(ctx, named, storeset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	if set.HomeName() == "a" {
		return set, a, b
	}
	return set, b, a
}

// TestTagsOfASet: over a set of stores, a plain tag is created in every
// store (each numbers it in its own class) and served here at once; a
// formatted tag lives in the home store
// alone, and is refused while any store of the set has its name; and a
// plain tag of a set never takes settings, for its numbers come from every
// store while a formatted tag's come from the home store.
func TestTagsOfASet(t *testing.T) {
	ctx := context.Background()
	set, home, other := setOfTwo(t)
	alloc := segment.New(set, segment.Options{RefreshInterval: -1})
	t.Cleanup(func() { _ = alloc.Close() })
	tags, settings := set.Rows(home)
	rows := announcedRows{TagRows: tags, alloc: alloc}

	if _, err := rows.CreateTag(ctx, segment.Tag{Name: "plain", MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*store.Store{home, other} {
		if _, err := st.Tag(ctx, "plain"); err != nil {
			t.Errorf("the plain tag is not in every store: %v", err)
		}
	}
	if _, err := alloc.Next(ctx, "plain"); err != nil {
		t.Errorf("the plain tag is not served at once: %v", err)
	}

	format := bizid.Settings{Format: "F-{seq}", Reset: bizid.Never}
	if _, err := settings.CreateSpecialTag(ctx, segment.Tag{Name: "plain", MaxID: 1, Step: 10}, format); !errors.Is(err, segment.ErrTagExists) {
		t.Errorf("a formatted tag named as a plain one: %v; want ErrTagExists", err)
	}
	if _, err := settings.CreateSpecialTag(ctx, segment.Tag{Name: "formatted", MaxID: 1, Step: 10}, format); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Tag(ctx, "formatted"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Errorf("the formatted tag has a row outside the home store: %v", err)
	}
	given := format
	given.Tag = "plain"
	if err := settings.SetTagSettings(ctx, bizid.Settings{}, false, given); !errors.Is(err, bizid.ErrFixed) {
		t.Errorf("settings given to a plain tag of a set: %v; want bizid.ErrFixed", err)
	}
}
