package segment_test

import (
	"context"
	"sync/atomic"
	"testing"

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

func benchAllocator(b *testing.B) *segment.Allocator {
	b.Helper()
	st := newMemStore(segment.Tag{Name: "orders", MaxID: 1, Step: segment.MaxStep})
	a := segment.New(st, segment.Options{RefreshInterval: -1})
	b.Cleanup(func() { _ = a.Close() })
	if _, err := a.Next(context.Background(), "orders"); err != nil {
		b.Fatal(err)
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
