package storeset_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// db is one independent database with a way to make it fail.
type db struct {
	name string
	*store.Store
	down atomic.Bool // when set, every call fails as an unreachable store would
	// singles and batches count the calls of AllocateIn and of
	// AllocateBatchIn and AllocateBatch.
	singles, batches atomic.Int32
	// failAt, when set, fails once the next call of AllocateIn or
	// AllocateAbove for a floor at or above it.
	failAt atomic.Int64
	// noRanges, when set, fails every call that takes a range, while the
	// store answers the others.
	noRanges atomic.Bool
}

// failsNow reports whether a call for floor fails now (failAt).
func (d *db) failsNow(floor int64) bool {
	at := d.failAt.Load()
	return at > 0 && floor >= at && d.failAt.CompareAndSwap(at, 0)
}

// faulty is a store that can be taken down by its test.
type faulty struct{ *db }

var errUnreachable = fmt.Errorf("%w: cut by the test", segment.ErrStoreUnavailable)

func (f faulty) AllocateIn(ctx context.Context, tag string, step, floor int64, c segment.Class, version int64) (segment.Allocation, int64, error) {
	f.singles.Add(1)
	if f.down.Load() || f.noRanges.Load() || f.failsNow(floor) {
		return segment.Allocation{}, 0, errUnreachable
	}
	return f.Store.AllocateIn(ctx, tag, step, floor, c, version)
}

func (f faulty) AllocateAbove(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	f.singles.Add(1)
	if f.down.Load() || f.noRanges.Load() || f.failsNow(floor) {
		return segment.Allocation{}, errUnreachable
	}
	return f.Store.AllocateAbove(ctx, tag, step, floor)
}

func (f faulty) AllocateBatchIn(ctx context.Context, tags []string, floors []int64, c segment.Class, version int64) ([]storeset.ClassResult, error) {
	f.batches.Add(1)
	if f.down.Load() || f.noRanges.Load() {
		return nil, errUnreachable
	}
	return f.Store.AllocateBatchIn(ctx, tags, floors, c, version)
}

func (f faulty) AllocateBatch(ctx context.Context, tags []string) ([]segment.BatchResult, error) {
	f.batches.Add(1)
	if f.down.Load() {
		return nil, errUnreachable
	}
	return f.Store.AllocateBatch(ctx, tags)
}

func (f faulty) Record(ctx context.Context) (storeset.Record, error) {
	if f.down.Load() {
		return storeset.Record{}, errUnreachable
	}
	return f.Store.Record(ctx)
}

func (f faulty) Marks(ctx context.Context, id string, tags []string) (map[string]int64, error) {
	if f.down.Load() {
		return nil, errUnreachable
	}
	return f.Store.Marks(ctx, id, tags)
}

func (f faulty) RecordMarks(ctx context.Context, id string, marks map[string]int64) error {
	if f.down.Load() {
		return errUnreachable
	}
	return f.Store.RecordMarks(ctx, id, marks)
}

func (f faulty) Tag(ctx context.Context, tag string) (segment.Tag, error) {
	if f.down.Load() {
		return segment.Tag{}, errUnreachable
	}
	return f.Store.Tag(ctx, tag)
}

func (f faulty) Tags(ctx context.Context) ([]segment.Tag, error) {
	if f.down.Load() {
		return nil, errUnreachable
	}
	return f.Store.Tags(ctx)
}

func (f faulty) FindTags(ctx context.Context, names []string) ([]string, error) {
	if f.down.Load() {
		return nil, errUnreachable
	}
	return f.Store.FindTags(ctx, names)
}

func (f faulty) CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	if f.down.Load() {
		return segment.Tag{}, errUnreachable
	}
	return f.Store.CreateTag(ctx, t)
}

func (f faulty) UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error) {
	if f.down.Load() {
		return segment.Tag{}, errUnreachable
	}
	return f.Store.UpdateTag(ctx, name, u)
}

func (d *db) named() storeset.Named {
	return storeset.Named{Name: d.name, Store: faulty{d}, Up: func() bool { return !d.down.Load() }}
}

// databases returns n fresh databases: SQLite files and, where a MySQL
// answers, MySQL databases in turn.
func databases(t *testing.T, kind string, n int) []*db {
	t.Helper()
	out := make([]*db, n)
	for i := range out {
		var s *store.Store
		if kind == store.MySQL {
			s = storetest.Open(t, store.MySQL, storetest.MySQL(t))
		} else {
			s = storetest.Open(t, store.SQLite, storetest.SQLite(t))
		}
		out[i] = &db{name: string(rune('a' + i)), Store: s}
	}
	return out
}

func namedOf(dbs ...*db) []storeset.Named {
	out := make([]storeset.Named, len(dbs))
	for i, d := range dbs {
		out[i] = d.named()
	}
	return out
}

func each(t *testing.T, fn func(t *testing.T, kind string)) {
	for _, kind := range []string{store.SQLite, store.MySQL} {
		t.Run(kind, func(t *testing.T) { fn(t, kind) })
	}
}

func createTag(t *testing.T, dbs []*db, tag string, maxID, step int64) {
	t.Helper()
	for _, d := range dbs {
		if _, err := d.CreateTag(context.Background(), segment.Tag{Name: tag, MaxID: maxID, Step: step}); err != nil {
			t.Fatal(err)
		}
	}
}

// instance is one leaf process's allocator over the set.
func instance(t *testing.T, named []storeset.Named, opts ...storeset.Options) (*storeset.Stores, *segment.Allocator) {
	t.Helper()
	var o storeset.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	s, err := storeset.Open(context.Background(), named, o)
	if err != nil {
		t.Fatal(err)
	}
	a := segment.New(s, segment.Options{AboveReceived: true, RefreshInterval: -1})
	t.Cleanup(func() {
		_ = a.Close()
		_ = s.Close()
	})
	return s, a
}

// ids collects ids and counts those seen twice.
type ids struct {
	mu   sync.Mutex
	seen map[int64]bool
	dups int
}

func (s *ids) add(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[int64]bool{}
	}
	if s.seen[id] {
		s.dups++
	}
	s.seen[id] = true
}

// take takes n ids of tag from a, in order, and records them.
func take(t *testing.T, a *segment.Allocator, tag string, n int, into *ids) {
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
}

// TestDisjointStores: the rows of three stores start at the same max_id,
// yet two instances taking ranges from all of them never hand out an id
// twice, and each store's ranges lie in its own class.
func TestDisjointStores(t *testing.T) {
	each(t, func(t *testing.T, kind string) {
		dbs := databases(t, kind, 3)
		createTag(t, dbs, "orders", 1, 1000)
		set, err := storeset.Init(context.Background(), namedOf(dbs...))
		if err != nil {
			t.Fatal(err)
		}
		if set.Version != 1 || len(set.Members) != 3 {
			t.Fatalf("set %+v", set)
		}
		var all ids
		_, a1 := instance(t, namedOf(dbs...))
		_, a2 := instance(t, namedOf(dbs[2], dbs[0], dbs[1])) // another order: another preferred store
		for round := range 6 {
			for i, d := range dbs { // every other round, one store is down
				d.down.Store(round%2 == 1 && i == round%3)
			}
			var wg sync.WaitGroup
			for _, a := range []*segment.Allocator{a1, a2} {
				wg.Go(func() { take(t, a, "orders", 700, &all) })
			}
			wg.Wait()
		}
		if all.dups != 0 {
			t.Fatalf("%d ids issued twice of %d", all.dups, len(all.seen))
		}
		for _, d := range dbs {
			d.down.Store(false)
			c, _ := set.Class(d.name)
			row, err := d.Tag(context.Background(), "orders")
			if err != nil {
				t.Fatal(err)
			}
			if row.MaxID > 1 && !c.Contains(row.MaxID-1) {
				t.Errorf("store %s's row ends at %d, outside its class %+v", d.name, row.MaxID, c)
			}
		}
	})
}

// TestOneStoreDown: while any store can serve, a store that does not
// answer costs no error.
func TestOneStoreDown(t *testing.T) {
	dbs := databases(t, store.SQLite, 3)
	createTag(t, dbs, "t", 1, 10)
	if _, err := storeset.Init(context.Background(), namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	_, a := instance(t, namedOf(dbs...))
	var all ids
	take(t, a, "t", 25, &all)
	dbs[0].down.Store(true)
	take(t, a, "t", 50, &all)
	dbs[1].down.Store(true)
	take(t, a, "t", 50, &all)
	dbs[2].down.Store(true)
	for range 30 { // buffered ids are still handed out, then a clear error
		if _, err := a.Next(context.Background(), "t"); err != nil {
			if !errors.Is(err, segment.ErrUnavailable) {
				t.Fatalf("with every store down: %v", err)
			}
			break
		}
	}
	dbs[1].down.Store(false)
	testkit.WaitFor(t, 0, "a load from the store that came back", func() bool {
		id, err := a.Next(context.Background(), "t")
		if err == nil {
			all.add(id)
		}
		return err == nil
	})
	take(t, a, "t", 50, &all)
	if all.dups != 0 {
		t.Fatalf("%d ids twice", all.dups)
	}
}

// TestConfigurationMismatch: an instance whose stores do not match the set
// the stores record refuses to start, saying what differs.
func TestConfigurationMismatch(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, store.SQLite, 4)
	if _, err := storeset.Open(ctx, namedOf(dbs[:2]...), storeset.Options{}); !errors.Is(err, storeset.ErrMismatch) ||
		!strings.Contains(err.Error(), "belong to no set") {
		t.Fatalf("before any set: %v", err)
	}
	if _, err := storeset.Init(ctx, namedOf(dbs[:3]...)); err != nil {
		t.Fatal(err)
	}
	twice := dbs[1].named()
	twice.Name = "b2"
	tests := []struct {
		name  string
		named []storeset.Named
		want  string
	}{
		{"one store fewer", namedOf(dbs[0], dbs[1]), `"c" is in the set but not configured`},
		{"one store more", namedOf(dbs...), `"d" is configured but not in the set`},
		{"one database under two names", append(namedOf(dbs[:3]...), twice), "are the same database"},
		{"names swapped", []storeset.Named{{Name: "a", Store: dbs[1].Store}, {Name: "b", Store: dbs[0].Store}, dbs[2].named()}, `"a" is database`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := storeset.Open(ctx, tt.named, storeset.Options{})
			if !errors.Is(err, storeset.ErrMismatch) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %v, want ErrMismatch saying %q", err, tt.want)
			}
		})
	}
	if _, err := storeset.Init(ctx, namedOf(dbs[2], dbs[3])); !errors.Is(err, storeset.ErrMismatch) {
		t.Fatalf("Init with a store of another set: %v", err)
	}
}

// TestStaleStore: a store restored from a copy taken earlier is found out
// by an instance that just started, from the marks the other stores keep;
// the ranges taken after the last mark was written, which the restore
// lost, are covered by the failover jump. No id is issued twice.
func TestStaleStore(t *testing.T) {
	each(t, func(t *testing.T, kind string) {
		ctx := context.Background()
		dbs := databases(t, kind, 2)
		createTag(t, dbs, "t", 1, 100)
		if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
			t.Fatal(err)
		}
		backup, err := dbs[0].Tag(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		var all ids
		s1, a1 := instance(t, namedOf(dbs...), storeset.Options{})
		take(t, a1, "t", 1000, &all) // ten ranges, all from a
		if err := a1.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s1.Close(); err != nil { // writes the marks to b
			t.Fatal(err)
		}
		// Another instance takes ranges from a and dies before it writes
		// their marks.
		_, a2 := instance(t, namedOf(dbs...), storeset.Options{MarkInterval: time.Hour})
		take(t, a2, "t", 1000, &all)
		if err := a2.Close(); err != nil { // its prefetch ends before the restore
			t.Fatal(err)
		}
		storetest.RewindTag(t, dbs[0].Store, "t", backup.MaxID) // a restored from the copy

		stale := 0
		_, a3 := instance(t, namedOf(dbs...), storeset.Options{OnStale: func(store, tag string, mark int64) {
			if store == "a" && tag == "t" {
				stale++
			}
		}})
		take(t, a3, "t", 1000, &all)
		if all.dups != 0 {
			t.Fatalf("%d ids issued twice after the stale restore", all.dups)
		}
		if stale != 1 {
			t.Fatalf("the stale store was found %d times, want 1", stale)
		}
	})
}

// TestChangeWhileServing: a store added and another retired while two
// instances take ids: no id twice, and each instance keeps serving, and
// learns of each change (Options.OnChange: the admin trail).
func TestChangeWhileServing(t *testing.T) {
	each(t, func(t *testing.T, kind string) {
		ctx := context.Background()
		dbs := databases(t, kind, 4)
		createTag(t, dbs, "t", 1, 50)
		if _, err := storeset.Init(ctx, namedOf(dbs[:3]...)); err != nil {
			t.Fatal(err)
		}
		var all ids
		var changes sync.Mutex
		var seen []string
		_, a1 := instance(t, namedOf(dbs[:3]...), storeset.Options{OnChange: func(before, after storeset.Set) {
			changes.Lock()
			seen = append(seen, fmt.Sprintf("%d %v -> %d %v", before.Version, before.Names(), after.Version, after.Names()))
			changes.Unlock()
		}})
		_, a2 := instance(t, namedOf(dbs[1], dbs[2], dbs[0]))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, a := range []*segment.Allocator{a1, a2} {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					take(t, a, "t", 100, &all)
				}
			})
		}
		added, err := storeset.Change(ctx, namedOf(dbs...), []string{"a", "b", "c", "d"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if added.Version != 2 || len(added.Members) != 4 {
			t.Fatalf("after adding d: %+v", added)
		}
		retired, err := storeset.Change(ctx, namedOf(dbs...), []string{"b", "c", "d"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if retired.Version != 3 || len(retired.Members) != 3 {
			t.Fatalf("after retiring a: %+v", retired)
		}
		if d, _ := retired.Member("d"); d.Slot != 3 || !slices.Equal(retired.Retired, []int64{0}) {
			t.Fatalf("worker slots after the changes: d has %d, retired %v", d.Slot, retired.Retired)
		}
		if r, err := dbs[0].Record(ctx); err != nil || r.State != storeset.Retired {
			t.Fatalf("a's record: %+v, %v", r, err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			changes.Lock()
			last := ""
			if len(seen) > 0 {
				last = seen[len(seen)-1]
			}
			changes.Unlock()
			if strings.HasSuffix(last, "-> 3 [b c d]") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the changes an instance learnt of: %q; want the last to version 3 [b c d]", seen)
			}
		}
		_, a3 := instance(t, namedOf(dbs[1:]...)) // started with the new set
		take(t, a3, "t", 500, &all)
		close(stop)
		wg.Wait()
		if all.dups != 0 {
			t.Fatalf("%d ids issued twice of %d", all.dups, len(all.seen))
		}
		if _, err := storeset.Open(ctx, namedOf(dbs[:3]...), storeset.Options{}); !errors.Is(err, storeset.ErrMismatch) {
			t.Fatalf("an instance started with the old set: %v", err)
		}
	})
}

func (f faulty) AcquireIn(ctx context.Context, holder string, lo, hi int64, ttl time.Duration) (snowflake.Lease, error) {
	if f.down.Load() {
		return snowflake.Lease{}, errUnreachable
	}
	return f.Store.AcquireIn(ctx, holder, lo, hi, ttl)
}

func (f faulty) Renew(ctx context.Context, l snowflake.Lease, last int64, ttl time.Duration) (snowflake.Lease, error) {
	if f.down.Load() {
		return snowflake.Lease{}, errUnreachable
	}
	return f.Store.Renew(ctx, l, last, ttl)
}

// TestWorkerIDsPartitioned: each store leases worker ids only in its own
// part of the worker-id space, so instances preferring different stores
// (regions) never hold the same worker id; a lease is renewed where it was
// granted, and when that store is lost the next lease comes from another.
func TestWorkerIDsPartitioned(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, store.SQLite, 3)
	set, err := storeset.Init(ctx, namedOf(dbs...))
	if err != nil {
		t.Fatal(err)
	}
	const workers = 1024
	held := map[int64]string{}
	for region, order := range [][]*db{{dbs[0], dbs[1], dbs[2]}, {dbs[1], dbs[2], dbs[0]}, {dbs[2], dbs[0], dbs[1]}} {
		s, _ := instance(t, namedOf(order...))
		leases := s.Leases()
		lo, hi, err := set.Workers(order[0].name, workers)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			l, err := leases.Acquire(ctx, fmt.Sprintf("region%d-%d", region, i), workers, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if l.WorkerID < lo || l.WorkerID >= hi {
				t.Fatalf("store %s leased worker id %d, outside its part [%d, %d)", order[0].name, l.WorkerID, lo, hi)
			}
			if other, ok := held[l.WorkerID]; ok {
				t.Fatalf("worker id %d held by %s and region%d", l.WorkerID, other, region)
			}
			held[l.WorkerID] = fmt.Sprintf("region%d", region)
			if _, err := leases.Renew(ctx, l, 1, time.Minute); err != nil {
				t.Fatalf("renew where it was granted: %v", err)
			}
		}
	}

	s, _ := instance(t, namedOf(dbs...))
	leases := s.Leases()
	l, err := leases.Acquire(ctx, "moving", workers, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dbs[0].down.Store(true)
	if _, err := leases.Renew(ctx, l, 1, time.Minute); err == nil {
		t.Fatal("renewed a lease whose store is down")
	}
	l2, err := leases.Acquire(ctx, "moving", workers, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi, _ := set.Workers("b", workers); l2.WorkerID < lo || l2.WorkerID >= hi {
		t.Fatalf("with a down, the lease came from worker id %d, not b's part [%d, %d)", l2.WorkerID, lo, hi)
	}
}

// TestRowMissingInOneStore: a tag created while a store did not answer
// gets its row there on that store's first load of it, and its ids stay
// apart from the other stores'.
func TestRowMissingInOneStore(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, store.SQLite, 2)
	if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	createTag(t, dbs[1:], "late", 1, 10) // only in b: a did not answer
	_, a := instance(t, namedOf(dbs...))
	var all ids
	take(t, a, "late", 30, &all) // a is preferred: its row is made from b's
	row, err := dbs[0].Tag(ctx, "late")
	if err != nil || row.Step != 10 || row.MaxID <= 1 {
		t.Fatalf("a's row of late: %+v, %v", row, err)
	}
	dbs[0].down.Store(true)
	take(t, a, "late", 30, &all)
	if all.dups != 0 {
		t.Fatalf("%d ids twice", all.dups)
	}
}

// TestLeaseRegressedMovesToAnotherStore: a renewal that finds its store
// gone back in time puts only that store's part of the worker-id space in
// doubt: the next lease comes from another store, even one configured
// after it, and says which store granted it, so that the generator uses it
// at once (snowflake.Lease.Registry).
func TestLeaseRegressedMovesToAnotherStore(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, store.SQLite, 3)
	set, err := storeset.Init(ctx, namedOf(dbs...))
	if err != nil {
		t.Fatal(err)
	}
	const workers = 1024
	s, _ := instance(t, namedOf(dbs...))
	leases := s.Leases()
	l, err := leases.Acquire(ctx, "regressing", workers, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if l.Registry != "a" {
		t.Fatalf("lease from store a says registry %q", l.Registry)
	}
	if l, err = leases.Renew(ctx, l, 5000, time.Minute); err != nil || l.Registry != "a" {
		t.Fatalf("renew = %+v, %v", l, err)
	}
	storetest.RewindLease(t, dbs[0].Store, l.WorkerID, 1000) // a restored from an older copy
	if _, err := leases.Renew(ctx, l, 6000, time.Minute); !errors.Is(err, snowflake.ErrLeaseRegressed) {
		t.Fatalf("renew on a store gone back in time = %v, want ErrLeaseRegressed", err)
	}
	l2, err := leases.Acquire(ctx, "regressing", workers, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi, _ := set.Workers("b", workers); l2.WorkerID < lo || l2.WorkerID >= hi || l2.Registry != "b" {
		t.Fatalf("after a regression of a, the lease is worker id %d of registry %q, want b's part [%d, %d)", l2.WorkerID, l2.Registry, lo, hi)
	}
	// With b and c down, a is all there is: it leases again.
	dbs[1].down.Store(true)
	dbs[2].down.Store(true)
	l3, err := leases.Acquire(ctx, "regressing-2", workers, time.Minute)
	if lo, hi, _ := set.Workers("a", workers); err != nil || l3.WorkerID < lo || l3.WorkerID >= hi || l3.Registry != "a" {
		t.Fatalf("with only a up, the lease is %+v, %v; want one of a's part", l3, err)
	}
}

// TestStoreNotOpened: a store that could not be opened (Named.Err) is a
// store that does not answer to the set's administration, which says why,
// and is refused by an instance's set.
func TestStoreNotOpened(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, store.SQLite, 2)
	notOpened := errors.New(`store "b": sqlite /gone.db does not exist`)
	gone := []storeset.Named{dbs[0].named(), {Name: "b", Err: notOpened}}
	if _, err := storeset.Init(ctx, gone); !errors.Is(err, notOpened) {
		t.Fatalf("Init with a store not opened = %v, want its reason", err)
	}
	if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	if _, err := storeset.Open(ctx, gone, storeset.Options{}); !errors.Is(err, notOpened) {
		t.Fatalf("Open with a store not opened = %v, want its reason", err)
	}
	if _, err := storeset.Change(ctx, gone, []string{"a"}, false); !errors.Is(err, notOpened) {
		t.Fatalf("Change retiring a store not opened, not forced = %v, want its reason", err)
	}
	set, err := storeset.Change(ctx, gone, []string{"a"}, true)
	if err != nil || !slices.Equal(set.Names(), []string{"a"}) {
		t.Fatalf("Change retiring a store not opened, forced = %v, %v; want a set of a", set.Names(), err)
	}
}

// TestLeaseRenewedThroughAnotherInstance: a worker lease acquired through
// one instance of a set (a client's, POST /api/snowflake/leases) is renewed
// and released through another, which finds the store that granted it by
// the lease's Registry; a lease naming no store of the set is lost.
func TestLeaseRenewedThroughAnotherInstance(t *testing.T) {
	ctx := context.Background()
	dbs := databases(t, store.SQLite, 2)
	if _, err := storeset.Init(ctx, namedOf(dbs...)); err != nil {
		t.Fatal(err)
	}
	s1, _ := instance(t, namedOf(dbs[1], dbs[0]))
	s2, _ := instance(t, namedOf(dbs...))
	l, err := s1.Leases().Acquire(ctx, "client", 1024, time.Minute)
	if err != nil || l.Registry != dbs[1].name {
		t.Fatalf("acquire: %+v, %v; want a lease of %s", l, err, dbs[1].name)
	}
	other := s2.Leases()
	if _, err := other.Renew(ctx, l, 5, time.Minute); err != nil {
		t.Fatalf("renew through the other instance: %v", err)
	}
	if err := other.Release(ctx, l, 5); err != nil {
		t.Fatalf("release through the other instance: %v", err)
	}
	l.Registry = "nowhere"
	if _, err := other.Renew(ctx, l, 5, time.Minute); !errors.Is(err, snowflake.ErrLeaseLost) {
		t.Fatalf("a lease of no store of the set: %v, want ErrLeaseLost", err)
	}
}
