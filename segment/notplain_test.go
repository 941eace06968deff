package segment_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
)

// classified is a store whose tags named in notPlain are not plain; it
// counts the questions and the names asked about.
type classified struct {
	segment.Store
	notPlain map[string]bool
	special  map[string]bool
	calls    atomic.Int32
	asked    atomic.Int32
	fail     atomic.Pointer[error]
}

func (c *classified) Classify(_ context.Context, tags []string) (map[string]segment.Kind, error) {
	c.calls.Add(1)
	c.asked.Add(int32(len(tags)))
	if err := c.fail.Load(); err != nil {
		return nil, *err
	}
	out := map[string]segment.Kind{}
	for _, tag := range tags {
		if c.notPlain[tag] {
			out[tag] = segment.Refused
		}
		if c.special[tag] {
			out[tag] = segment.Special
		}
	}
	return out, nil
}

// classifiedBatch adds the batch of first loads.
type classifiedBatch struct {
	*classified
	segmenttest.BatchStore
}

func (c classifiedBatch) Allocate(ctx context.Context, tag string, step int64) (segment.Allocation, error) {
	return c.classified.Allocate(ctx, tag, step)
}

func (c classifiedBatch) AllocateAbove(ctx context.Context, tag string, step, floor int64) (segment.Allocation, error) {
	return c.classified.AllocateAbove(ctx, tag, step, floor)
}

func (c classifiedBatch) Tag(ctx context.Context, tag string) (segment.Tag, error) {
	return c.classified.Tag(ctx, tag)
}

func (c classifiedBatch) Tags(ctx context.Context) ([]segment.Tag, error) {
	return c.classified.Tags(ctx)
}

func (c classifiedBatch) FindTags(ctx context.Context, names []string) ([]string, error) {
	return c.classified.FindTags(ctx, names)
}

// TestNotPlainTags: a tag the store says is not plain gets no range, on
// every route of the allocator, and the store is asked about it once; a
// plain tag is served; a tag marked later loses its buffer.
func TestNotPlainTags(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "ordered", MaxID: 1, Step: 10}, segment.Tag{Name: "plain", MaxID: 1, Step: 10})
	c := &classified{Store: st, notPlain: map[string]bool{"ordered": true}}
	a := newAllocator(t, c, newClock())
	ctx := context.Background()
	for range 3 {
		if _, err := a.Next(ctx, "ordered"); !errors.Is(err, segment.ErrNotPlain) {
			t.Fatalf("Next of a tag that is not plain: %v, want ErrNotPlain", err)
		}
		if _, err := a.NextN(ctx, "ordered", 5); !errors.Is(err, segment.ErrNotPlain) {
			t.Fatalf("NextN: %v, want ErrNotPlain", err)
		}
		if _, _, err := a.NextRange(ctx, "ordered", 5); !errors.Is(err, segment.ErrNotPlain) {
			t.Fatalf("NextRange: %v, want ErrNotPlain", err)
		}
		if _, err := a.Source("ordered").Next(ctx); !errors.Is(err, segment.ErrNotPlain) {
			t.Fatalf("Source: %v, want ErrNotPlain", err)
		}
	}
	if got := st.AllocateCalls(); got != 0 {
		t.Fatalf("%d ranges taken for a tag that is not plain", got)
	}
	take(t, a, "plain", 1, 15)
	if got := c.calls.Load(); got != 2 {
		t.Fatalf("the store was asked %d times, want once per tag", got)
	}
	a.MarkNotPlain("plain")
	if _, err := a.Next(ctx, "plain"); !errors.Is(err, segment.ErrNotPlain) {
		t.Fatalf("Next after MarkNotPlain: %v, want ErrNotPlain", err)
	}
	if got := c.calls.Load(); got != 2 {
		t.Fatalf("the store was asked %d times, want 2", got)
	}
}

// TestNotPlainUnanswered: while the store cannot say what a tag is, the
// tag gets no range and the error is the store's; once it answers, the
// tag is served.
func TestNotPlainUnanswered(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "t", MaxID: 1, Step: 10})
	c := &classified{Store: st}
	down := segment.ErrStoreUnavailable
	c.fail.Store(&down)
	a := newAllocator(t, c, newClock())
	if _, err := a.Next(context.Background(), "t"); !errors.Is(err, segment.ErrUnavailable) {
		t.Fatalf("Next while the store cannot classify: %v, want ErrUnavailable", err)
	}
	if got := st.AllocateCalls(); got != 0 {
		t.Fatalf("%d ranges taken before the tag was classified", got)
	}
	c.fail.Store(nil)
	take(t, a, "t", 1, 3)
}

// TestNotPlainBatched: first loads taken together are classified together,
// one question per batch; the tags that are not plain get no range and
// the others each get theirs.
func TestNotPlainBatched(t *testing.T) {
	st := segmenttest.NewShared(rowsNamed("t", 100, 10)...)
	notPlain := map[string]bool{}
	for i := 0; i < 100; i += 10 {
		notPlain[fmt.Sprintf("t%d", i)] = true
	}
	c := &classified{Store: st, notPlain: notPlain}
	a := newAllocator(t, classifiedBatch{classified: c, BatchStore: st.Batched()}, newClock())
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	block, began := make(chan struct{}), make(chan string, 100)
	st.SetAllocateBlock(block, began)
	for _, tag := range []string{"t1", "t2"} { // a call each: as many as run at once
		go func() { _, _ = a.Next(context.Background(), tag) }()
		<-began
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		ids []int64
	)
	for i := 3; i < 100; i++ {
		wg.Go(func() {
			tag := fmt.Sprintf("t%d", i)
			id, err := a.Next(context.Background(), tag)
			if notPlain[tag] != errors.Is(err, segment.ErrNotPlain) || (!notPlain[tag] && err != nil) {
				t.Errorf("Next(%q) = %d, %v", tag, id, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ids = append(ids, id)
			}
		})
	}
	testkit.WaitFor(t, 0, "every other first load to wait for the next batch", func() bool {
		return segment.FirstLoadsWaiting(a) == 97
	})
	st.SetAllocateBlock(nil, nil)
	close(block)
	wg.Wait()
	if got := c.calls.Load(); got > 4 {
		t.Errorf("the store was asked %d times for 100 tags", got)
	}
	slices.Sort(ids)
	if got := st.BatchSizes(); !slices.Equal(got, []int{1, 1, 88}) {
		t.Errorf("batches of %v tags, want [1 1 88]: the 9 tags that are not plain get no range", got)
	}
	if len(slices.Compact(ids)) != 88 {
		t.Errorf("%d different first ids for the 88 plain tags of the second batch", len(ids))
	}
}

// TestSpecialTags: a tag the store says is special is refused by Next on
// the call that loads it, and served by NextSpecial; Special tells it
// apart once it has a buffer. MarkSpecial does the same for a tag that
// became special.
func TestSpecialTags(t *testing.T) {
	st := segmenttest.New(segment.Tag{Name: "opaque", MaxID: 1, Step: 10}, segment.Tag{Name: "plain", MaxID: 1, Step: 10})
	c := &classified{Store: st, special: map[string]bool{"opaque": true}}
	a := newAllocator(t, c, newClock())
	ctx := context.Background()
	if a.Special("opaque") {
		t.Fatal("Special before the tag was loaded")
	}
	if _, err := a.Next(ctx, "opaque"); !errors.Is(err, segment.ErrSpecial) || !errors.Is(err, segment.ErrNotPlain) {
		t.Fatalf("Next of a special tag: %v, want ErrSpecial", err)
	}
	if !a.Special("opaque") {
		t.Fatal("Special is false after the first load")
	}
	for want := int64(1); want <= 3; want++ {
		if id, err := a.NextSpecial(ctx, "opaque"); err != nil || id != want {
			t.Fatalf("NextSpecial = %d, %v; want %d", id, err, want)
		}
	}
	if ids, err := a.NextNSpecial(ctx, "opaque", 2); err != nil || !slices.Equal(ids, []int64{4, 5}) {
		t.Fatalf("NextNSpecial = %v, %v", ids, err)
	}
	// A tag never loaded: NextNSpecial loads it and serves it.
	c.special["plain2"] = true
	st.Put(segment.Tag{Name: "plain2", MaxID: 100, Step: 10})
	if ids, err := a.NextNSpecial(ctx, "plain2", 2); err != nil || !slices.Equal(ids, []int64{100, 101}) {
		t.Fatalf("NextNSpecial of an unloaded special tag = %v, %v", ids, err)
	}
	take(t, a, "plain", 1, 3)
	if a.Special("plain") {
		t.Fatal("a plain tag is special")
	}
	a.MarkSpecial("plain")
	if !a.Special("plain") {
		t.Fatal("MarkSpecial did not mark the loaded tag")
	}
	if id, err := a.NextSpecial(ctx, "plain"); err != nil || id != 4 {
		t.Fatalf("NextSpecial after MarkSpecial = %d, %v", id, err)
	}
}
