package segment

import (
	"fmt"
	"math"
)

// Class is the part of the number space that one store of a set of N
// independent stores hands out ids from, so that no two stores ever hand
// out the same id whatever their rows hold.
//
// From Floor up, the space is cut into blocks of Block ids; block j,
// [Floor + j*Block, Floor + (j+1)*Block), belongs to class j mod N. Store K
// takes ranges only inside blocks of class K: a range is contiguous and
// never crosses a block's end, so it may be shorter than asked. Below Floor
// nothing is issued under this set: the ids there belong to the sets
// before it, whose last id is below Floor.
//
// A set of one (N = 1) has no blocks to keep to: its ranges are the row's
// own, as with a single store.
type Class struct {
	Floor int64 // the first id of the set's space
	Block int64 // ids per block, at least the largest step
	N     int64 // stores in the set
	K     int64 // this store's class, 0 <= K < N
}

// Validate reports whether c describes a class.
func (c Class) Validate() error {
	switch {
	case c.N < 1:
		return fmt.Errorf("class: %d stores", c.N)
	case c.K < 0 || c.K >= c.N:
		return fmt.Errorf("class %d of %d", c.K, c.N)
	case c.Floor < 0:
		return fmt.Errorf("class: floor %d below 0", c.Floor)
	case c.N > 1 && c.Block < MaxStep:
		return fmt.Errorf("class: block of %d ids, below the largest step %d", c.Block, MaxStep)
	}
	return nil
}

// Range returns the first range of class c that starts at or above from:
// [start, start+size), size at most step. It returns ErrExhausted when the
// class has no id left there.
func (c Class) Range(from, step int64) (start, size int64, err error) {
	if step < 1 {
		return 0, 0, fmt.Errorf("step %d below 1", step)
	}
	from = max(from, c.Floor, 1)
	if c.N <= 1 {
		if from == math.MaxInt64 {
			return 0, 0, fmt.Errorf("%w: at %d", ErrExhausted, from)
		}
		return from, min(step, math.MaxInt64-from), nil
	}
	// Blocks 0 .. last start at or below the int64 maximum; the last one
	// may be cut short by it (max_id never passes it, so it is never an id).
	last := (math.MaxInt64 - c.Floor) / c.Block
	j := (from - c.Floor) / c.Block
	if r := j % c.N; r != c.K {
		j += (c.K - r + c.N) % c.N
		if j > last {
			return 0, 0, fmt.Errorf("%w: no block of class %d above %d", ErrExhausted, c.K, from)
		}
		from = c.Floor + j*c.Block
	}
	end := int64(math.MaxInt64)
	if j < last {
		end = c.Floor + (j+1)*c.Block
	}
	if from >= end {
		return 0, 0, fmt.Errorf("%w: no id of class %d above %d", ErrExhausted, c.K, from)
	}
	return from, min(step, end-from), nil
}

// Contains reports whether id is one class c may hand out.
func (c Class) Contains(id int64) bool {
	if id < max(c.Floor, 1) || id == math.MaxInt64 {
		return false
	}
	return c.N <= 1 || (id-c.Floor)/c.Block%c.N == c.K
}
