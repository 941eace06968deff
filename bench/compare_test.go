package bench

import (
	"context"
	"testing"
	"time"

	bwmarrin "github.com/bwmarrin/snowflake"
	"github.com/leafid/leaf/snowflake"
	"github.com/sony/sonyflake"
)

func reportRate(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
}

func newLeaf(b *testing.B) *snowflake.Generator {
	b.Helper()
	g, err := snowflake.New(context.Background(), snowflake.Settings{WorkerID: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.Close(context.Background()) })
	return g
}

func newBwmarrin(b *testing.B) *bwmarrin.Node {
	b.Helper()
	n, err := bwmarrin.NewNode(1)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func newSonyflake(b *testing.B) *sonyflake.Sonyflake {
	b.Helper()
	sf, err := sonyflake.New(sonyflake.Settings{
		StartTime: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		MachineID: func() (uint16, error) { return 1, nil }, // no private IP needed
	})
	if err != nil {
		b.Fatal(err)
	}
	return sf
}

func BenchmarkLeaf(b *testing.B) {
	g := newLeaf(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b)
}

func BenchmarkLeafParallel(b *testing.B) {
	g := newLeaf(b)
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
	reportRate(b)
}

func BenchmarkBwmarrin(b *testing.B) {
	n := newBwmarrin(b)
	b.ReportAllocs()
	for b.Loop() {
		n.Generate()
	}
	reportRate(b)
}

func BenchmarkBwmarrinParallel(b *testing.B) {
	n := newBwmarrin(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Generate()
		}
	})
	reportRate(b)
}

func BenchmarkSonyflake(b *testing.B) {
	sf := newSonyflake(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sf.NextID(); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b)
}

func BenchmarkSonyflakeParallel(b *testing.B) {
	sf := newSonyflake(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := sf.NextID(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b)
}
