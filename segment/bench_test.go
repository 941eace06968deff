package segment_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
)

// The allocator's hot path beside a bare atomic add, the floor of any
// shared counter. Compare the ns/op of each pair measured in the same run:
//
//	go test -run '^$' -bench . -benchmem -count 6 ./segment/
//
// A step of MaxStep keeps loads rare, so what is measured is the hot path
// (tag lookup, one atomic add, bounds and prefetch checks), with a load and
// a switch every 900,000 ids or so.

func BenchmarkBaselineAtomicAdd(b *testing.B) {
	b.ReportAllocs()
	var n atomic.Int64
	for b.Loop() {
		n.Add(1)
	}
}

func BenchmarkBaselineAtomicAddParallel(b *testing.B) {
	b.ReportAllocs()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Add(1)
		}
	})
}

// benchAllocator returns an allocator serving the given tags (default
// "orders"), each loaded once.
func benchAllocator(b *testing.B, tags ...string) *segment.Allocator {
	b.Helper()
	if len(tags) == 0 {
		tags = []string{"orders"}
	}
	rows := make([]segment.Tag, len(tags))
	for i, tag := range tags {
		rows[i] = segment.Tag{Name: tag, MaxID: 1, Step: segment.MaxStep}
	}
	a := segment.New(segmenttest.New(rows...), segment.Options{RefreshInterval: -1})
	b.Cleanup(func() { _ = a.Close() })
	for _, tag := range tags {
		if _, err := a.Next(context.Background(), tag); err != nil {
			b.Fatal(err)
		}
	}
	return a
}

func BenchmarkNext(b *testing.B) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Next(ctx, "orders"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNextParallel(b *testing.B) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Next(ctx, "orders"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkNextTags is Next among 1,000 tags, for tags of several lengths:
// the lookup compares the first and last eight bytes as words, and the
// bytes of longer tags in between eight at a time.
func BenchmarkNextTags(b *testing.B) {
	probes := []string{"orders", "leaf-segment-test", "payments-settlement-ledger-entries-eu-west"}
	tags := slices.Clone(probes)
	for i := range 1000 - len(probes) {
		tags = append(tags, fmt.Sprintf("service-%d:table-%d", i%37, i))
	}
	a := benchAllocator(b, tags...)
	ctx := context.Background()
	for _, tag := range probes {
		b.Run(fmt.Sprintf("len=%d", len(tag)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Next(ctx, tag); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNextManyTags is Next among 100,000 tags asked for in a random
// order, as an instance behind a load balancer sees them: the table and
// the buffers are far larger than the caches, so each lookup costs its
// misses more than its probes.
func BenchmarkNextManyTags(b *testing.B) {
	tags := make([]string, 100_000)
	for i := range tags {
		tags[i] = fmt.Sprintf("service-%02d:table-%06d", i%37, i)
	}
	a := benchAllocator(b, tags...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(tags), func(i, j int) { tags[i], tags[j] = tags[j], tags[i] })
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := a.Next(ctx, tags[i]); err != nil {
			b.Fatal(err)
		}
		if i++; i == len(tags) {
			i = 0
		}
	}
}

// A Source per goroutine: one atomic add per block of ids, the ids of a
// block handed out with no shared write. With -cpu 1,2 the parallel
// figure shows how ids/s grow with cores (ns/op is wall time over all
// goroutines' ids).
func BenchmarkSourceNext(b *testing.B) {
	src := benchAllocator(b).Source("orders")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSourceNextParallel(b *testing.B) {
	a := benchAllocator(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		src := a.Source("orders")
		for pb.Next() {
			if _, err := src.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
