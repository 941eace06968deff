package segment

import "math/bits"

// table maps tags to buffers for the hot path. It is built whole whenever
// the set of tags changes and never written after, so readers need no lock.
// It is an open-addressing table with a cheap hash of the tag's length and
// its first and last eight bytes: tags come from the database, so a lookup
// costs a few nanoseconds instead of a general map's string hashing.
type table struct {
	shift   uint // 64 - log2(len(entries)): the hash's high bits index
	mask    uint64
	entries []entry
	byTag   map[string]*buffer // the same contents, for the slow paths
}

// entry is one tag. lo and hi are the tag's first and last eight bytes
// (see lookup); for a tag of up to 16 bytes they and its length are the
// whole tag, so most lookups compare three words and no bytes.
type entry struct {
	lo, hi uint64
	tag    string
	b      *buffer
}

func newTable(byTag map[string]*buffer) *table {
	size := uint64(8)
	for size < uint64(len(byTag))*2 {
		size <<= 1
	}
	t := &table{shift: uint(64 - bits.TrailingZeros64(size)), mask: size - 1, entries: make([]entry, size), byTag: byTag}
	for tag, b := range byTag {
		e, lo, hi := t.lookup(tag)
		*e = entry{lo: lo, hi: hi, tag: tag, b: b}
	}
	return t
}

// get returns the tag's buffer, or nil.
func (t *table) get(tag string) *buffer {
	e, _, _ := t.lookup(tag)
	return e.b
}

// lookup returns the tag's entry, or the empty one where it would go, and
// the words the entry keeps. The hash is computed here rather than in a
// call: this is the allocator's hot path.
func (t *table) lookup(tag string) (e *entry, lo, hi uint64) {
	switch n := len(tag); {
	case n >= 8:
		lo, hi = load64(tag), load64(tag[n-8:])
	case n >= 4:
		lo, hi = load32(tag), load32(tag[n-4:])
	default:
		for i := 0; i < n; i++ {
			lo |= uint64(tag[i]) << (8 * i)
		}
	}
	h := (lo ^ bits.RotateLeft64(hi, 29) ^ uint64(len(tag))<<59) * hashPrime
probe:
	for i := h >> (t.shift & 63); ; i = (i + 1) & t.mask {
		e = &t.entries[i]
		if e.b == nil {
			return e, lo, hi
		}
		if e.lo != lo || e.hi != hi || len(e.tag) != len(tag) {
			continue
		}
		// The first and last eight bytes are equal; compare the rest
		// eight at a time (the last word may overlap the tail). A loop
		// rather than ==, which would be a call: lookup calls nothing,
		// so it needs no stack frame.
		other := e.tag[:len(tag)]
		for j := 8; j < len(tag)-8; j += 8 {
			if load64(tag[j:]) != load64(other[j:]) {
				continue probe
			}
		}
		return e, lo, hi
	}
}

// hashPrime is 2^64 divided by the golden ratio. The hash is the length
// and the first and last eight bytes of a tag (four and four, or each byte,
// for shorter tags) times it; the table indexes by its high bits
// (Fibonacci hashing).
const hashPrime = 0x9E3779B97F4A7C15

func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}
