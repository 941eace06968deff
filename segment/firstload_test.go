package segment_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

// rowsNamed returns a row of step step for each of n names prefix0, prefix1, ...
func rowsNamed(prefix string, n int, step int64) []segment.Tag {
	rows := make([]segment.Tag, n)
	for i := range rows {
		rows[i] = segment.Tag{Name: fmt.Sprintf("%s%d", prefix, i), MaxID: 1, Step: step}
	}
	return rows
}

// TestFirstLoadsShareOneCall: the first loads of different tags that begin
// while a batch runs are taken together by the next call of a
// BatchAllocator, and each tag gets its own range.
func TestFirstLoadsShareOneCall(t *testing.T) {
	st := segmenttest.NewShared(rowsNamed("t", 100, 10)...)
	a := newAllocator(t, st.Batched(), newClock())
	if err := a.Refresh(context.Background()); err != nil { // every tag known: no look-up
		t.Fatal(err)
	}
	block, began := make(chan struct{}), make(chan string, 100)
	st.SetAllocateBlock(block, began)
	first := make(chan int64, 2)
	for _, tag := range []string{"t0", "t1"} { // a call each: as many as run at once
		go func() { first <- mustNext(t, a, tag) }()
		<-began
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		ids = map[int64]string{}
	)
	for i := 2; i < 100; i++ {
		wg.Go(func() {
			tag := fmt.Sprintf("t%d", i)
			id, err := a.Next(context.Background(), tag)
			if err != nil {
				t.Errorf("Next(%q): %v", tag, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if other, dup := ids[id]; dup {
				t.Errorf("id %d of %q and of %q", id, tag, other)
			}
			ids[id] = tag
		})
	}
	testkit.WaitFor(t, 0, "every other first load to wait for the next batch", func() bool {
		return segment.FirstLoadsWaiting(a) == 98
	})
	st.SetAllocateBlock(nil, nil)
	close(block)
	wg.Wait()
	ids[<-first], ids[<-first] = "t0 or t1", "t0 or t1"
	if got := st.BatchSizes(); !slices.Equal(got, []int{1, 1, 98}) {
		t.Fatalf("batches of %v tags, want [1 1 98]", got)
	}
	if got := st.AllocateCalls(); got != 0 {
		t.Fatalf("%d calls of Allocate beside the batches", got)
	}
	for id, tag := range ids { // each tag's range of 10 is its own
		if id < 1 || id > 991 || (id-1)%10 != 0 {
			t.Errorf("first id of %q = %d, not the first of a range of 10", tag, id)
		}
	}
	if len(ids) != 100 {
		t.Errorf("%d different first ids for 100 tags", len(ids))
	}
}

// TestFirstLoadBatchErrors: a tag's refusal in a batch is that tag's
// alone; a failed call fails every tag of it, and each is listed as
// failed until a later load succeeds.
func TestFirstLoadBatchErrors(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "ok", MaxID: 1, Step: 10}, segment.Tag{Name: "bad", MaxID: 1, Step: 0},
		segment.Tag{Name: "down", MaxID: 1, Step: 10}, segment.Tag{Name: "Mixed", MaxID: 1, Step: 10})
	st.SetFold(true) // Allocate would find "mixed"; a batch, as a real store's, does not
	a := newAllocator(t, st.Batched(), newClock())
	a.Added("mixed") // as if a look-up had found it: only the batch stands in the way
	st.SetFailTag("down", errDown)
	ctx := context.Background()
	if _, err := a.Next(ctx, "bad"); !errors.Is(err, segment.ErrMisconfigured) {
		t.Errorf("Next(bad) = %v, want ErrMisconfigured", err)
	}
	if _, err := a.Next(ctx, "down"); !errors.Is(err, segment.ErrUnavailable) || !errors.Is(err, errDown) {
		t.Errorf("Next(down) = %v, want ErrUnavailable wrapping the store's error", err)
	}
	if _, err := a.Next(ctx, "mixed"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Errorf("Next(mixed) = %v, want ErrUnknownTag", err)
	}
	take(t, a, "ok", 1, 1) // no prefetch yet: every store call so far was a first load
	st.SetFail(errDown)
	a.Added("Mixed")
	if _, err := a.Next(ctx, "Mixed"); !errors.Is(err, segment.ErrUnavailable) {
		t.Errorf("Next(Mixed) with the store down = %v, want ErrUnavailable", err)
	}
	var failed []string
	for _, f := range a.Failed() {
		failed = append(failed, f.Tag)
	}
	if want := []string{"Mixed", "bad", "down"}; !slices.Equal(failed, want) {
		t.Errorf("Failed() = %q, want %q", failed, want)
	}
	st.SetFail(nil)
	st.SetFailTag("down", nil)
	take(t, a, "down", 1, 1)
	take(t, a, "Mixed", 1, 1)
	if got := st.AllocateCalls(); got != 0 {
		t.Errorf("%d calls of Allocate: first loads go through batches", got)
	}
}

// TestFirstLoadBatchIsFenced: a range a batch returns below what the
// allocator received for the tag before its buffer was dropped is not
// served; the row is moved past it, as for any load.
func TestFirstLoadBatchIsFenced(t *testing.T) {
	const jump = 1_000_000
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 100})
	var seen regressions
	a := newFencedAllocator(t, st.Batched(), jump, &seen)
	take(t, a, "t", 1, 5)
	st.Delete("t") // the row is gone: the refresh drops the buffer, the mark stays
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Put(segment.Tag{Name: "t", MaxID: 1, Step: 100}) // back, from the start
	if id := mustNext(t, a, "t"); id != 101+jump {
		t.Fatalf("first id after the row came back behind = %d, want %d", id, 101+jump)
	}
	if r := seen.list(); len(r) != 1 || r[0].High != 101 || r[0].Found != 1 {
		t.Fatalf("regressions = %+v, want one from 101 found at 1", r)
	}
}

// TestFirstLoadsAboveReceived: with AboveReceived, a tag that already has
// a mark is loaded on its own, above it; the others still in batches.
func TestFirstLoadsAboveReceived(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "a", MaxID: 1, Step: 10}, segment.Tag{Name: "b", MaxID: 1, Step: 10})
	a := segment.New(st.Batched(), segment.Options{Now: newClock().Now, RefreshInterval: -1, RideThrough: -1, AboveReceived: true})
	t.Cleanup(func() { _ = a.Close() })
	take(t, a, "a", 1, 1)
	st.Delete("a")
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Put(segment.Tag{Name: "a", MaxID: 1, Step: 10})
	take(t, a, "a", 11, 1)
	take(t, a, "b", 1, 1)
	if got, batches := st.AllocateCalls(), st.BatchSizes(); got != 1 || !slices.Equal(batches, []int{1, 1}) {
		t.Fatalf("Allocate calls %d and batches %v, want 1 (a above its mark) and [1 1]", got, batches)
	}
}

// TestFirstLoadsBatchedNeverRepeat: many goroutines ask for ids of many
// tags at once, most of them first requests, through batched first loads,
// among names without a row; every id of every tag comes from one
// sequence, so none may repeat anywhere.
func TestFirstLoadsBatchedNeverRepeat(t *testing.T) {
	const (
		tags       = 3000
		goroutines = 32
		each       = 400
	)
	st := segmenttest.NewShared(rowsNamed("tag-", tags, 7)...)
	a := segment.New(st.Batched(), segment.Options{Now: slowClock(), RefreshInterval: -1})
	t.Cleanup(func() { _ = a.Close() })
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			last := map[string]int64{}
			for range each {
				i := r.IntN(tags + tags/10) // one name in 11 has no row
				tag := fmt.Sprintf("tag-%d", i)
				ids, err := a.NextN(context.Background(), tag, 1+r.IntN(3))
				if i >= tags {
					if !errors.Is(err, segment.ErrUnknownTag) {
						t.Errorf("NextN(%q) = %v, want ErrUnknownTag", tag, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("NextN(%q): %v", tag, err)
					return
				}
				for _, id := range ids {
					if id <= last[tag] {
						t.Errorf("%q: id %d after %d", tag, id, last[tag])
					}
					last[tag] = id
				}
				got[g] = append(got[g], ids...)
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, ids := range got {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("id %d issued twice", id)
			}
			seen[id] = true
		}
	}
	sizes := st.BatchSizes()
	t.Logf("%d ids, %d tags loaded in %d batches (largest %d)", len(seen), len(a.Snapshot()), len(sizes), slices.Max(sizes))
}

// TestCloseEndsBatchedFirstLoads: Close ends the calls of batches in
// flight and the first loads waiting for the next batch; no goroutine is
// left behind.
func TestCloseEndsBatchedFirstLoads(t *testing.T) {
	before := runtime.NumGoroutine()
	st := segmenttest.New(rowsNamed("t", 20, 10)...)
	a := segment.New(st.Batched(), segment.Options{RefreshInterval: -1})
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	block, began := make(chan struct{}), make(chan string, 20)
	defer close(block)
	st.SetAllocateBlock(block, began)
	errs := make(chan error, 20)
	for i := range 20 {
		go func() { _, err := a.Next(context.Background(), fmt.Sprintf("t%d", i)); errs <- err }()
	}
	<-began
	<-began
	testkit.WaitFor(t, 0, "the other first loads to wait for a batch", func() bool {
		return segment.FirstLoadsWaiting(a) == 18
	})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := <-errs; !errors.Is(err, segment.ErrClosed) && !errors.Is(err, segment.ErrUnavailable) {
			t.Fatalf("a first load after Close = %v, want ErrClosed", err)
		}
	}
	testkit.WaitFor(t, 0, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

// TestBatchedFirstLoadsNeedNoLookup: through a store that takes batches,
// a tag that was not on the last list read is served by its batched first
// load alone, with no look-up read and nothing kept of its name beside its
// buffer; names without a row of exactly that name, spellings that a
// collation would match included, are unknown and get nothing.
func TestBatchedFirstLoadsNeedNoLookup(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "orders", MaxID: 1, Step: 1000})
	st.SetFold(true) // as MySQL's collations would match them
	a := newAllocator(t, st.Batched(), newClock())
	take(t, a, "orders", 1, 2)
	for _, name := range []string{"ORDERS", "Orders", "orders ", "nope"} {
		if _, err := a.Next(context.Background(), name); !errors.Is(err, segment.ErrUnknownTag) {
			t.Errorf("Next(%q) = %v, want ErrUnknownTag", name, err)
		}
	}
	st.Put(segment.Tag{Name: "later", MaxID: 100, Step: 1000}) // created elsewhere
	take(t, a, "later", 100, 1)
	if got := st.FindTagsCalls(); got != 0 {
		t.Errorf("look-up reads = %d, want 0: the batches answer", got)
	}
	if got := st.AllocateCalls(); got != 0 {
		t.Errorf("%d calls of Allocate beside the batches", got)
	}
	if got := segment.KnownNames(a); got != 0 {
		t.Errorf("%d names kept beside the buffers, want 0", got)
	}
	if got := len(a.Snapshot()); got != 2 {
		t.Errorf("buffers = %d, want 2 (orders, later)", got)
	}
	take(t, a, "orders", 3, 1) // still in order, from its first range
}

// TestBatchedFirstLoadsTakeNoGoroutine: a first load in a batch costs no
// goroutine beside the request's own and its batch's, and the requests for
// a tag whose batch is waiting or running wait for that batch: one range
// each.
func TestBatchedFirstLoadsTakeNoGoroutine(t *testing.T) {
	st := segmenttest.NewShared(rowsNamed("t", 100, 10)...) // one sequence: a range each
	a := newAllocator(t, st.Batched(), newClock())
	block, began := make(chan struct{}), make(chan string, 100)
	st.SetAllocateBlock(block, began)
	before := runtime.NumGoroutine()
	ids := make(chan int64, 302)
	var wg sync.WaitGroup
	for _, tag := range []string{"t0", "t1"} { // a call each: as many as run at once
		wg.Go(func() { ids <- mustNext(t, a, tag) })
		<-began
	}
	for i := range 300 { // three requests for each of t2..t99, and t0 and t1 again
		wg.Go(func() { ids <- mustNext(t, a, fmt.Sprintf("t%d", i%100)) })
	}
	testkit.WaitFor(t, 0, "every other first load to wait for the next batch", func() bool {
		return segment.FirstLoadsWaiting(a) == 98
	})
	// 302 requests, two calls running; a goroutine per first load would
	// add 100 more.
	if got := runtime.NumGoroutine() - before; got > 302+2+10 {
		t.Errorf("%d goroutines for 302 requests waiting for their first loads", got)
	}
	st.SetAllocateBlock(nil, nil)
	close(block)
	wg.Wait()
	close(ids)
	if got := st.BatchSizes(); !slices.Equal(got, []int{1, 1, 98}) {
		t.Fatalf("batches of %v tags, want [1 1 98]", got)
	}
	firsts := map[int64]int{}
	for id := range ids {
		firsts[(id-1)/10]++
	}
	if len(firsts) != 100 {
		t.Fatalf("the ids of 302 requests come from %d ranges, want 100", len(firsts))
	}
}

// slowList is a store whose reads of the tag list take their rows, then
// wait for release: a row created meanwhile is missing from the list.
type slowList struct {
	segmenttest.BatchStore
	reading chan struct{}
	release chan struct{}
}

func (s slowList) Tags(ctx context.Context) ([]segment.Tag, error) {
	tags, err := s.BatchStore.Tags(ctx)
	s.reading <- struct{}{}
	<-s.release
	return tags, err
}

// TestRefreshKeepsBuffersBornDuringTheRead: a tag created after a read of
// the tag list took its rows, and loaded (in a batch, with no look-up)
// before the read ended, keeps its buffer: it is missing from that list
// for being new, not for being gone.
func TestRefreshKeepsBuffersBornDuringTheRead(t *testing.T) {
	mem := segmenttest.New(segment.Tag{Name: "old", MaxID: 1, Step: 10})
	st := slowList{BatchStore: mem.Batched(), reading: make(chan struct{}), release: make(chan struct{})}
	a := newAllocator(t, st, newClock())
	take(t, a, "old", 1, 1)
	refreshed := make(chan error, 1)
	go func() { refreshed <- a.Refresh(context.Background()) }()
	<-st.reading
	mem.Put(segment.Tag{Name: "new", MaxID: 100, Step: 10})
	take(t, a, "new", 100, 1)
	close(st.release)
	if err := <-refreshed; err != nil {
		t.Fatal(err)
	}
	take(t, a, "new", 101, 1) // the same buffer: a dropped one would load 110 on
	go func() { <-st.reading }()
	mem.Delete("new") // gone now: the next read drops it
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.State("new"); ok {
		t.Fatal("a tag gone from the list kept its buffer")
	}
}

// TestBatchedListKeepsNoNames: through a store that takes batches, a read
// of the tag list keeps nothing of the names never asked for: their first
// loads need no look-up. Without batches, the list's names spare the
// look-ups.
func TestBatchedListKeepsNoNames(t *testing.T) {
	for _, c := range []struct {
		name    string
		batched bool
		want    int
	}{{"batched", true, 0}, {"one load a tag", false, 99}} {
		t.Run(c.name, func(t *testing.T) {
			mem := segmenttest.New(rowsNamed("t", 100, 10)...)
			var st segment.Store = mem
			if c.batched {
				st = mem.Batched()
			}
			a := newAllocator(t, st, newClock())
			take(t, a, "t0", 1, 1)
			if err := a.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := segment.KnownNames(a); got != c.want {
				t.Errorf("%d names kept beside the buffers, want %d", got, c.want)
			}
			take(t, a, "t42", 1, 1)
			take(t, a, "t0", 2, 1)
		})
	}
}
