package faults

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestHistoryChecker holds the history checker to made-up histories: the
// histories a correct service gives pass, each way of breaking a promise
// fails and is drawn into a file. It starts nothing, so it runs in make
// test too.
func TestHistoryChecker(t *testing.T) {
	t.Setenv("LEAF_HISTORIES", t.TempDir())
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	take := func(start, end int, lo, hi int64) historyOp {
		return historyOp{start: ms(start), end: ms(end), in: counterIn{}, out: counterTake{lo, hi}}
	}
	counter := []historyCase{
		{"one after another", []historyOp{take(0, 10, 1, 1), take(20, 30, 2, 5), take(40, 50, 9, 9)}, true},
		// Concurrent calls may be answered in either order.
		{"concurrent, either order", []historyOp{take(0, 30, 5, 5), take(10, 20, 3, 3), take(40, 50, 6, 6)}, true},
		// A call that began after another ended got a smaller number: the
		// case the sort by completion sees too.
		{"smaller after", []historyOp{take(0, 10, 5, 5), take(20, 30, 4, 4)}, false},
		{"same number twice", []historyOp{take(0, 10, 5, 5), take(5, 30, 5, 5)}, false},
		// Two concurrent batches that interleave: no order of the two
		// gives a counter that only grows. Sorting by completion misses it.
		{"interleaved batches", []historyOp{take(0, 30, 5, 10), take(10, 20, 7, 8)}, false},
		// Three calls, pairwise fine by time, impossible together: a
		// (0..10) got 3, b (20..30) got 1 while concurrent with c (15..40),
		// which got 2: b after a must be above 3.
		{"a chain through a concurrent call", []historyOp{take(0, 10, 3, 3), take(15, 40, 2, 2), take(20, 30, 1, 1)}, false},
	}
	checkCases(t, "counter", counterModel, counter)
	read := func(start, end int, v int64) historyOp {
		return historyOp{start: ms(start), end: ms(end), in: counterIn{read: true}, out: counterTake{v, v}}
	}
	reads := []historyCase{
		{"the top", []historyOp{take(0, 10, 5, 5), read(20, 30, 5), take(40, 50, 6, 6)}, true},
		// Above the top: a call cut off took numbers no one saw.
		{"above the top", []historyOp{take(0, 10, 5, 5), read(20, 30, 9), take(40, 50, 10, 10)}, true},
		{"stale", []historyOp{take(0, 10, 5, 5), read(20, 30, 4)}, false},
		{"a take below a read before it", []historyOp{read(0, 10, 9), take(20, 30, 9, 9)}, false},
	}
	checkCases(t, "counter/read", counterModel, reads)

	// The sort of TestMatrix misses the interleaved batches; the checker
	// does not.
	if n, _ := orderViolations([]orderCall{{start: ms(0), end: ms(30), lo: 5, hi: 10, call: 0}, {start: ms(10), end: ms(20), lo: 7, hi: 8, call: 1}}, 0); n != 0 {
		t.Errorf("orderViolations found %d in the interleaved batches; the case no longer shows what the checker adds", n)
	}

	// Groups are checked apart: the same numbers in two keys are fine.
	t.Run("counter/groups", func(t *testing.T) {
		h := []historyOp{take(0, 10, 5, 5), take(20, 30, 1, 1)}
		h[1].in = counterIn{group: 1}
		if v := checkHistory(t, "case", "counter", counterModel, historyOf(h)); v.result != porcupine.Ok {
			t.Fatal(v)
		}
	})

	set := func(start, end int, spans ...valSpan) historyOp {
		return historyOp{start: ms(start), end: ms(end), out: spans}
	}
	sets := []historyCase{
		{"disjoint", []historyOp{set(0, 10, valSpan{0, 1, 20}), set(5, 15, valSpan{0, 21, 21}, valSpan{0, 40, 45}), set(0, 1, valSpan{1, 1, 20})}, true},
		{"one number twice", []historyOp{set(0, 10, valSpan{0, 1, 20}), set(50, 60, valSpan{0, 20, 20})}, false},
		{"twice in one answer", []historyOp{set(0, 10, valSpan{0, 1, 2}, valSpan{0, 2, 3})}, false},
		// Spans across the blocks the history is partitioned by.
		{"across blocks", []historyOp{set(0, 10, valSpan{0, 1000, 3000}), set(20, 30, valSpan{0, 2047, 2048})}, false},
		{"next to each other across blocks", []historyOp{set(0, 10, valSpan{0, 1000, 2047}), set(20, 30, valSpan{0, 2048, 5000})}, true},
	}
	checkCases(t, "set", setModel, sets)

	// A history of the size the fault suite makes: 16 clients, 20,000
	// calls of 1 to 20 numbers of one counter, concurrent within 5 ms;
	// then one number given again, long after.
	t.Run("large", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		var h, s []historyOp
		next := int64(1)
		for i := range 20_000 {
			n := int64(1 + rng.IntN(20))
			start := ms(i)
			end := start + time.Duration(rng.IntN(5_000))*time.Microsecond
			h = append(h, historyOp{start: start, end: end, in: counterIn{}, out: counterTake{next, next + n - 1}})
			s = append(s, historyOp{start: start, end: end, out: []valSpan{{0, next, next + n - 1}}})
			next += n + int64(rng.IntN(3))
		}
		for _, c := range []struct {
			name  string
			model porcupine.Model
			h     []historyOp
		}{{"counter", counterModel, h}, {"set", setModel, s}} {
			v := checkHistory(t, "large", c.name, c.model, historyOf(c.h))
			t.Logf("%v", v)
			if v.result != porcupine.Ok {
				t.Fatal(v)
			}
		}
		bad := append(s[:len(s):len(s)], historyOp{start: ms(30_000), end: ms(30_001), out: []valSpan{{0, 12_345, 12_345}}})
		if v := checkHistory(t, "large", "set", setModel, historyOf(bad)); v.result == porcupine.Ok {
			t.Fatalf("a number given twice: %v", v)
		} else {
			checkDrawn(t, v.file)
		}
	})
}

// historyCase is a made-up history and whether it is linearizable.
type historyCase struct {
	name string
	h    []historyOp
	ok   bool
}

// checkCases checks each case against model in a subtest under prefix; a
// case that is not linearizable must be refused and drawn.
func checkCases(t *testing.T, prefix string, model porcupine.Model, cases []historyCase) {
	modelName, _, _ := strings.Cut(prefix, "/")
	for _, tt := range cases {
		t.Run(prefix+"/"+tt.name, func(t *testing.T) {
			v := checkHistory(t, "case", modelName, model, historyOf(tt.h))
			if got := v.result == porcupine.Ok; got != tt.ok {
				t.Fatalf("%v, want linearizable %v", v, tt.ok)
			}
			if !tt.ok {
				checkDrawn(t, v.file)
			}
		})
	}
}

// checkDrawn fails unless file is Porcupine's drawing of a history.
func checkDrawn(t *testing.T, file string) {
	t.Helper()
	if file == "" {
		t.Fatal("the failing history was not drawn")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<html") {
		t.Fatalf("%s is not an HTML page", file)
	}
}
