package storeset_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

// TestLoneStore: one store served alone is a set of one that records
// nothing: its ranges, tags, hand backs and leases are the store's own,
// taken with no class and no record of a set; a name it has is refused by
// its own words, a plain tag of it takes settings; and one store of a set
// of several is refused alone.
func TestLoneStore(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite, storetest.SQLite(t))
	s, err := storeset.Open(ctx, []storeset.Named{{Name: storeset.Lone, Store: st}}, storeset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Several() || s.HomeName() != storeset.Lone {
		t.Fatalf("several %v, home %q: want a lone store, its own home", s.Several(), s.HomeName())
	}
	if opts := s.AllocatorOptions(segment.Options{LoadTimeout: time.Second}); opts.AboveReceived || opts.LoadTimeout != time.Second {
		t.Errorf("allocator options %+v: want them as given", opts)
	}

	rows, settings := s.Rows(st)
	if _, err := rows.CreateTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Allocate(ctx, "orders", 0)
	if err != nil || a.Start() != 1 || a.Step != 10 {
		t.Fatalf("first range %+v, %v: want ids 1 to 10, as the store gives them", a, err)
	}
	batch, err := s.AllocateBatch(ctx, []string{"orders", "none"})
	if err != nil || batch[0].Err != nil || batch[0].Start() != 11 || !errors.Is(batch[1].Err, segment.ErrUnknownTag) {
		t.Fatalf("batch %+v, %v: want ids 11 to 20, and the unknown tag refused", batch, err)
	}
	if ok, err := s.HandBack(ctx, "orders", 21, 15); err != nil || !ok {
		t.Fatalf("hand back: %v, %v", ok, err)
	}
	if got, err := st.Tag(ctx, "orders"); err != nil || got.MaxID != 15 {
		t.Errorf("row after the hand back %+v, %v: want max_id 15", got, err)
	}
	if r, err := st.Record(ctx); err != nil || r.State != storeset.Unjoined {
		t.Errorf("record %+v, %v: a lone store records no set", r, err)
	}

	if _, err := rows.CreateOrderedTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 10}); !errors.Is(err, segment.ErrTagExists) {
		t.Errorf("an ordered tag named as a plain one: %v; want ErrTagExists", err)
	}
	format := bizid.Settings{Tag: "orders", Format: "O-{seq}", Reset: bizid.Never}
	if err := settings.SetTagSettings(ctx, bizid.Settings{}, false, format); err != nil {
		t.Errorf("a plain tag of a lone store given a format: %v", err)
	}

	l, err := s.Leases().Acquire(ctx, "host-1", 1024, time.Minute)
	if err != nil || l.WorkerID < 0 || l.WorkerID >= 1024 {
		t.Fatalf("lease %+v, %v", l, err)
	}
	if err := s.Leases().Release(ctx, l, 0); err != nil {
		t.Errorf("release: %v", err)
	}
}

// TestLoneStoreOfASet: one store of a set of several, given alone, is
// refused: its rows hand out ids of the set's space, which the other
// stores hand out too.
func TestLoneStoreOfASet(t *testing.T) {
	ctx := context.Background()
	a := storetest.Open(t, store.SQLite, storetest.SQLite(t))
	b := storetest.Open(t, store.SQLite, storetest.SQLite(t))
	if _, err := storeset.Init(ctx, []storeset.Named{{Name: "a", Store: a}, {Name: "b", Store: b}}); err != nil {
		t.Fatal(err)
	}
	if _, err := storeset.Open(ctx, []storeset.Named{{Name: storeset.Lone, Store: b}}, storeset.Options{}); !errors.Is(err, storeset.ErrSetMember) {
		t.Fatalf("a store of a set alone: %v; want ErrSetMember", err)
	}
}

// TestCheckFree: a name any store of the set has is taken for a tag of
// the home store alone, even when the home store lacks it; one no store
// has is free.
func TestCheckFree(t *testing.T) {
	ctx := context.Background()
	a := storetest.Open(t, store.SQLite, storetest.SQLite(t))
	b := storetest.Open(t, store.SQLite, storetest.SQLite(t))
	named := []storeset.Named{{Name: "a", Store: a}, {Name: "b", Store: b}}
	set, err := storeset.Init(ctx, named)
	if err != nil {
		t.Fatal(err)
	}
	s, err := storeset.Open(ctx, named, storeset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := a
	if set.HomeName() == "a" {
		other = b
	}
	if _, err := other.CreateTag(ctx, segment.Tag{Name: "stray", MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckFree(ctx, "stray"); !errors.Is(err, segment.ErrTagExists) {
		t.Errorf("a name another store has: %v; want ErrTagExists", err)
	}
	if err := s.CheckFree(ctx, "free"); err != nil {
		t.Errorf("a name no store has: %v", err)
	}
}
