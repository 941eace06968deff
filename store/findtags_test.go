package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestFindTags: one read answers which names have a row of exactly that
// name; spellings a collation would match are not found.
func TestFindTags(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := b.store(t)
		ctx := context.Background()
		createTag(t, s, "orders", 1, 10)
		createTag(t, s, "订单", 1, 10)
		names := []string{"orders", "ORDERS", "Orders", "orders ", "ordérs", "订单", "nope"}
		for i := range 600 { // more than a MySQL IN list usually holds in one plan
			names = append(names, fmt.Sprintf("random-%d", i))
		}
		found, err := s.FindTags(ctx, names)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(found)
		if want := []string{"orders", "订单"}; !slices.Equal(found, want) {
			t.Fatalf("FindTags = %q, want %q", found, want)
		}
		if found, err := s.FindTags(ctx, nil); err != nil || len(found) != 0 {
			t.Fatalf("FindTags(nil) = %q, %v", found, err)
		}
	})
}

// TestFindTagsLatin1: a name a latin1 table cannot hold is not found, and
// does not hide the names beside it.
func TestFindTagsLatin1(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, store.MySQL, storetest.MySQL(t))
	if _, err := s.DB().ExecContext(ctx, "ALTER TABLE leaf_alloc CONVERT TO CHARACTER SET latin1"); err != nil {
		t.Fatal(err)
	}
	createTag(t, s, "été", 1, 10)
	createTag(t, s, "orders", 1, 10)
	found, err := s.FindTags(ctx, []string{"订单", "été", "orders", "ORDERS", "été订单"})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	if want := []string{"orders", "été"}; !slices.Equal(found, want) {
		t.Fatalf("FindTags = %q, want %q", found, want)
	}
}
