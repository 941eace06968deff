package app

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapFloor is the least heap the garbage collector of `leaf serve` lets
// grow before it collects, unless GOGC is set.
//
// Go collects when the heap reaches GOGC% (100) above what the last
// collection left live, but never below 4 MiB (scaled by GOGC/100). A
// server's live heap is small (1 to 3 MiB with every part on and a few
// busy tags), and each request allocates about 2 KiB inside net/http
// whatever the handler does, so under load the collector ran several
// hundred times a second, each time marking the whole live heap: 4% of
// the server's CPU, and every part wired in made it worse, though the
// request path was unchanged. Raising the floor to a few tens of MiB
// makes collections rare while the live heap is small.
//
// Past it, the heap grows by half of what stayed live (GOGC 50) rather
// than by all of it (Go's 100): what stays live in a large instance is
// its tags (100,000 hold about 21 MiB), and the heap between collections
// is RSS. Each collection marks the tags once: about 4 ms of CPU at
// 100,000 tags on the 2-core development machine, so collecting twice as
// often costs about 0.3 µs more a request (at 2 KiB a request) of the
// 12 µs of CPU one takes, and saves a third of the RSS per tag
// (BENCHMARKS.md, "Many tags").
const heapFloor = 32 << 20

// leastGCPercent is the least GOGC the floor sets: once the live heap
// alone is two thirds of the floor, the heap may grow by half of it.
const leastGCPercent = 50

// defaultHeapMinimum is the Go runtime's floor at GOGC=100, which it
// scales by GOGC/100.
const defaultHeapMinimum = 4 << 20

var heapFloorOnce sync.Once

// keepHeapFloor keeps the collector's goal at floor bytes or more for the
// life of the process, unless the operator set GOGC (their choice wins;
// GOGC=100 restores Go's default). After each collection it sets GOGC from
// the live heap: as high as it takes for the goal to reach floor, never
// below leastGCPercent (so a large live heap grows by half between
// collections) and never above floor/4 MiB × 100 (where the runtime's own
// scaled minimum reaches floor). It does nothing between collections, so
// an idle server stays idle.
func keepHeapFloor(floor uint64) {
	if os.Getenv("GOGC") != "" {
		return
	}
	heapFloorOnce.Do(func() {
		t := &heapTuner{floor: floor, set: debug.SetGCPercent}
		t.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t.arm()
	})
}

// heapTuner runs after each collection; see keepHeapFloor.
type heapTuner struct {
	floor  uint64
	set    func(percent int) int
	last   int
	sample []metrics.Sample
}

// sentinel is allocated only to be collected: a cleanup attached to it
// runs after the collection that found it unreachable. It holds a pointer
// so the allocator does not batch it with other small objects.
type sentinel struct{ _ *byte }

// arm makes t run once after the next collection.
func (t *heapTuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *heapTuner) {
		t.tune()
		t.arm()
	}, t)
}

// tune sets GOGC for the live heap the last collection left.
func (t *heapTuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := gcPercentFor(t.sample[0].Value.Uint64(), t.floor)
	if p != t.last {
		t.set(p)
		t.last = p
	}
}

// gcPercentFor is the GOGC that makes the collector's goal floor or more
// for a live heap of live bytes (see keepHeapFloor).
func gcPercentFor(live, floor uint64) int {
	most := int(floor / defaultHeapMinimum * 100)
	if most < 100 {
		return 100
	}
	if live == 0 {
		return most
	}
	// The goal is live × (1 + p/100) and at least the scaled minimum
	// (4 MiB × p/100): the latter alone reaches floor at p = most.
	p := most
	if live < floor {
		if need := int((floor - live) * 100 / live); need < p {
			p = need
		}
	} else {
		p = leastGCPercent
	}
	// Rounded to tens, so that small moves of the live heap do not
	// reset GOGC after every collection.
	p = (p + 9) / 10 * 10
	return max(leastGCPercent, min(p, most))
}

// KeepHeapFloor keeps the collector's goal at heapFloor or more for the
// life of the process (see keepHeapFloor): leaf serve's, called once
// before anything is opened.
func KeepHeapFloor() { keepHeapFloor(heapFloor) }
