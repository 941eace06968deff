package storeset_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/storeset"
)

// TestTagsWithAStoreDown: the tags of a set while one store does not
// answer. A plain tag is created in every store that answers, listed,
// found and changed from them; but without the home store, which alone
// holds the formatted, opaque and ordered tags, no tag is created (its
// name may be such a tag's) and the list is refused rather than short;
// and a tag of the home store alone is created only while every store
// answers, for a store that does not may hold a plain tag of that name,
// numbered in its class.
func TestTagsWithAStoreDown(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, "sqlite", 3)
	if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	s, err := storeset.Open(ctx, namedOf(dbs...), storeset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if s.HomeName() != "a" {
		t.Fatalf("home %q, want a", s.HomeName())
	}
	home, other := dbs[0], dbs[2]
	if _, err := home.CreateSpecialTag(ctx, segment.Tag{Name: "fmt", MaxID: 1, Step: 10}, bizid.Settings{Tag: "fmt", Format: "F-{seq}", Reset: bizid.Never}); err != nil {
		t.Fatal(err)
	}
	tags, _ := s.Rows(home.Store)
	if _, err := tags.CreateTag(ctx, segment.Tag{Name: "fmt", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrTagExists) {
		t.Errorf("a plain tag named as the home store's formatted one: %v; want ErrTagExists", err)
	}

	// A store other than home down: plain tags go on in the others.
	other.down.Store(true)
	if _, err := tags.CreateTag(ctx, segment.Tag{Name: "plain", MaxID: 1, Step: 10}); err != nil {
		t.Fatalf("a plain tag with c down: %v", err)
	}
	if _, err := dbs[1].Tag(ctx, "plain"); err != nil {
		t.Errorf("the plain tag is not in b: %v", err)
	}
	if all, err := tags.Tags(ctx); err != nil || !slices.ContainsFunc(all, func(t segment.Tag) bool { return t.Name == "plain" }) {
		t.Errorf("Tags with c down = %v, %v", all, err)
	}
	if found, err := s.FindTags(ctx, []string{"plain", "fmt", "nope"}); err != nil || len(found) != 2 {
		t.Errorf("FindTags with c down = %v, %v; want plain and fmt", found, err)
	}
	// A change reaches the stores that answer, and says which did not.
	if u, err := tags.UpdateTag(ctx, "plain", segment.TagUpdate{Step: ptr(int64(20))}); !errors.Is(err, segment.ErrStoreUnavailable) || u.Step != 20 {
		t.Errorf("UpdateTag with c down = %+v, %v; want b changed and c named", u, err)
	}
	if b, err := dbs[1].Tag(ctx, "plain"); err != nil || b.Step != 20 {
		t.Errorf("b after the change = %+v, %v", b, err)
	}
	if _, err := tags.UpdateTag(ctx, "nope", segment.TagUpdate{Step: ptr(int64(20))}); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Errorf("UpdateTag of a tag only c may have = %v, want ErrStoreUnavailable", err)
	}
	other.down.Store(false)
	if _, err := tags.UpdateTag(ctx, "nope", segment.TagUpdate{Step: ptr(int64(20))}); !errors.Is(err, segment.ErrUnknownTag) {
		t.Errorf("UpdateTag of no tag = %v, want ErrUnknownTag", err)
	}
	if _, err := other.CreateTag(ctx, segment.Tag{Name: "stray", MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	other.down.Store(true)
	if _, err := tags.CreateOrderedTag(ctx, segment.Tag{Name: "stray", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Errorf("an ordered tag whose name c, down, may hold: %v; want ErrStoreUnavailable", err)
	}
	if _, err := tags.CreateOrderedTag(ctx, segment.Tag{Name: "ord", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Errorf("an ordered tag with c down: %v; want ErrStoreUnavailable", err)
	}
	other.down.Store(false)
	if _, err := tags.CreateOrderedTag(ctx, segment.Tag{Name: "stray", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrTagExists) {
		t.Errorf("an ordered tag named as c's plain one: %v; want ErrTagExists", err)
	}
	if _, err := tags.CreateOrderedTag(ctx, segment.Tag{Name: "ord", MaxID: 1, Step: 10}); err != nil {
		t.Errorf("an ordered tag with every store up: %v", err)
	}

	// The home store down: no tag is created, the list is refused.
	home.down.Store(true)
	t.Cleanup(func() { home.down.Store(false) })
	for _, name := range []string{"fmt", "new"} {
		if _, err := tags.CreateTag(ctx, segment.Tag{Name: name, MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrStoreUnavailable) {
			t.Errorf("plain tag %s with the home store down: %v; want ErrStoreUnavailable", name, err)
		}
	}
	if _, err := dbs[1].Tag(ctx, "fmt"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Errorf("a plain row of the formatted tag's name was made in b: %v", err)
	}
	if _, err := tags.Tags(ctx); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Errorf("Tags with the home store down = %v; want ErrStoreUnavailable", err)
	}
	if _, err := s.FindTags(ctx, []string{"fmt"}); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Errorf("FindTags of a home row with the home store down = %v; want ErrStoreUnavailable", err)
	}
	if _, err := tags.Tag(ctx, "fmt"); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Errorf("Tag of a home row with the home store down = %v; want ErrStoreUnavailable", err)
	}
}

func ptr[T any](v T) *T { return &v }
