package segment

import (
	"math/bits"
	"sync/atomic"
)

// table maps tags to buffers for the hot path. Readers take no lock: a
// slot's tag is written before its buffer is published with an atomic
// store, and never changed after, so a reader that finds a buffer in a
// slot reads a complete tag. Writers hold the allocator's mutex. A tag is
// added in place, in O(1); when the used slots would pass the most the
// table holds (see fits), a table twice the size is built and published:
// every tag is copied once per doubling, so adding a tag costs O(1)
// amortised. Dropping tags (rows gone
// from the database: rare, and batched by the refresh) builds a new table
// without them, so the hot path has no marker of a dropped tag to check.
//
// It is an open-addressing table with a cheap hash of the tag's length and
// its first and last eight bytes: tags come from the database, so a lookup
// costs a few nanoseconds instead of a general map's string hashing.
type table struct {
	shift   uint // 64 - log2(len(entries)): the hash's high bits index
	mask    uint64
	entries []entry
	used    int // slots with a tag; written under the allocator's mutex
}

// entry is one tag. lo and hi are the tag's first and last eight bytes
// (see lookup); for a tag of up to 16 bytes they and its length are the
// whole tag, so most lookups compare three words and no bytes. lo, hi and
// tag are written once, before b is first stored.
type entry struct {
	lo, hi uint64
	tag    string
	b      atomic.Pointer[buffer] // nil: an empty slot
}

// newTable returns an empty table with room for n tags.
func newTable(n int) *table {
	size := uint64(8)
	for !fits(n, size) {
		size <<= 1
	}
	return newTableOf(size)
}

// newTableOf returns an empty table of size slots, a power of two.
func newTableOf(size uint64) *table {
	return &table{shift: uint(64 - bits.TrailingZeros64(size)), mask: size - 1, entries: make([]entry, size)}
}

// bigTable is the size from which a table is filled up to 7/8 of its
// slots rather than half. A small table is read from the caches, where
// each probe of linear probing costs; a big one is not, and a lookup
// costs its cache misses: its few more probes read the entries after the
// first, mostly on the same line or the next, which the processor fetches
// ahead. At 100,000 tags the table is 5 MiB instead of 10 (52 bytes a tag
// instead of 105), and Next among 100,000 tags asked in a random order
// (BenchmarkNextManyTags) takes the same time within the noise.
const bigTable = 4096

// fits reports whether n tags fit in a table of size slots.
func fits(n int, size uint64) bool {
	if size < bigTable {
		return uint64(n)*2 <= size
	}
	return uint64(n)*8 <= size*7
}

// set publishes b as tag's buffer and returns the table to use from now
// on: t itself, or a larger one when t filled up. Called with the
// allocator's mutex held; t is then no longer written.
func (t *table) set(tag string, b *buffer) *table {
	e, old, lo, hi := t.lookup(tag)
	if old == nil {
		if !fits(t.used+1, uint64(len(t.entries))) {
			return t.grow().set(tag, b)
		}
		e.lo, e.hi, e.tag = lo, hi, tag
		t.used++
	}
	e.b.Store(b)
	return t
}

// grow returns a table twice the size holding t's tags.
func (t *table) grow() *table {
	n := newTableOf(uint64(len(t.entries)) * 2)
	for i := range t.entries {
		e := &t.entries[i]
		if b := e.b.Load(); b != nil {
			ne, _, _, _ := n.lookup(e.tag)
			ne.lo, ne.hi, ne.tag = e.lo, e.hi, e.tag
			ne.b.Store(b)
			n.used++
		}
	}
	return n
}

// each calls f with every buffer of t.
func (t *table) each(f func(*buffer)) {
	for i := range t.entries {
		if b := t.entries[i].b.Load(); b != nil {
			f(b)
		}
	}
}

// without returns a new table of t's buffers but those in gone.
func (t *table) without(gone map[*buffer]bool) *table {
	n := newTable(t.used - len(gone))
	t.each(func(b *buffer) {
		if !gone[b] {
			n = n.set(b.tag, b)
		}
	})
	return n
}

// get returns the tag's buffer, or nil.
func (t *table) get(tag string) *buffer {
	_, b, _, _ := t.lookup(tag)
	return b
}

// lookup returns the tag's entry and its buffer, or the empty entry where
// it would go and nil, and the words the entry keeps. The buffer is the
// one the search read, never read again from the entry: a writer may fill
// an entry the search found empty the moment after, with another tag.
// The hash is computed here rather than in a call: this is the
// allocator's hot path.
func (t *table) lookup(tag string) (e *entry, b *buffer, lo, hi uint64) {
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
probe:
	for i := t.home(lo, hi, len(tag)); ; i = (i + 1) & t.mask {
		e = &t.entries[i]
		if b = e.b.Load(); b == nil {
			return e, nil, lo, hi
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
		return e, b, lo, hi
	}
}

// home is the slot where the search for a tag of n bytes whose words
// (see lookup) are lo and hi starts.
func (t *table) home(lo, hi uint64, n int) uint64 {
	return ((lo ^ bits.RotateLeft64(hi, 29) ^ uint64(n)<<59) * hashPrime) >> (t.shift & 63)
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
