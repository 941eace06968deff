package client

import (
	"math/bits"
	"slices"
)

// table maps tags to their buffers on the hot path. It is an
// open-addressing table, built whole when a tag is added and never written
// after, so lookups take no lock. A slot is found and matched by the tag's
// length and two words of its bytes (keyOf) instead of a hash of every
// byte: with Go's map, the lookup cost more than the atomic add after it.
type table struct {
	mask  uint64 // len(slots) - 1
	slots []slot
	bufs  []*tagBuffer // the same contents, to rebuild from
}

type slot struct {
	k0, k1 uint64
	tag    string
	buf    *tagBuffer
}

// newTable returns a table of bufs, at most half full.
func newTable(bufs []*tagBuffer) *table {
	n := uint64(8)
	for n < 2*uint64(len(bufs)) {
		n *= 2
	}
	t := &table{mask: n - 1, slots: make([]slot, n), bufs: bufs}
	for _, b := range bufs {
		k0, k1 := keyOf(b.tag)
		i := t.home(k0, k1, len(b.tag))
		for t.slots[i].buf != nil {
			i = (i + 1) & t.mask
		}
		t.slots[i] = slot{k0: k0, k1: k1, tag: b.tag, buf: b}
	}
	return t
}

// with returns a new table with b added.
func (t *table) with(b *tagBuffer) *table {
	return newTable(append(slices.Clip(t.bufs), b))
}

// get returns the tag's buffer, or nil.
func (t *table) get(tag string) *tagBuffer {
	k0, k1 := keyOf(tag)
	n := len(tag)
	for i := t.home(k0, k1, n); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		// The words are the whole of a tag of up to 16 bytes; a longer
		// one also compares what lies between them.
		if s.buf == nil || s.k0 == k0 && s.k1 == k1 && len(s.tag) == n && (n <= 16 || s.tag[8:n-8] == tag[8:n-8]) {
			return s.buf
		}
	}
}

// home is the first slot to look at. The key's halves are folded first,
// so that every bit of it reaches the bits of the product that index.
func (t *table) home(k0, k1 uint64, n int) uint64 {
	x := bits.RotateLeft64(k0, 32) ^ k1 ^ uint64(n)<<56
	x ^= x >> 32
	return (x * 0xff51afd7ed558ccd >> 32) & t.mask
}

// keyOf reduces a tag to two words: its first and last eight bytes, or
// first and last four bytes for a tag of 4 to 7 bytes, or each byte for
// a shorter one. With the length they are the whole tag up to 16 bytes.
// (Next repeats it, to stay free of calls.)
func keyOf(tag string) (k0, k1 uint64) {
	switch n := len(tag); {
	case n >= 8:
		return le64(tag), le64(tag[n-8:])
	case n >= 4:
		return le32(tag), le32(tag[n-4:])
	case n > 0:
		return uint64(tag[0]) | uint64(tag[n/2])<<8 | uint64(tag[n-1])<<16, 0
	}
	return 0, 0
}

// le64 and le32 are written so that the compiler makes each one load.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}
