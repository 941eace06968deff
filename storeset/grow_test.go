package storeset_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// TestAddAndRetire: a store added gets the members' plain tags, never what
// lives in the home store alone; a store holding such rows is refused as a
// member other than the home, at Init as at Add; a member is not added
// twice, and the last store is not retired.
func TestAddAndRetire(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, store.SQLite, 4)
	a, b, c, d := dbs[0], dbs[1], dbs[2], dbs[3]
	if _, err := c.CreateOrderedTag(ctx, segment.Tag{Name: "seq", MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := storeset.Init(ctx, namedOf(a, c)); !errors.Is(err, storeset.ErrMismatch) || !strings.Contains(err.Error(), `store "c" holds`) {
		t.Fatalf("Init with c holding an ordered tag = %v", err)
	}
	if _, err := storeset.Init(ctx, namedOf(a, b)); err != nil {
		t.Fatal(err)
	}
	createTag(t, dbs[:2], "orders", 1, 10)
	if _, err := a.CreateOrderedTag(ctx, segment.Tag{Name: "ordered", MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storeset.Add(ctx, namedOf(a, b, c), "c"); !errors.Is(err, storeset.ErrMismatch) || !strings.Contains(err.Error(), `store "c" holds`) {
		t.Fatalf("Add of c holding an ordered tag = %v", err)
	}
	set, copied, err := storeset.Add(ctx, namedOf(a, b, d), "d")
	if err != nil || !slices.Equal(set.Names(), []string{"a", "b", "d"}) || len(copied) != 1 || copied[0].Name != "orders" || copied[0].Step != 10 {
		t.Fatalf("Add of d = %v, %+v, %v; want a set of a, b, d and orders copied", set.Names(), copied, err)
	}
	if _, err := d.Tag(ctx, "ordered"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("the ordered tag in the store added: %v", err)
	}
	if _, _, err := storeset.Add(ctx, namedOf(a, b, d), "d"); err == nil || !strings.Contains(err.Error(), "in the set already") {
		t.Fatalf("Add of a member = %v", err)
	}
	if _, err := storeset.Retire(ctx, namedOf(a, b, d), "c", false); err == nil || !strings.Contains(err.Error(), "not in the set") {
		t.Fatalf("Retire of a store not in the set = %v", err)
	}
	if _, err := storeset.Retire(ctx, namedOf(a, b, d), "b", false); err != nil {
		t.Fatal(err)
	}
	if _, err := storeset.Retire(ctx, namedOf(a, d), "d", false); err != nil {
		t.Fatal(err)
	}
	if _, err := storeset.Retire(ctx, namedOf(a), "a", false); err == nil || !strings.Contains(err.Error(), "last of the set") {
		t.Fatalf("Retire of the last store = %v", err)
	}
}
