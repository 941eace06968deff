package segment_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
)

// What an allocator keeps per tag that was asked for once and then left
// idle: its buffer, its place in the table, its mark and its name, with
// the tag list read since. Measured as the live heap after a collection,
// over an in-memory store whose own rows are not counted.
//
//	go test -run '^$' -bench IdleTags -benchtime 1x -count 6 ./segment/

// cloningStore is a MemStore whose tag list, like a database's, is made
// of new strings at every read.
type cloningStore struct{ segmenttest.BatchStore }

func (s cloningStore) Tags(ctx context.Context) ([]segment.Tag, error) {
	tags, err := s.BatchStore.Tags(ctx)
	for i := range tags {
		tags[i].Name = strings.Clone(tags[i].Name)
	}
	return tags, err
}

// idleTagBytes loads n tags named like service-07:table-004321 into a new
// allocator, one request each with a name of its own as an HTTP request
// brings, reads the tag list twice, and returns the live heap the
// allocator holds per tag.
func idleTagBytes(tb testing.TB, n int) float64 {
	tb.Helper()
	ctx := context.Background()
	rows := make([]segment.Tag, n)
	for i := range rows {
		rows[i] = segment.Tag{Name: fmt.Sprintf("service-%02d:table-%06d", i%37, i), MaxID: 1, Step: 1000}
	}
	st := cloningStore{segmenttest.New(rows...).Batched()}
	before := liveHeap()
	a := segment.New(st, segment.Options{RefreshInterval: -1})
	defer a.Close()
	if err := a.Refresh(ctx); err != nil {
		tb.Fatal(err)
	}
	for _, r := range rows {
		if _, err := a.Next(ctx, strings.Clone(r.Name)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := a.Refresh(ctx); err != nil {
		tb.Fatal(err)
	}
	after := liveHeap()
	runtime.KeepAlive(a)
	runtime.KeepAlive(st)
	runtime.KeepAlive(rows)
	return float64(after-before) / float64(n)
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func BenchmarkIdleTags(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("tags=%d", n), func(b *testing.B) {
			var perTag float64
			for b.Loop() {
				perTag = idleTagBytes(b, n)
			}
			b.ReportMetric(perTag, "B/tag")
		})
	}
}

// TestIdleTagMemory keeps what an idle tag costs at 100,000 tags under 250
// bytes (213 on 2026-11-26: a buffer of 128, a slot of the table at 7/8
// full, the name).
func TestIdleTagMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 100,000 tags")
	}
	const limit = 250
	if got := idleTagBytes(t, 100_000); got > limit {
		t.Fatalf("%.0f bytes per idle tag at 100,000 tags, over %d", got, limit)
	} else {
		t.Logf("%.0f bytes per idle tag at 100,000 tags", got)
	}
}
