package app

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{0, 32 * mib, 800},
		{1 * mib, 32 * mib, 800},  // the scaled minimum (4 MiB × 8) is the goal
		{2 * mib, 32 * mib, 800},  // live × 9 = 18 MiB would be short of it
		{10 * mib, 32 * mib, 220}, // 10 × 3.2 = 32
		{16 * mib, 32 * mib, 100}, // 16 × 2 = 32
		{20 * mib, 32 * mib, 60},  // 20 × 1.6 = 32
		{22 * mib, 32 * mib, 50},  // never below 50: 22 × 1.5 = 33
		{500 * mib, 32 * mib, 50},
		{1 * mib, 2 * mib, 100}, // a floor under Go's own minimum changes nothing
		{3 * mib, 32 * mib, 800},
		{5 * mib, 32 * mib, 540}, // 27/5 = 5.4
	} {
		if got := gcPercentFor(c.live, c.floor); got != c.want {
			t.Errorf("gcPercentFor(%d MiB, %d MiB) = %d; want %d", c.live/mib, c.floor/mib, got, c.want)
		}
	}
}

// TestHeapFloor: with GOGC unset, the process's GOGC follows its live heap
// after each collection: high while the heap is small, 50 once the live
// heap alone passes the floor, high again when it shrinks.
func TestHeapFloor(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the operator's setting is left alone")
	}
	keepHeapFloor(heapFloor)
	waitGOGC := func(want int) {
		t.Helper()
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		deadline := time.Now().Add(10 * time.Second)
		for {
			runtime.GC()
			metrics.Read(s)
			got := int(s[0].Value.Uint64())
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("GOGC = %d; want %d", got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitGOGC(800)
	held := make([]byte, 2*heapFloor)
	for i := range held {
		held[i] = byte(i)
	}
	waitGOGC(leastGCPercent)
	runtime.KeepAlive(held)
	waitGOGC(800)
}
