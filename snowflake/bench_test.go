package snowflake

import (
	"context"
	"testing"
	"time"
)

// reportRate reports ids per second and the fraction of g's ceiling: its
// layout's 2^SequenceBits ids per unit of time for one worker (4096 per
// millisecond with Leaf's layout).
func reportRate(b *testing.B, g *Generator, ids int) {
	b.Helper()
	rate := float64(ids) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "ids/s")
	b.ReportMetric(rate/float64(g.Layout().IDsPerSecond()), "of-ceiling")
}

func BenchmarkNext(b *testing.B) {
	g := newTestGenerator(b, Settings{WorkerID: 1})
	benchNext(b, g)
}

func benchNext(b *testing.B, g *Generator) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, g, b.N)
}

// BenchmarkNextLayouts runs Next at docs/snowflake.md's example layouts.
// Two have 2^20 ids per millisecond, a ceiling no caller reaches, so they
// measure the cost of one call rather than the wait for the clock, in
// either order of the fields. With
// seconds, a run of a second or two can report more than its ceiling: the
// numbers of the second it starts in are all there however late in that
// second it starts.
func BenchmarkNextLayouts(b *testing.B) {
	for _, l := range []Layout{
		{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 8, SequenceBits: 14},
		{Unit: time.Second, TimeBits: 31, WorkerBits: 10, SequenceBits: 22},
		{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 5, SequenceBits: 7},
		{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 2, SequenceBits: 20},
		{Unit: 10 * time.Millisecond, TimeBits: 39, WorkerBits: 16, SequenceBits: 8, Order: TimeSequenceWorker},
		{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 2, SequenceBits: 20, Order: TimeSequenceWorker},
	} {
		b.Run(l.String(), func(b *testing.B) {
			benchNext(b, newTestGenerator(b, Settings{WorkerID: 1, Layout: l}))
		})
	}
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
	reportRate(b, g, b.N)
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
	reportRate(b, g, 100*b.N)
}
