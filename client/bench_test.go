package client_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/leafid/leaf/client"
)

// The client's hot path beside a bare atomic add, the floor of any shared
// counter; compare pairs measured in the same run:
//
//	go test -run '^$' -bench . -count 5 ./client/
//
// Ranges of a million ids keep requests rare, so what is measured is the
// take from a buffered range: tag lookup, one atomic add, bounds and
// prefetch checks.

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

// benchClient returns a client of a fake server with tag "orders" and a
// first range already taken.
func benchClient(b *testing.B) *client.Client {
	b.Helper()
	f := newFake(b, newFakeIDs("orders"))
	c, err := client.New(client.Config{Endpoints: []string{f.URL()}, MinRange: client.MaxRange})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	if _, err := c.Next(context.Background(), "orders"); err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkNext(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Next(ctx, "orders"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNextParallel(b *testing.B) {
	c := benchClient(b)
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
// block handed out with no shared write. With -cpu 1,2 the parallel
// figure shows how ids/s grow with cores (ns/op is wall time over all
// goroutines' ids).
func BenchmarkSourceNext(b *testing.B) {
	src := benchClient(b).Source("orders")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSourceNextParallel(b *testing.B) {
	c := benchClient(b)
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
