package storeset_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

// next takes n ids of tag from a, in order, records them, and returns the
// last.
func next(t *testing.T, a *segment.Allocator, tag string, n int, into *ids) int64 {
	t.Helper()
	last := int64(0)
	for range n {
		id, err := a.Next(context.Background(), tag)
		if err != nil {
			t.Fatalf("Next(%q): %v", tag, err)
		}
		if id <= last {
			t.Fatalf("Next(%q) = %d after %d", tag, id, last)
		}
		last = id
		into.add(id)
	}
	return last
}

// stopCleanly hands back what a did not use, as a clean stop of leaf serve
// does, checks that every tag's tail went back, and closes s. It waits for
// the loads in flight first: one that ends after the stop began moves the
// row past the tail (nothing is handed back then, as with one store).
func stopCleanly(t *testing.T, s *storeset.Stores, a *segment.Allocator, tags int) {
	t.Helper()
	testkit.WaitFor(t, 0, "the loads in flight", func() bool {
		loading := false
		for _, st := range a.Snapshot() {
			loading = loading || st.Loading
		}
		return !loading
	})
	got := a.HandBack(context.Background())
	if len(got) != tags {
		t.Fatalf("HandBack = %+v, want %d tags", got, tags)
	}
	for _, r := range got {
		if r.Err != nil || r.Moved {
			t.Fatalf("HandBack of %s = %+v", r.Tag, r)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHandBackInSet: a clean stop hands the unused tail of each tag's last
// range back to the store that gave it, a striped row's to its store, a
// homed row's to the home store, and sets back the marks the other stores
// keep of them: the next instance continues right after the last id
// issued, from the same store, and does not take the row for one gone back
// in time. A store restored from a copy is still found out.
func TestHandBackInSet(t *testing.T) {
	each(t, func(t *testing.T, kind string) {
		ctx := context.Background()
		dbs := databases(t, kind, 3)
		createTag(t, dbs, "t", 1, 100)
		set, err := storeset.Init(ctx, namedOf(dbs...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dbs[0].CreateSpecialTag(ctx, segment.Tag{Name: "fmt", MaxID: 1, Step: 10},
			bizid.Settings{Tag: "fmt", Format: "F-{seq}", Reset: bizid.Never}); err != nil {
			t.Fatal(err)
		}
		backup, err := dbs[0].Tag(ctx, "t") // a copy of store a, before any id
		if err != nil {
			t.Fatal(err)
		}
		var stale atomic.Int32
		opts := storeset.Options{OnStale: func(store, tag string, mark int64) { stale.Add(1) }}
		var all, formatted ids

		// The first instance's marks are written before it stops, the
		// second's are not: the hand back sets back the marks written
		// and those still to write.
		often, never := opts, opts
		often.MarkInterval, never.MarkInterval = 10*time.Millisecond, time.Hour
		s1, a1 := instance(t, namedOf(dbs...), often)
		last := next(t, a1, "t", 150, &all)
		lastF := next(t, a1, "fmt", 15, &formatted)
		marksWritten(t, dbs, "t", "fmt")
		stopCleanly(t, s1, a1, 2)

		s2, a2 := instance(t, namedOf(dbs...), never)
		if id := next(t, a2, "t", 1, &all); id != last+1 {
			t.Fatalf("after a clean stop the next id of t is %d, want %d", id, last+1)
		}
		if c, _ := set.Class("a"); !c.Contains(last + 1) {
			t.Fatalf("id %d is not of store a", last+1)
		}
		if id := next(t, a2, "fmt", 1, &formatted); id != lastF+1 {
			t.Fatalf("after a clean stop the next formatted number is %d, want %d", id, lastF+1)
		}
		last = next(t, a2, "t", 40, &all)
		stopCleanly(t, s2, a2, 2)

		// An instance that prefers b takes its ranges from b's class, and
		// hands them back to b.
		s3, a3 := instance(t, namedOf(dbs[1], dbs[2], dbs[0]), opts)
		lastB := next(t, a3, "t", 30, &all)
		if c, _ := set.Class("b"); !c.Contains(lastB) {
			t.Fatalf("id %d is not of store b", lastB)
		}
		stopCleanly(t, s3, a3, 1)
		s4, a4 := instance(t, namedOf(dbs[1], dbs[2], dbs[0]), opts)
		if id := next(t, a4, "t", 1, &all); id != lastB+1 {
			t.Fatalf("after a clean stop the next id of t from b is %d, want %d", id, lastB+1)
		}
		stopCleanly(t, s4, a4, 1)
		if n := stale.Load(); n != 0 {
			t.Fatalf("a store was taken %d times for one gone back in time after a clean stop", n)
		}

		// Store a restored from the copy: found out, and jumped.
		storetest.RewindTag(t, dbs[0].Store, "t", backup.MaxID)
		_, a5 := instance(t, namedOf(dbs...), opts)
		if id := next(t, a5, "t", 1, &all); id <= last {
			t.Fatalf("after a stale restore the next id of t is %d, at or below %d", id, last)
		}
		if n := stale.Load(); n != 1 {
			t.Fatalf("the restored store was found %d times, want 1", n)
		}
		if all.dups != 0 || formatted.dups != 0 {
			t.Fatalf("%d ids and %d formatted numbers issued twice", all.dups, formatted.dups)
		}
	})
}

// marksWritten waits until stores b and c hold the marks of store a's rows
// of tags where they are.
func marksWritten(t *testing.T, dbs []*db, tags ...string) {
	t.Helper()
	ctx := context.Background()
	rec, err := dbs[0].Record(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 0, "the marks of a's rows in b and c", func() bool {
		for _, tag := range tags {
			row, err := dbs[0].Tag(ctx, tag)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dbs[1:] {
				if marks, err := d.Marks(ctx, rec.StoreID, []string{tag}); err != nil || marks[tag] != row.MaxID {
					return false
				}
			}
		}
		return true
	})
}

// TestHandBackAcrossBlocks: the allocator counts its two halves as one run
// when the second starts where the first ends; in a set that happens where
// a range of one store was cut short at its block's end and the next came
// from the store of the next block. Each part goes back to its own store,
// and each row stays in its class.
func TestHandBackAcrossBlocks(t *testing.T) {
	each(t, func(t *testing.T, kind string) {
		ctx := context.Background()
		dbs := databases(t, kind, 2)
		createTag(t, dbs, "t", 1, 100)
		set, err := storeset.Init(ctx, namedOf(dbs...))
		if err != nil {
			t.Fatal(err)
		}
		edge := set.Floor + set.Block // the end of a's first block, the start of b's
		storetest.RewindTag(t, dbs[0].Store, "t", edge-50)
		s, a := instance(t, namedOf(dbs...))
		var all ids
		if id := next(t, a, "t", 1, &all); id != edge-50 {
			t.Fatalf("first id %d, want %d", id, edge-50)
		}
		dbs[0].down.Store(true) // the next half comes from b
		next(t, a, "t", 10, &all)
		testkit.WaitFor(t, 0, "the next half, from b", func() bool {
			st, _ := a.State("t")
			return st.Segments[1-st.Current] != nil && !st.Loading
		})
		st, _ := a.State("t")
		if half := st.Segments[1-st.Current]; half.Start != edge {
			t.Fatalf("the next half starts at %d, want %d", half.Start, edge)
		}
		dbs[0].down.Store(false)
		stopCleanly(t, s, a, 1)
		for i, want := range []int64{edge - 50 + 11, edge} {
			row, err := dbs[i].Tag(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			if row.MaxID != want {
				t.Fatalf("store %s's row after the hand back: %d, want %d", dbs[i].name, row.MaxID, want)
			}
		}
	})
}

// TestHandBackSharedMark: on MySQL "u" and "u " (two rows of a table
// under a NO PAD collation) share one mark; setting it back for one could
// take it below the other's. Such a tag keeps its mark after a hand back:
// the next instance moves its row past the failover jump, a gap and no
// duplicate, while a tag of its own mark continues where it stopped. The
// rule is the set's, whatever the store: SQLite shows it.
func TestHandBackSharedMark(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, store.SQLite, 2)
	createTag(t, dbs, "own", 1, 100)
	createTag(t, dbs, "u", 1, 100)
	for _, d := range dbs {
		if _, err := d.DB().ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('u ', 1, 100)"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	var stale atomic.Int32
	opts := storeset.Options{MarkInterval: 10 * time.Millisecond, OnStale: func(store, tag string, mark int64) { stale.Add(1) }}
	var own, u ids // the ids of each tag
	s1, a1 := instance(t, namedOf(dbs...), opts)
	lastOwn := next(t, a1, "own", 5, &own)
	lastU := next(t, a1, "u", 5, &u)
	marksWritten(t, dbs, "own", "u")
	stopCleanly(t, s1, a1, 2)
	_, a2 := instance(t, namedOf(dbs...), opts)
	if id := next(t, a2, "own", 1, &own); id != lastOwn+1 {
		t.Fatalf("own: %d after a clean stop, want %d", id, lastOwn+1)
	}
	if id := next(t, a2, "u", 1, &u); id < lastU+storeset.DefaultFailoverJump {
		t.Fatalf("u: %d after a clean stop, want one past the jump from %d", id, lastU)
	}
	if n := stale.Load(); n != 1 || own.dups+u.dups != 0 {
		t.Fatalf("%d rows found behind their marks, want 1 (u); %d ids twice", n, own.dups+u.dups)
	}
}
