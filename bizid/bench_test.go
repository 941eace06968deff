package bizid

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// The baseline of the figures in BENCHMARKS.md: what a plain segment id
// costs at its core.
func BenchmarkAtomicAdd(b *testing.B) {
	b.ReportAllocs()
	var n atomic.Int64
	for b.Loop() {
		n.Add(1)
	}
}

func BenchmarkOpaqueEncode(b *testing.B) {
	for _, width := range []int{Bits63, Bits53} {
		b.Run(map[int]string{Bits63: "63bit", Bits53: "53bit"}[width], func(b *testing.B) {
			c := testCipher(b, width)
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				n++
				if _, err := c.Encode(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAtomicAddThenEncode is the whole work an opaque id adds to a
// plain one, beside BenchmarkAtomicAdd.
func BenchmarkAtomicAddThenEncode(b *testing.B) {
	c := testCipher(b, Bits63)
	b.ReportAllocs()
	var n atomic.Int64
	for b.Loop() {
		if _, err := c.Encode(n.Add(1)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpaqueDecode(b *testing.B) {
	c := testCipher(b, Bits63)
	b.ReportAllocs()
	var id int64 = 1
	for b.Loop() {
		id++
		if _, err := c.Decode(id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkText is the text of one formatted id.
func BenchmarkText(b *testing.B) {
	tmpl, err := ParseTemplate("ORD-{date:20060102}-{seq:6}")
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	buf := make([]byte, 0, 32)
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		n++
		buf = tmpl.AppendText(buf[:0], at, n)
	}
}

// BenchmarkIssuerNext is a formatted id through the Issuer, its numbers
// from an in-memory store (a lock and a map: slower than the segment
// allocator).
func BenchmarkIssuerNext(b *testing.B) {
	set := Settings{Tag: "orders", Format: "ORD-{date:20060102}-{seq:6}", Reset: Day, TimeZone: "Asia/Shanghai"}
	m := newMemStore(set)
	is, err := New(Options{Store: m, IDs: m})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	tag := is.Compile(nil, set)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := is.Next(ctx, tag); err != nil {
			b.Fatal(err)
		}
	}
}
