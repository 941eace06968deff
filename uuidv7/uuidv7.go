// Package uuidv7 makes RFC 9562 version 7 UUIDs: 48 bits of Unix
// milliseconds, big-endian, then the version (7), 12 bits rand_a, the
// variant (binary 10) and 62 bits rand_b. Such UUIDs sort by the time they
// were made, which random (version 4) UUIDs do not, and need no
// coordination between instances.
//
// Within a generator they are strictly increasing, by the RFC's method 2
// ("monotonic random", section 6.2): the 74 bits of rand_a and rand_b
// together are a random number drawn afresh each millisecond, its top bit
// clear so that it has room to grow, and incremented by a random amount
// (1 to 2^32) for each further UUID in the same millisecond. If that
// counter runs out, or the clock steps back, the millisecond of the last
// UUID is carried forward (section 6.2 allows it) until the clock catches
// up, so order is kept without waiting.
package uuidv7

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// UUID is a 16-byte UUID.
type UUID [16]byte

// maxMs is the largest 48-bit millisecond count (the year 10889).
const maxMs = 1<<48 - 1

// ErrInvalid: text that is not a UUID in canonical form.
var ErrInvalid = errors.New("invalid UUID")

// ErrNotV7: a UUID whose version or variant is not that of version 7.
var ErrNotV7 = errors.New("not an RFC 9562 version 7 UUID")

// Generator makes increasing version 7 UUIDs. It is safe for concurrent
// use; the zero value is not usable, call New.
type Generator struct {
	now  func() time.Time
	rand func(b []byte)

	issued atomic.Uint64

	mu     sync.Mutex // protects the fields below
	lastMs int64
	hi     uint16 // the 12 bits of rand_a
	lo     uint64 // the 62 bits of rand_b
}

// Options of New; zero fields take the real clock and crypto/rand.
type Options struct {
	Now  func() time.Time
	Rand func(b []byte) // fills b with random bytes
}

// New returns a generator.
func New(o Options) *Generator {
	g := &Generator{now: o.Now, rand: o.Rand}
	if g.now == nil {
		g.now = time.Now
	}
	if g.rand == nil {
		g.rand = func(b []byte) { _, _ = rand.Read(b) } // never fails (crypto/rand's documentation)
	}
	return g
}

// Issued counts the UUIDs made.
func (g *Generator) Issued() uint64 { return g.issued.Load() }

// New returns the next UUID.
func (g *Generator) New() UUID {
	g.issued.Add(1)
	var r [12]byte
	g.rand(r[:])
	ms := g.now().UnixMilli()
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case ms > g.lastMs:
		g.freshLocked(ms, r[:])
	default: // the same millisecond, or the clock behind the last UUID
		inc := uint64(binary.BigEndian.Uint32(r[8:12])) + 1
		lo := g.lo + inc
		hi := g.hi
		if lo >= 1<<62 { // carry into rand_a
			lo -= 1 << 62
			hi++
		}
		if hi >= 1<<12 { // the counter ran out: borrow the next millisecond
			g.freshLocked(g.lastMs+1, r[:])
			break
		}
		g.hi, g.lo = hi, lo
	}
	return compose(g.lastMs, g.hi, g.lo)
}

// freshLocked starts millisecond ms with a random counter whose top bit is clear.
// Called with g.mu held.
func (g *Generator) freshLocked(ms int64, r []byte) {
	g.lastMs = min(ms, maxMs)
	g.hi = binary.BigEndian.Uint16(r[0:]) & (1<<11 - 1)
	g.lo = binary.BigEndian.Uint64(r[2:10]) & (1<<62 - 1)
}

func compose(ms int64, hi uint16, lo uint64) UUID {
	var u UUID
	binary.BigEndian.PutUint64(u[0:8], uint64(ms)<<16|0x7000|uint64(hi))
	binary.BigEndian.PutUint64(u[8:16], 0b10<<62|lo)
	return u
}

// Time is when u was made, to the millisecond. It is meaningful only for
// a version 7 UUID (see Parse).
func (u UUID) Time() time.Time {
	return time.UnixMilli(int64(binary.BigEndian.Uint64(u[0:8]) >> 16)).UTC()
}

// Version is the UUID's version field.
func (u UUID) Version() int { return int(u[6] >> 4) }

// String is the canonical form: 8-4-4-4-12 lower-case hex digits.
func (u UUID) String() string { return string(u.Append(nil)) }

// Append appends the canonical form of u to b.
func (u UUID) Append(b []byte) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], u[10:16])
	return append(b, buf[:]...)
}

// Parse reads a UUID in canonical form (either case) and checks that it
// is version 7 with the RFC's variant.
func Parse(s string) (UUID, error) {
	var u UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, fmt.Errorf("%w: want 36 characters in the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", ErrInvalid)
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		if _, err := hex.Decode(u[j:j+1], []byte(s[i:i+2])); err != nil {
			return UUID{}, fmt.Errorf("%w: %q at %d is not a hex digit", ErrInvalid, s[i:i+2], i)
		}
		i += 2
		j++
	}
	if u.Version() != 7 || u[8]>>6 != 0b10 {
		return UUID{}, fmt.Errorf("%w: version %d, variant bits %02b", ErrNotV7, u.Version(), u[8]>>6)
	}
	return u, nil
}
