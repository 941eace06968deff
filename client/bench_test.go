package client_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// The client's hot path beside a bare atomic add, the floor of any shared
// counter; compare pairs measured in the same run, and each parallel
// benchmark at -cpu 1 and 2 (its ns/op is wall time over every
// goroutine's ids, so ids/s is 1e9 over it):
//
//	go test -run '^$' -bench . -cpu 1,2 -count 5 ./client/
//
// The client's ranges here outlast the run (2^40 ids), so that what is
// measured is the take from a buffered range: tag lookup, one atomic
// add, bounds and prefetch checks, or a Source's block. The MaxRange
// benchmarks take the largest ranges a server gives instead, a million
// ids, from a server in the same process: at these rates that is a
// request every few milliseconds, and they measure that too.

func BenchmarkAtomicAdd(b *testing.B) {
	b.ReportAllocs()
	var n atomic.Int64
	for b.Loop() {
		n.Add(1)
	}
}

func BenchmarkAtomicAddParallel(b *testing.B) {
	b.ReportAllocs()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Add(1)
		}
	})
}

// longRange is the size of the ranges of the hot path's benchmarks.
const longRange = 1 << 40

// benchClient returns a client of a fake server with tag "orders" and a
// first range of size ids already taken.
func benchClient(b *testing.B, size int) *client.Client {
	b.Helper()
	f := newFake(b, newFakeIDs("orders"))
	f.anyCount.Store(true)
	c, err := client.New(client.Config{Endpoints: []string{f.URL()}})
	if err != nil {
		b.Fatal(err)
	}
	client.SetRangeSize(c, size)
	b.Cleanup(func() { _ = c.Close() })
	if _, err := c.Next(context.Background(), "orders"); err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkNext(b *testing.B) {
	c := benchClient(b, longRange)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Next(ctx, "orders"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNextParallel(b *testing.B) { benchNextParallel(b, longRange) }

func BenchmarkNextParallelMaxRange(b *testing.B) { benchNextParallel(b, client.MaxRange) }

func benchNextParallel(b *testing.B, size int) {
	c := benchClient(b, size)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Next(ctx, "orders"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A Source per goroutine: one atomic add per block of ids, the ids of a
// block handed out with no shared write.
func BenchmarkSourceNext(b *testing.B) {
	src := benchClient(b, longRange).Source("orders")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSourceNextParallel(b *testing.B) { benchSourceNextParallel(b, longRange) }

func BenchmarkSourceNextParallelMaxRange(b *testing.B) {
	benchSourceNextParallel(b, client.MaxRange)
}

func benchSourceNextParallel(b *testing.B, size int) {
	c := benchClient(b, size)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		src := c.Source("orders")
		for pb.Next() {
			if _, err := src.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkWorkerNext: snowflake ids made in this process on a leased
// worker id, against the layout's ceiling (4096 ids a millisecond, 244 ns
// an id, with the default layout): a worker is bounded by its sequence
// field, not by its own cost.
func BenchmarkWorkerNext(b *testing.B) {
	srv := startServer(b, storetest.Open(b, store.SQLite, filepath.Join(b.TempDir(), "leaf.db")), -1)
	c := newClient(b, client.Config{Endpoints: []string{srv.URL()}})
	w, err := c.LeaseWorker(context.Background(), "bench", 30*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = w.Close(context.Background()) })
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
