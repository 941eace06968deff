package bizid

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"strings"
)

// The widths of an opaque tag's numbers.
const (
	// Bits63 spans every positive int64.
	Bits63 = 63
	// Bits53 spans the integers a JavaScript number holds exactly.
	Bits53 = 53
	// MinKeyLen is the shortest secret a Cipher accepts, in bytes.
	MinKeyLen = 16
	// rounds of the Feistel network; FF1 uses as many.
	rounds = 10
)

// Cipher is a keyed bijection of the numbers 1 .. 2^bits-1 onto
// themselves: an unbalanced Feistel network over bits bits whose round
// function is SipHash-2-4 of the round and the half, with cycle walking
// over the one value of the network's domain that is not a number
// (2^bits-1, which is 0 before the shift by one). It is safe for
// concurrent use.
type Cipher struct {
	k0, k1 uint64
	n      uint // bits
	u, v   uint // widths of the halves, u+v = n
	keyID  string
}

// NewCipher returns the bijection of width bits (Bits63 or Bits53) keyed
// by secret, which must hold at least MinKeyLen bytes: the one every
// opaque tag made with secret before per-tag permutations shares.
func NewCipher(secret []byte, width int) (*Cipher, error) {
	return newCipher(secret, width, append([]byte("leaf opaque ids v1\x00"), secret...), KeyID(secret))
}

// NewTagCipher returns the bijection of width bits of the tag named tag,
// keyed by secret and the tag's name: each tag's ids are a permutation of
// its own, so that two tags' k-th ids differ and say nothing of each
// other.
func NewTagCipher(secret []byte, width int, tag string) (*Cipher, error) {
	material := append([]byte("leaf opaque ids v2\x00"), secret...)
	material = append(append(material, 0), tag...)
	return newCipher(secret, width, material, TagKeyID(KeyID(secret)))
}

func newCipher(secret []byte, width int, material []byte, keyID string) (*Cipher, error) {
	if width != Bits63 && width != Bits53 {
		return nil, fmt.Errorf("%w: opaque ids have 63 or 53 bits, not %d", ErrInvalidFormat, width)
	}
	if len(secret) < MinKeyLen {
		return nil, fmt.Errorf("%w: an opaque key needs at least %d bytes", ErrNoKey, MinKeyLen)
	}
	h := sha256.Sum256(material)
	n := uint(width)
	return &Cipher{
		k0: binary.LittleEndian.Uint64(h[0:]), k1: binary.LittleEndian.Uint64(h[8:]),
		n: n, u: n / 2, v: n - n/2, keyID: keyID,
	}, nil
}

// KeyID is the fingerprint of a secret that a tag stores to say which key
// its numbers were made with: 12 hex digits of a hash, from which the
// secret cannot be found.
func KeyID(secret []byte) string {
	h := sha256.Sum256(append([]byte("leaf opaque key id v1\x00"), secret...))
	return hex.EncodeToString(h[:6])
}

// perTag marks the key id of a tag whose ids are a permutation of its own
// (NewTagCipher): "t" before the key's fingerprint. A tag's key id without
// it was made before, and keeps the permutation it shares with the tags of
// its key: changing a tag's permutation could issue an id it gave before.
// An instance of a version before per-tag permutations finds no key of
// such an id, and refuses the tag's ids rather than make others.
const perTag = "t"

// TagKeyID is the key id a new opaque tag stores: the key's fingerprint
// marked for a permutation of the tag's own.
func TagKeyID(fingerprint string) string { return perTag + fingerprint }

// SplitKeyID is the fingerprint of the key a tag's key id names, and
// whether the tag's ids are a permutation of its own.
func SplitKeyID(id string) (fingerprint string, ownPermutation bool) {
	if len(id) == 13 && strings.HasPrefix(id, perTag) {
		return id[1:], true
	}
	return id, false
}

// KeyID is the fingerprint of the cipher's secret.
func (c *Cipher) KeyID() string { return c.keyID }

// Bits is the width of the cipher's numbers.
func (c *Cipher) Bits() int { return int(c.n) }

// Max is the largest number of the domain, 2^bits-1.
func (c *Cipher) Max() int64 { return int64(1)<<c.n - 1 }

// Encode maps n, 1 <= n <= Max, to its opaque id, in the same range.
func (c *Cipher) Encode(n int64) (int64, error) {
	if n < 1 || n > c.Max() {
		return 0, fmt.Errorf("%w: %d is outside 1..%d", ErrOutOfDomain, n, c.Max())
	}
	hole := uint64(c.Max()) // the network's value that is no number
	y := c.encrypt(uint64(n - 1))
	for y == hole {
		y = c.encrypt(y)
	}
	return int64(y + 1), nil
}

// Decode is the inverse of Encode.
func (c *Cipher) Decode(id int64) (int64, error) {
	if id < 1 || id > c.Max() {
		return 0, fmt.Errorf("%w: %d is outside 1..%d", ErrOutOfDomain, id, c.Max())
	}
	hole := uint64(c.Max())
	x := c.decrypt(uint64(id - 1))
	for x == hole {
		x = c.decrypt(x)
	}
	return int64(x + 1), nil
}

// encrypt runs the network forward over x < 2^n. The left half a has u
// bits before an even round and v after it; each round adds the round
// function of the right half to the left one, modulo its width, and
// swaps them.
func (c *Cipher) encrypt(x uint64) uint64 {
	a, b := x>>c.v, x&(1<<c.v-1)
	for i := range uint64(rounds) {
		w := c.u
		if i&1 == 1 {
			w = c.v
		}
		a, b = b, (a+c.round(i, b))&(1<<w-1)
	}
	return a<<c.v | b
}

func (c *Cipher) decrypt(y uint64) uint64 {
	a, b := y>>c.v, y&(1<<c.v-1)
	for i := uint64(rounds); i > 0; {
		i--
		w := c.u
		if i&1 == 1 {
			w = c.v
		}
		a, b = (b-c.round(i, a))&(1<<w-1), a
	}
	return a<<c.v | b
}

// round is SipHash-2-4 keyed by the cipher of the 16 bytes i, x (both
// little-endian).
func (c *Cipher) round(i, x uint64) uint64 {
	return sip2x64(c.k0, c.k1, i, x)
}

// sip2x64 is SipHash-2-4 of a 16-byte message made of two little-endian
// words.
func sip2x64(k0, k1, m0, m1 uint64) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	for _, m := range [3]uint64{m0, m1, 16 << 56} {
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
	}
	v2 ^= 0xff
	for range 4 {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	return v0 ^ v1 ^ v2 ^ v3
}

func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13)
	v1 ^= v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16)
	v3 ^= v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21)
	v3 ^= v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17)
	v1 ^= v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}
