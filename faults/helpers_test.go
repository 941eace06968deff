package faults

import (
	"testing"
	"time"
)

// TestHelpers checks the suite's own arithmetic, on which every verdict
// rests: a duplicate counter that missed duplicates would pass anything.
// It starts nothing, so it runs in make test too.
func TestHelpers(t *testing.T) {
	t.Run("duplicates", func(t *testing.T) {
		tests := []struct {
			name string
			ids  []int64
			want int
		}{
			{name: "none", ids: nil, want: 0},
			{name: "distinct", ids: []int64{3, 1, 2}, want: 0},
			{name: "one pair", ids: []int64{5, 1, 5}, want: 1},
			{name: "three times", ids: []int64{7, 7, 2, 7}, want: 2},
			{name: "two pairs", ids: []int64{1, 2, 1, 2, 3}, want: 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				refs := make([]idRef, len(tt.ids))
				for i, id := range tt.ids {
					refs[i] = idRef{id: id, sample: int32(i)}
				}
				n, ex := duplicates(refs)
				if n != tt.want {
					t.Errorf("duplicates(%v) = %d, want %d", tt.ids, n, tt.want)
				}
				if (n > 0) != (len(ex) > 0) {
					t.Errorf("duplicates(%v): %d examples for %d duplicates", tt.ids, len(ex), n)
				}
			})
		}
	})
	t.Run("parseIDs", func(t *testing.T) {
		tests := []struct {
			name string
			op   opKind
			body string
			want int
			ok   bool
		}{
			{name: "get", op: segGet, body: "42", want: 1, ok: true},
			{name: "get zero", op: segGet, body: "0", want: 1},
			{name: "get text", op: snowGet, body: "x", want: 1},
			{name: "batch", op: segBatch, body: `{"tag":"a","ids":["1","2","3"]}`, want: 3, ok: true},
			{name: "batch short", op: segBatch, body: `{"ids":["1","2"]}`, want: 3},
			{name: "batch not increasing", op: snowBatch, body: `{"ids":["1","3","2"]}`, want: 3},
			{name: "batch repeated", op: snowBatch, body: `{"ids":["1","1"]}`, want: 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if _, err := parseIDs(tt.op, []byte(tt.body), tt.want); (err == nil) != tt.ok {
					t.Errorf("parseIDs(%s, %q) = %v, want ok %v", tt.op, tt.body, err, tt.ok)
				}
			})
		}
	})
	t.Run("okGap", func(t *testing.T) {
		ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
		s := []sample{
			{start: ms(0), dur: ms(1), status: 200, op: segGet, tag: 0},
			{start: ms(100), dur: ms(1), status: 503, op: segGet, tag: 0},
			{start: ms(700), dur: ms(1), status: 200, op: segGet, tag: 0},
			{start: ms(10), dur: ms(1), status: 200, op: segGet, tag: 1},
			{start: ms(990), dur: ms(1), status: 200, op: segGet, tag: 1},
			{start: ms(500), dur: ms(1), status: 503, op: snowGet, tag: -1},
			{start: ms(50), dur: ms(1), status: 503, op: segGet, tag: 0, target: 1},
		}
		// Tag 1 has no 200 from 11 ms to 991 ms.
		if got := okGap(s, 0, 0, ms(1000)); got != ms(980) {
			t.Errorf("okGap = %v, want 980ms", got)
		}
		// Instance 1 asked for tag 0 and never got a 200: the whole window.
		if got := okGap(s, 1, 0, ms(1000)); got != ms(1000) {
			t.Errorf("okGap of an instance without a 200 = %v, want 1s", got)
		}
	})
	t.Run("percentile", func(t *testing.T) {
		ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
		if got := percentile(ds, 0.5); got != 5 {
			t.Errorf("p50 = %v, want 5", got)
		}
		if got := percentile(ds, 0.99); got != 10 {
			t.Errorf("p99 = %v, want 10", got)
		}
		if got := percentile(nil, 0.99); got != 0 {
			t.Errorf("p99 of nothing = %v, want 0", got)
		}
	})
}
