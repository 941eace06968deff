package storeset_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/storeset"
)

func (f faulty) LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error) {
	if f.down.Load() {
		return nil, errUnreachable
	}
	return f.Store.LookupTags(ctx, names)
}

// TestHomedRows: a formatted and an opaque tag, made in the home store
// alone, are numbered there by every instance, whichever store it prefers,
// with no class: no other store ever gets their rows, no id is issued
// twice, and while the home store is down they are not served from the
// others. The plain tag beside them is striped as before.
func TestHomedRows(t *testing.T) {
	each(t, func(t *testing.T, kind string) {
		ctx := context.Background()
		dbs := databases(t, kind, 3)
		createTag(t, dbs, "plain", 1, 50)
		set, err := storeset.Init(ctx, namedOf(dbs...))
		if err != nil {
			t.Fatal(err)
		}
		if set.HomeName() != "a" || !strings.Contains(set.Describe(), ", home") {
			t.Fatalf("the home of a new set is %q, want the first store:\n%s", set.HomeName(), set.Describe())
		}
		for _, s := range []bizid.Settings{
			{Tag: "fmt", Format: "F-{seq}", Reset: bizid.Never},
			{Tag: "opq", OpaqueBits: bizid.Bits63, KeyID: "k"},
		} {
			if _, err := dbs[0].CreateSpecialTag(ctx, segment.Tag{Name: s.Tag, MaxID: 1, Step: 10}, s); err != nil {
				t.Fatal(err)
			}
		}
		_, a1 := instance(t, namedOf(dbs...))
		s2, a2 := instance(t, namedOf(dbs[1], dbs[2], dbs[0]))
		var (
			mu  sync.Mutex
			got = map[string]map[int64]bool{}
		)
		var wg sync.WaitGroup
		for _, a := range []*segment.Allocator{a1, a2} {
			for _, tag := range []string{"fmt", "opq"} {
				wg.Go(func() {
					for range 60 {
						id, err := a.Next(ctx, tag)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						if got[tag] == nil {
							got[tag] = map[int64]bool{}
						}
						if got[tag][id] {
							t.Errorf("%s: %d twice", tag, id)
						}
						got[tag][id] = true
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		for _, tag := range []string{"fmt", "opq"} {
			// The home store's row, whatever its steps: an id of another
			// store would lie in a block of that store's class, the first
			// of which begins at the set's first block past its floor.
			for id := range got[tag] {
				if id >= set.Floor+set.Block {
					t.Fatalf("%s: id %d is not of the home store's own numbering (no class)", tag, id)
				}
			}
			if !s2.Homed(tag) {
				t.Fatalf("%s is not homed", tag)
			}
			for _, d := range dbs[1:] {
				if _, err := d.Tag(ctx, tag); !errors.Is(err, segment.ErrUnknownTag) {
					t.Fatalf("store %s has a row of %s: %v", d.name, tag, err)
				}
			}
		}
		if id, err := a2.Next(ctx, "plain"); err != nil || id < storeset.DefaultBlock {
			t.Fatalf("plain tag from store b: %d, %v; want one of b's class", id, err)
		}

		// The home store down: a fresh instance serves the plain tag from
		// the others, never the homed ones, which are unavailable, not
		// unknown. A running instance's read of the tag list fails rather
		// than leave them out, so it keeps them and serves what it holds.
		dbs[0].down.Store(true)
		_, a3 := instance(t, namedOf(dbs[1], dbs[2], dbs[0]))
		if _, err := a3.Next(ctx, "fmt"); err == nil || errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("a homed tag with its home store down: %v, want unavailable", err)
		}
		if err := a2.Refresh(ctx); !errors.Is(err, segment.ErrStoreUnavailable) {
			t.Fatalf("the tag list read with the home store down: %v, want unavailable", err)
		}
		for _, tag := range []string{"fmt", "opq"} {
			if _, err := a2.Next(ctx, tag); errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("%s unknown to a running instance once its home store is down: %v", tag, err)
			}
		}
		if _, err := a3.Next(ctx, "plain"); err != nil {
			t.Fatalf("plain tag with the home store down: %v", err)
		}
		dbs[0].down.Store(false)
		if _, err := a3.Next(ctx, "fmt"); err != nil {
			t.Fatalf("a homed tag once its home answers again: %v", err)
		}
		for _, d := range dbs[1:] {
			if _, err := d.Tag(ctx, "fmt"); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("store %s got a row of fmt: %v", d.name, err)
			}
		}
	})
}

// TestHomeNotRetired: the home store cannot be retired while it holds
// what lives there; an empty one can, and the first store of the next set
// is the home then. A set recorded without a home has the store of class 0
// as its home, which the next change records.
func TestHomeNotRetired(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, "sqlite", 3)
	if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	next, err := storeset.Change(ctx, namedOf(dbs...), []string{"b", "a"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if next.Home != "a" {
		t.Fatalf("home after a change that moved classes: %q", next.Home)
	}
	if _, err := dbs[0].CreateOrderedTag(ctx, segment.Tag{Name: "o", MaxID: 1, Step: 10}); err != nil {
		t.Fatal(err)
	}
	_, err = storeset.Change(ctx, namedOf(dbs...), []string{"b"}, false)
	if err == nil || !strings.Contains(err.Error(), "home") {
		t.Fatalf("retiring the home store that holds an ordered tag: %v", err)
	}
	fresh := databases(t, "sqlite", 2)
	if _, err := storeset.Init(ctx, namedOf(fresh...)); err != nil {
		t.Fatal(err)
	}
	moved, err := storeset.Change(ctx, namedOf(fresh...), []string{"b"}, false)
	if err != nil || moved.Home != "b" {
		t.Fatalf("retiring an empty home: %+v, %v; want b the home", moved, err)
	}
	old := storeset.Set{Members: []storeset.Member{{Name: "x", Class: 1}, {Name: "y", Class: 0}}}
	if old.HomeName() != "y" {
		t.Fatalf("home of a set without one: %q, want the store of class 0", old.HomeName())
	}
}

// TestNewestOneRule: the set in force is the newest set the records hold,
// by one rule (storeset.Newest) for every reader: retired stores are left
// out when asked, stores of no set always, and records of two fleets are
// not one set, whether an instance opens them or a change reads them.
func TestNewestOneRule(t *testing.T) {
	a := storeset.Set{Fleet: "f", Version: 3, Block: storeset.DefaultBlock, WorkerSlots: 16,
		Members: []storeset.Member{{Name: "a", Store: "sa", Class: 0, Slot: 0}}}
	b := a
	b.Version = 4
	other := a
	other.Fleet, other.Version = "g", 9
	rec := func(s storeset.Set, st storeset.State) storeset.Record {
		return storeset.Record{Version: s.Version, State: st, Set: s.Encode()}
	}
	for _, tc := range []struct {
		name    string
		recs    []storeset.Record
		errs    []error
		active  bool
		want    int64
		wantErr error
	}{
		{"the highest version", []storeset.Record{rec(a, storeset.Active), rec(b, storeset.Active)}, nil, false, 4, nil},
		{"a retired record counts for a reader", []storeset.Record{rec(a, storeset.Active), rec(b, storeset.Retired)}, nil, false, 4, nil},
		{"not for a change", []storeset.Record{rec(a, storeset.Active), rec(b, storeset.Retired)}, nil, true, 3, nil},
		{"a store that did not answer", []storeset.Record{rec(a, storeset.Active), rec(b, storeset.Active)}, []error{nil, errUnreachable}, false, 3, nil},
		{"a store of no set", []storeset.Record{rec(a, storeset.Active), {State: storeset.Unjoined}}, nil, false, 3, nil},
		{"two fleets", []storeset.Record{rec(a, storeset.Active), rec(other, storeset.Active)}, nil, false, 0, storeset.ErrMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.errs
			if errs == nil {
				errs = make([]error, len(tc.recs))
			}
			got, _, err := storeset.Newest(tc.recs, errs, tc.active)
			if !errors.Is(err, tc.wantErr) || err == nil && got.Version != tc.want {
				t.Fatalf("Newest = version %d, %v; want %d, %v", got.Version, err, tc.want, tc.wantErr)
			}
		})
	}
	// An instance given stores of two fleets refuses them, as a change
	// does.
	ctx := context.Background()
	dbs := databases(t, "sqlite", 2)
	for _, d := range dbs {
		if _, err := storeset.Init(ctx, namedOf(d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := storeset.Open(ctx, namedOf(dbs...), storeset.Options{}); !errors.Is(err, storeset.ErrMismatch) || !strings.Contains(err.Error(), "two fleets") {
		t.Fatalf("Open over two fleets: %v", err)
	}
	if _, err := storeset.Change(ctx, namedOf(dbs...), []string{"a", "b"}, false); !errors.Is(err, storeset.ErrMismatch) || !strings.Contains(err.Error(), "two fleets") {
		t.Fatalf("Change over two fleets: %v", err)
	}
}

// meeting is a store whose LookupTags returns only once every store of the
// meeting has been asked: it shows that the set asks them at once. asked
// counts the calls.
type meeting struct {
	faulty
	asked *atomic.Int32
	all   chan struct{} // closed when every store was asked
	n     int32
}

func (m meeting) LookupTags(ctx context.Context, tags []string) (map[string]bizid.Row, error) {
	if m.asked.Add(1) == m.n {
		close(m.all)
	}
	select {
	case <-m.all:
	case <-time.After(5 * time.Second):
		return nil, errors.New("the other stores were not asked meanwhile")
	}
	return m.faulty.LookupTags(ctx, tags)
}

// TestLookupAsksTheHome: what the tags of a batch are is asked of
// the home store alone while it is up (no other store holds what it
// finds); while it is not, of every store that is up, at once, so that a
// batch of first loads waits for the slowest store (another region's,
// say), not for the sum of them.
func TestLookupAsksTheHome(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, "sqlite", 3)
	createTag(t, dbs, "t", 1, 10)
	if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	if _, err := dbs[0].CreateSpecialTag(ctx, segment.Tag{Name: "f", MaxID: 1, Step: 10},
		bizid.Settings{Tag: "f", Format: "F-{seq}", Reset: bizid.Never}); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	all := make(chan struct{})
	named := namedOf(dbs...)
	for i, d := range dbs {
		named[i].Store = meeting{faulty: faulty{d}, asked: &asked, all: all, n: 2}
	}
	asked.Store(1) // the home store alone is asked: it meets nobody
	s, err := storeset.Open(ctx, named, storeset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.LookupTags(ctx, []string{"t", "f"})
	if err != nil || rows["f"].Kind != bizid.Special || !rows["t"].Plain() || !s.Homed("f") || s.Homed("t") {
		t.Fatalf("LookupTags with the home store up = %v, %v; want f special and homed, t plain", rows, err)
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("%d stores asked with the home store up, want the home store alone", n-1)
	}

	asked.Store(0)
	all = make(chan struct{})
	for i, d := range dbs {
		named[i].Store = meeting{faulty: faulty{d}, asked: &asked, all: all, n: 2}
	}
	dbs[0].down.Store(true) // the home store does not answer: b and c are asked, at once
	s2, err := storeset.Open(ctx, named, storeset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.LookupTags(ctx, []string{"t"}); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("%d stores asked with the home store down, want b and c", n)
	}
}
