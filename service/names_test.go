package service_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// readCounter counts the reads of what names are, and the names they
// asked about.
type readCounter struct {
	service.TagKinds
	reads, names atomic.Int64
}

func (c *readCounter) LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error) {
	c.reads.Add(1)
	c.names.Add(int64(len(names)))
	return c.TagKinds.LookupTags(ctx, names)
}

// countedStore counts the allocator's calls of the store for first
// ranges.
type countedStore struct {
	*store.Store
	calls *atomic.Int64
}

func (c countedStore) Allocate(ctx context.Context, tag string, step int64) (segment.Allocation, error) {
	c.calls.Add(1)
	return c.Store.Allocate(ctx, tag, step)
}

func (c countedStore) AllocateBatch(ctx context.Context, tags []string) ([]segment.BatchResult, error) {
	c.calls.Add(1)
	return c.Store.AllocateBatch(ctx, tags)
}

// notTags serves the i-th of names that are not tags: a name without a
// row (unknown_tag) and the row of a period of the formatted tag inv
// (invalid_tag), in turn.
func notTags(ctx context.Context, svc *service.Service, i int) error {
	name, want := fmt.Sprintf("nope%07d", i), service.UnknownTag
	if i%2 == 1 {
		name, want = fmt.Sprintf("inv@2%07d", i), service.InvalidTag
	}
	_, err := svc.SegmentID(ctx, name, service.Want{}, nil)
	if code, _ := service.Classify(err); code != want {
		return fmt.Errorf("%s: %v, want %s", name, err, want)
	}
	return nil
}

// TestNamesThatAreNotTags: names that are not tags are answered without
// being kept, a name without a row at the cost of one read of it and the
// row of a period told from its tag, kept from the first such read, with
// no read of its own.
func TestNamesThatAreNotTags(t *testing.T) {
	ctx := context.Background()
	p := newParts(t, true)
	counter := &readCounter{TagKinds: p.biz}
	reg := service.NewRegistry(counter, p.is, p.alloc)
	svc := service.New(service.Config{Segments: p.alloc, Kinds: reg, Tags: p.rows, Biz: p.is, BizTags: p.biz})
	if _, err := svc.Tags().Create(ctx, service.NewTag{Name: "inv", Settings: service.TagSettings{Format: ptr("INV-{date:20060102}-{seq}"), Reset: ptr("day")}}); err != nil {
		t.Fatal(err)
	}
	const n = 20000
	for i := range n {
		if err := notTags(ctx, svc, i); err != nil {
			t.Fatal(err)
		}
	}
	if kept := reg.KeptNames(); kept != 1 {
		t.Errorf("the registry keeps %d names after %d that are not tags, want 1 (the formatted tag)", kept, n)
	}
	// The first period's row reads its tag with it; every name without
	// a row is read once.
	if reads, names := counter.reads.Load(), counter.names.Load(); reads > n/2+1 || names > n/2+2 {
		t.Errorf("%d reads of %d names for %d names without a row and %d periods' rows; want one read of each name without a row", reads, names, n/2, n/2)
	}
	if got := len(p.alloc.Snapshot()); got != 0 {
		t.Errorf("the allocator holds %d buffers, want none", got)
	}
}

// BenchmarkNamesThatAreNotTags: 100,000 names that are not tags, half
// without a row, half periods' rows, asked by 8 callers of an instance on
// SQLite, in blocks of 10,000: the time per name of the first block and of
// the last, the reads of the store per name, and the heap kept per name
// once all were answered. Store calls count the reads of what names are
// and the allocator's calls for first ranges.
func BenchmarkNamesThatAreNotTags(b *testing.B) {
	ctx := context.Background()
	st := storetest.SQLiteStore(b)
	var allocCalls atomic.Int64
	alloc := segment.New(countedStore{Store: st, calls: &allocCalls}, segment.Options{RefreshInterval: -1})
	b.Cleanup(func() { _ = alloc.Close() })
	is, err := bizid.New(bizid.Options{Store: st, IDs: alloc})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.CreateSpecialTag(ctx, segment.Tag{Name: "inv", MaxID: 1, Step: 1000}, bizid.Settings{Format: "INV-{date:20060102}-{seq}", Reset: bizid.Day}); err != nil {
		b.Fatal(err)
	}
	const total, block, callers = 100_000, 10_000, 8
	var first, last, calls, kept, keptNames float64
	for b.Loop() {
		counter := &readCounter{TagKinds: st}
		reg := service.NewRegistry(counter, is, alloc)
		svc := service.New(service.Config{Segments: alloc, Kinds: reg, Tags: st, Biz: is, BizTags: st})
		allocCalls.Store(0)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for from := 0; from < total; from += block {
			began := time.Now()
			var wg sync.WaitGroup
			for c := range callers {
				wg.Go(func() {
					for i := from + c; i < from+block; i += callers {
						if err := notTags(ctx, svc, i); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			took := float64(time.Since(began).Nanoseconds()) / block
			switch from {
			case 0:
				first += took
			case total - block:
				last += took
			}
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		kept += (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / total
		calls += float64(counter.reads.Load()+allocCalls.Load()) / total
		keptNames += float64(reg.KeptNames())
		runtime.KeepAlive(svc)
	}
	n := float64(b.N)
	b.ReportMetric(first/n, "ns/name-first-10k")
	b.ReportMetric(last/n, "ns/name-last-10k")
	b.ReportMetric(calls/n, "store-calls/name")
	b.ReportMetric(kept/n, "heap-B/name")
	b.ReportMetric(keptNames/n, "names-kept")
	b.ReportMetric(0, "ns/op")
}
