package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// TestAllocateBatchIn: one call answers each tag as AllocateIn(ctx, tag,
// 0, floor, c, version) would, in the order asked, with the max_id each
// row was found at; under another set version it hands out nothing.
func TestAllocateBatchIn(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s, other := b.store(t), b.store(t)
		set, err := storeset.Init(ctx, []storeset.Named{{Name: "a", Store: s}, {Name: "b", Store: other}})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := set.Class("a")
		createTag(t, s, "low", 1, 100)                       // below the floor
		createTag(t, s, "high", set.Floor+set.Block-30, 100) // cut short at its block's end
		createTag(t, s, "floored", 1, 100)
		if _, err := s.DB().ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('zero', 1, 0)"); err != nil {
			t.Fatal(err)
		}
		tags := []string{"low", "nope", "high", "floored", "zero"}
		floors := []int64{0, 0, 0, set.Floor + 3*set.Block, 0}
		if _, err := s.AllocateBatchIn(ctx, tags, floors, c, set.Version+1); !errors.Is(err, storeset.ErrSetChanged) {
			t.Fatalf("under another version: %v, want ErrSetChanged", err)
		}
		got, err := s.AllocateBatchIn(ctx, tags, floors, c, set.Version)
		if err != nil {
			t.Fatal(err)
		}
		edge, first := set.Floor+set.Block, max(set.Floor, 1)
		want := []struct {
			start, end, found int64
			err               error
		}{
			{start: first, end: first + 100, found: 1},
			{err: segment.ErrUnknownTag},
			{start: edge - 30, end: edge, found: edge - 30},
			{start: set.Floor + 4*set.Block, end: set.Floor + 4*set.Block + 100, found: 1}, // block 3 is b's
			{err: segment.ErrMisconfigured},
		}
		for i, w := range want {
			r := got[i]
			if w.err != nil {
				if !errors.Is(r.Err, w.err) {
					t.Errorf("%s: %+v, want %v", tags[i], r, w.err)
				}
				continue
			}
			if r.Err != nil || r.Start() != w.start || r.MaxID != w.end || r.Found != w.found || r.DBStep != 100 {
				t.Errorf("%s: %+v, want [%d, %d) found at %d", tags[i], r, w.start, w.end, w.found)
			}
			row, err := s.Tag(ctx, tags[i])
			if err != nil || row.MaxID != w.end {
				t.Errorf("row %s: %+v, %v; want max_id %d", tags[i], row, err, w.end)
			}
		}
		if _, err := s.AllocateBatchIn(ctx, []string{"low", "low"}, []int64{0, 0}, c, set.Version); err == nil {
			t.Error("a name asked twice: no error")
		}
	})
}

// TestAllocateBatchInDurable: a store that requires durability refuses a
// batch of a class while its database can forget a commit, as it refuses
// every other range.
func TestAllocateBatchInDurable(t *testing.T) {
	ctx := context.Background()
	s, err := store.OpenSQLiteSynchronous(ctx, filepath.Join(t.TempDir(), "leaf.db"), store.Options{RequireDurable: true}, "NORMAL")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	createTag(t, s, "t", 1, 10)
	c := segment.Class{N: 1}
	if _, err := s.AllocateBatchIn(ctx, []string{"t"}, []int64{0}, c, 1); !errors.Is(err, store.ErrNotDurable) {
		t.Fatalf("AllocateBatchIn on a database that can forget: %v, want ErrNotDurable", err)
	}
	if row, err := s.Tag(ctx, "t"); err != nil || row.MaxID != 1 {
		t.Fatalf("row after a refused batch: %+v, %v", row, err)
	}
}
