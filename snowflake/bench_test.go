package snowflake

import (
	"context"
	"testing"
)

// ceiling is the layout's limit for one worker: 4096 ids per millisecond.
const ceiling = (MaxSequence + 1) * 1000.0

// reportRate reports ids per second and the fraction of the ceiling.
func reportRate(b *testing.B, ids int) {
	b.Helper()
	rate := float64(ids) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "ids/s")
	b.ReportMetric(rate/ceiling, "of-ceiling")
}

func BenchmarkNext(b *testing.B) {
	g := newTestGenerator(b, Settings{WorkerID: 1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N)
}

func BenchmarkNextParallel(b *testing.B) {
	g := newTestGenerator(b, Settings{WorkerID: 1})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := g.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b, b.N)
}

// BenchmarkNextN100 draws batches of 100, as GET /api/snowflake/batch does.
func BenchmarkNextN100(b *testing.B) {
	g := newTestGenerator(b, Settings{WorkerID: 1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.NextN(ctx, 100); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, 100*b.N)
}
