package storeset_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

// firstRequests asks for one id of every tag at once, from as many
// goroutines, as clients of an instance that just started do, and returns
// each tag's id or error.
func firstRequests(a *segment.Allocator, tags []string) (map[string]int64, map[string]error) {
	var (
		mu   sync.Mutex
		ids  = map[string]int64{}
		errs = map[string]error{}
		wg   sync.WaitGroup
	)
	for _, tag := range tags {
		wg.Go(func() {
			id, err := a.Next(context.Background(), tag)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[tag] = err
				return
			}
			ids[tag] = id
		})
	}
	wg.Wait()
	return ids, errs
}

// TestBatchFirstLoads: the first loads of many tags taken together cost a
// transaction per store, not one per tag: the striped rows' in the first
// store that is up, in its class, the homed rows' in the home store with
// no class. A tag the store refuses is taken one by one: a row missing in
// that store but found in another is copied there; a name no store has is
// unknown. A row found behind its mark is moved past the failover jump.
// When the first store does not answer, the batch goes to the next.
func TestBatchFirstLoads(t *testing.T) {
	each(t, func(t *testing.T, kind string) {
		ctx := context.Background()
		dbs := databases(t, kind, 3)
		var plain []string
		for i := range 60 {
			plain = append(plain, fmt.Sprintf("t%02d", i))
			createTag(t, dbs, plain[i], 1, 100)
		}
		set, err := storeset.Init(ctx, namedOf(dbs...))
		if err != nil {
			t.Fatal(err)
		}
		createTag(t, dbs[1:], "late", 1, 100) // created while a did not answer
		special := map[string]bool{}
		for i := range 5 {
			tag := fmt.Sprintf("f%d", i)
			special[tag] = true
			if _, err := dbs[0].CreateSpecialTag(ctx, segment.Tag{Name: tag, MaxID: 1, Step: 10},
				bizid.Settings{Tag: tag, Format: "F-{seq}", Reset: bizid.Never}); err != nil {
				t.Fatal(err)
			}
		}
		// t00's row in a went back in time: the marks the others keep of it
		// say it was at 5,000.
		rec, err := dbs[0].Record(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dbs[1:] {
			if err := d.RecordMarks(ctx, rec.StoreID, map[string]int64{"t00": 5000}); err != nil {
				t.Fatal(err)
			}
		}
		var stale atomic.Int32
		_, a := instance(t, namedOf(dbs...), storeset.Options{OnStale: func(store, tag string, mark int64) {
			if store == "a" && tag == "t00" {
				stale.Add(1)
			}
		}})
		tags := append(append([]string{}, plain...), "late", "nope", "f0", "f1", "f2", "f3", "f4")
		ids, errs := firstRequests(a, tags)
		if !errors.Is(errs["nope"], segment.ErrUnknownTag) || len(errs) != 1 {
			t.Fatalf("errors %v; want nope's, ErrUnknownTag, alone", errs)
		}
		ca, _ := set.Class("a")
		for _, tag := range append(plain, "late") {
			if !ca.Contains(ids[tag]) {
				t.Errorf("%s: first id %d, not of a's class", tag, ids[tag])
			}
		}
		if ids["t00"] < 5000+storeset.DefaultFailoverJump || stale.Load() != 1 {
			t.Errorf("t00, behind its mark: first id %d, found stale %d times; want one past the jump, once", ids["t00"], stale.Load())
		}
		for tag := range special {
			if ids[tag] != 1 {
				t.Errorf("%s: first number %d, want 1 (the home store's own numbering)", tag, ids[tag])
			}
		}
		if _, err := dbs[0].Tag(ctx, "late"); err != nil {
			t.Errorf("late was not copied to a: %v", err)
		}
		// One by one: t00 past its jump, and late (missing in a, one try
		// before the copy and one after). The batches are as many as the
		// waves in which the calls reach the allocator: a few on a quiet
		// machine, more on a busy one, where the 67 goroutines start
		// spread out; one load per tag would be 67.
		if n, b := dbs[0].singles.Load(), dbs[0].batches.Load(); n > 3 || b > 10 {
			t.Errorf("store a: %d calls of one tag, %d batches for %d first loads; want them batched", n, b, len(tags))
		}
		if n := dbs[1].singles.Load() + dbs[1].batches.Load() + dbs[2].singles.Load() + dbs[2].batches.Load(); n != 0 {
			t.Errorf("%d loads went to b and c while a answered", n)
		}

		// a does not answer: a fresh instance's first loads go to b, in
		// a few transactions.
		dbs[0].down.Store(true)
		_, a2 := instance(t, namedOf(dbs...))
		ids, errs = firstRequests(a2, append(plain[1:], "nope"))
		// A name no store that answers has may be a row of the home store
		// alone (a formatted or opaque tag): unavailable while a, the
		// home, does not answer, as the look-up of names says; unknown once
		// it does.
		if !errors.Is(errs["nope"], segment.ErrStoreUnavailable) || errors.Is(errs["nope"], segment.ErrUnknownTag) {
			t.Errorf("nope with a down: %v, want ErrStoreUnavailable", errs["nope"])
		}
		cb, _ := set.Class("b")
		for _, tag := range plain[1:] {
			if errs[tag] != nil || !cb.Contains(ids[tag]) {
				t.Errorf("%s with a down: %d, %v; want an id of b's class", tag, ids[tag], errs[tag])
			}
		}
		// As for a above: a few waves on a quiet machine, more on a busy
		// one; one load per tag would be 59.
		if n, b := dbs[1].singles.Load(), dbs[1].batches.Load(); n != 0 || b > 10 {
			t.Errorf("store b: %d calls of one tag, %d batches; want them batched", n, b)
		}
		dbs[0].down.Store(false)
		if _, err := a2.Next(context.Background(), "nope"); !errors.Is(err, segment.ErrUnknownTag) {
			t.Errorf("nope once a answers: %v, want ErrUnknownTag", err)
		}
	})
}

// TestBatchStaleHomeRow: a homed row found behind its mark in a batch is
// moved past the failover jump, as a load of one homed row is.
func TestBatchStaleHomeRow(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, "sqlite", 2)
	if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"f", "g"} {
		if _, err := dbs[0].CreateSpecialTag(ctx, segment.Tag{Name: tag, MaxID: 1, Step: 10},
			bizid.Settings{Tag: tag, Format: "F-{seq}", Reset: bizid.Never}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := dbs[0].Record(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := dbs[1].RecordMarks(ctx, rec.StoreID, map[string]int64{"f": 700}); err != nil {
		t.Fatal(err)
	}
	storetest.RewindTag(t, dbs[0].Store, "g", 1)
	_, a := instance(t, namedOf(dbs...))
	ids, errs := firstRequests(a, []string{"f", "g"})
	if len(errs) != 0 || ids["f"] < 700+storeset.DefaultFailoverJump || ids["g"] != 1 {
		t.Fatalf("first numbers %v (%v); want f past its mark and the jump, g at 1", ids, errs)
	}
}

// TestStaleRetakeFails: a row found behind its mark is moved by the range
// that found it, to the mark or above; when the range past the failover
// jump then cannot be taken (the store stops answering in between), the
// next load must still start past the jump, although the row is no longer
// behind its mark: the ids just above the mark may be ones the store gave
// before it went back. One load at a time, in a batch, and for a row of
// the home store.
func TestStaleRetakeFails(t *testing.T) {
	const mark = 5000
	for _, tc := range []struct {
		name string
		load func(s *storeset.Stores, tag string) (segment.Allocation, error)
		home bool
	}{
		{"one by one", func(s *storeset.Stores, tag string) (segment.Allocation, error) {
			return s.AllocateAbove(context.Background(), tag, 0, 0)
		}, false},
		{"in a batch", func(s *storeset.Stores, tag string) (segment.Allocation, error) {
			res, err := s.AllocateBatch(context.Background(), []string{tag})
			if err != nil {
				return segment.Allocation{}, err
			}
			return res[0].Allocation, res[0].Err
		}, false},
		{"a homed row in a batch", func(s *storeset.Stores, tag string) (segment.Allocation, error) {
			if _, err := s.LookupTags(context.Background(), []string{tag}); err != nil {
				return segment.Allocation{}, err
			}
			res, err := s.AllocateBatch(context.Background(), []string{tag})
			if err != nil {
				return segment.Allocation{}, err
			}
			return res[0].Allocation, res[0].Err
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dbs := databases(t, "sqlite", 2)
			if !tc.home {
				createTag(t, dbs, "t", 1, 100)
			}
			if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
				t.Fatal(err)
			}
			if tc.home {
				if _, err := dbs[0].CreateSpecialTag(ctx, segment.Tag{Name: "t", MaxID: 1, Step: 100},
					bizid.Settings{Tag: "t", Format: "F-{seq}", Reset: bizid.Never}); err != nil {
					t.Fatal(err)
				}
			}
			rec, err := dbs[0].Record(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := dbs[1].RecordMarks(ctx, rec.StoreID, map[string]int64{"t": mark}); err != nil {
				t.Fatal(err)
			}
			dbs[0].failAt.Store(mark + storeset.DefaultFailoverJump) // the range past the jump fails, once
			dbs[1].noRanges.Store(true)                              // and b gives none: a serves again
			var stale atomic.Int32
			s, err := storeset.Open(ctx, namedOf(dbs...), storeset.Options{OnStale: func(string, string, int64) { stale.Add(1) }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var a segment.Allocation
			for try := 0; try < 3; try++ {
				if a, err = tc.load(s, "t"); err == nil {
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Start() < mark+storeset.DefaultFailoverJump || stale.Load() != 1 {
				t.Fatalf("after the range past the jump failed, the next starts at %d (found stale %d times); want at or above %d, once",
					a.Start(), stale.Load(), mark+storeset.DefaultFailoverJump)
			}
		})
	}
}
