package segment

import (
	"errors"
	"maps"
	"math"
)

// Bounds. A tag may declare the largest id it issues (SetBounds), below the
// int64 maximum: an INT column's 2147483647, or the 9007199254740991 a
// JavaScript number holds. A range is cut at the bound when it is loaded,
// a tag whose range reached it loads no more, and a call past it is
// ErrBoundReached: never an id past the bound, never a wrap.

// ErrBoundReached: the tag issued the last id below its declared bound.
var ErrBoundReached = errors.New("biz tag has issued the last id of its bound")

// SetBounds makes bounds (tag → largest id) the tags' declared bounds; a tag
// not in it has none. A tag whose bound changed loses its buffer, so that
// its next id comes from a range loaded under the new bound: the ids left
// in the old ranges are skipped.
func (a *Allocator) SetBounds(bounds map[string]int64) {
	old := a.bounds.Swap(&bounds)
	var was map[string]int64
	if old != nil {
		was = *old
	}
	if maps.Equal(was, bounds) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for tag, b := range bounds {
		if was[tag] != b && a.buffers.Load().get(tag) != nil {
			a.dropLocked(tag)
		}
	}
	for tag := range was {
		if _, ok := bounds[tag]; !ok && a.buffers.Load().get(tag) != nil {
			a.dropLocked(tag)
		}
	}
}

// SetBound makes bound tag's declared bound (0: none), the others kept.
func (a *Allocator) SetBound(tag string, bound int64) {
	next := maps.Clone(a.Bounds())
	if next == nil {
		next = map[string]int64{}
	}
	if bound > 0 {
		next[tag] = bound
	} else {
		delete(next, tag)
	}
	a.SetBounds(next)
}

// Bound is tag's declared bound, math.MaxInt64 when it has none.
func (a *Allocator) Bound(tag string) int64 {
	if m := a.bounds.Load(); m != nil {
		if b, ok := (*m)[tag]; ok {
			return b
		}
	}
	return math.MaxInt64
}

// Bounds is every declared bound.
func (a *Allocator) Bounds() map[string]int64 {
	if m := a.bounds.Load(); m != nil {
		return *m
	}
	return nil
}

// reached says whether s, a segment of tag, ends at its bound: no range
// after it is loaded.
func (s *seg) reached(bound int64) bool {
	return bound < math.MaxInt64 && s.start+int64(s.size) > bound
}

// Headroom is how far a bounded tag is from its bound, as this process
// knows it.
type Headroom struct {
	Tag   string
	Bound int64
	// Taken is the highest id of the ranges this process took of the
	// tag's row (0: none yet): the row is at least there, whatever other
	// instances took since.
	Taken int64
	// SecondsLeft is how long the ids left last at the rate the row moved
	// lately, as the caller measured it; 0 when not known (no move seen).
	SecondsLeft float64
}

// Headroom lists every bounded tag with the highest id taken here.
func (a *Allocator) Headroom() []Headroom {
	bounds := a.Bounds()
	out := make([]Headroom, 0, len(bounds))
	for tag, b := range bounds {
		h := Headroom{Tag: tag, Bound: b}
		if m := a.mark(tag); m.high != noMark.high {
			h.Taken = m.high - 1
		}
		out = append(out, h)
	}
	return out
}
