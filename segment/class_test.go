package segment_test

import (
	"errors"
	"math"
	"testing"

	"github.com/leafid/leaf/segment"
)

func TestClassRange(t *testing.T) {
	const B = segment.MaxStep
	tests := []struct {
		name        string
		c           segment.Class
		from, step  int64
		start, size int64
		err         error
	}{
		{"a set of one takes the row's range", segment.Class{N: 1}, 1, 1000, 1, 1000, nil},
		{"a set of one above its floor", segment.Class{Floor: 5000, N: 1}, 1, 1000, 5000, 1000, nil},
		{"class 0 in its first block", segment.Class{Block: B, N: 3, K: 0}, 1, 1000, 1, 1000, nil},
		{"class 1 jumps to its block", segment.Class{Block: B, N: 3, K: 1}, 1, 1000, B, 1000, nil},
		{"class 2 jumps to its block", segment.Class{Block: B, N: 3, K: 2}, 7, 1000, 2 * B, 1000, nil},
		{"cut at the block's end", segment.Class{Block: B, N: 3, K: 1}, 2*B - 10, 1000, 2*B - 10, 10, nil},
		{"past its block, the next of its class", segment.Class{Block: B, N: 3, K: 1}, 2 * B, 1000, 4 * B, 1000, nil},
		{"blocks count from the floor", segment.Class{Floor: 100, Block: B, N: 2, K: 1}, 1, 1000, 100 + B, 1000, nil},
		{"the last id of a set of one", segment.Class{N: 1}, math.MaxInt64 - 1, 1000, math.MaxInt64 - 1, 1, nil},
		{"a set of one has issued its last", segment.Class{N: 1}, math.MaxInt64, 1000, 0, 0, segment.ErrExhausted},
		// blocks of 2^62-1 ids: [0, 2^62-1), [2^62-1, 2^63-2) and the last, cut to one id
		{"no block of the class left", segment.Class{Block: math.MaxInt64 / 2, N: 4, K: 3}, 1, 10, 0, 0, segment.ErrExhausted},
		{"the last block is cut by the int64 maximum", segment.Class{Block: math.MaxInt64 / 2, N: 3, K: 2}, 1, 10, math.MaxInt64 - 1, 1, nil},
		{"the end of a block near the int64 maximum", segment.Class{Block: math.MaxInt64 / 2, N: 3, K: 1}, math.MaxInt64 - 5, 10, math.MaxInt64 - 5, 4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.c.Validate(); err != nil && tt.c.Block >= segment.MaxStep {
				t.Fatal(err)
			}
			start, size, err := tt.c.Range(tt.from, tt.step)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("Range(%d, %d) error %v, want %v", tt.from, tt.step, err, tt.err)
			}
			if start != tt.start || size != tt.size {
				t.Fatalf("Range(%d, %d) = [%d, +%d), want [%d, +%d)", tt.from, tt.step, start, size, tt.start, tt.size)
			}
		})
	}
}

// FuzzClassRange: a range lies wholly in its class, starts at the first id
// of the class at or above where it was asked from, and two classes of one
// set never share an id.
func FuzzClassRange(f *testing.F) {
	f.Add(int64(0), int64(segment.MaxStep), int64(3), int64(1), int64(1), int64(1000))
	f.Add(int64(12345), int64(segment.MaxStep+7), int64(5), int64(4), int64(math.MaxInt64-3), int64(9))
	f.Add(int64(0), int64(math.MaxInt64/3), int64(2), int64(1), int64(math.MaxInt64/2), int64(segment.MaxStep))
	f.Fuzz(func(t *testing.T, floor, block, n, k, from, step int64) {
		c := segment.Class{Floor: floor, Block: block, N: n, K: k}
		if c.Validate() != nil || step < 1 || step > segment.MaxStep || from < 0 {
			return
		}
		start, size, err := c.Range(from, step)
		if err != nil {
			if !errors.Is(err, segment.ErrExhausted) {
				t.Fatalf("%+v.Range(%d, %d): %v", c, from, step, err)
			}
			return
		}
		first := max(from, floor, 1)
		if start < first || size < 1 || size > step || start > math.MaxInt64-size {
			t.Fatalf("%+v.Range(%d, %d) = [%d, +%d)", c, from, step, start, size)
		}
		if !c.Contains(start) || !c.Contains(start+size-1) {
			t.Fatalf("%+v.Range(%d, %d) = [%d, +%d) leaves the class", c, from, step, start, size)
		}
		if n > 1 && (start-floor)/block != (start+size-1-floor)/block {
			t.Fatalf("%+v.Range(%d, %d) = [%d, +%d) crosses a block", c, from, step, start, size)
		}
		if c.Contains(first) != (start == first) {
			t.Fatalf("%+v.Range(%d, %d) = [%d, +%d) skips ids of its class from %d", c, from, step, start, size, first)
		}
		for other := range n {
			if other == k {
				continue
			}
			o := c
			o.K = other
			if o.Contains(start) || o.Contains(start+size-1) {
				t.Fatalf("class %d of %+v holds ids of [%d, +%d)", other, c, start, size)
			}
		}
	})
}
