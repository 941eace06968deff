package bizid

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"sync"
	"testing"
)

// sipRef is SipHash-2-4 of any message, written from the paper, to check
// the two-word version against the reference vectors.
func sipRef(k0, k1 uint64, msg []byte) uint64 {
	v0, v1, v2, v3 := k0^0x736f6d6570736575, k1^0x646f72616e646f6d, k0^0x6c7967656e657261, k1^0x7465646279746573
	compress := func(m uint64) {
		v3 ^= m
		for range 2 {
			v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		}
		v0 ^= m
	}
	n := len(msg)
	for len(msg) >= 8 {
		compress(binary.LittleEndian.Uint64(msg))
		msg = msg[8:]
	}
	last := uint64(n) << 56
	for i, c := range msg {
		last |= uint64(c) << (8 * i)
	}
	compress(last)
	v2 ^= 0xff
	for range 4 {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	return v0 ^ v1 ^ v2 ^ v3
}

func TestSipHashVectors(t *testing.T) {
	var key [16]byte
	msg := make([]byte, 16)
	for i := range 16 {
		key[i], msg[i] = byte(i), byte(i)
	}
	k0, k1 := binary.LittleEndian.Uint64(key[:]), binary.LittleEndian.Uint64(key[8:])
	// The paper's appendix A: key 00..0f, message 00..0e.
	if got := sipRef(k0, k1, msg[:15]); got != 0xa129ca6149be45e5 {
		t.Fatalf("SipHash-2-4 of the paper's vector = %#x", got)
	}
	for _, m := range [][2]uint64{{0x0706050403020100, 0x0f0e0d0c0b0a0908}, {1, 2}, {0, 1<<63 - 1}} {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:], m[0])
		binary.LittleEndian.PutUint64(b[8:], m[1])
		if got, want := sip2x64(k0, k1, m[0], m[1]), sipRef(k0, k1, b[:]); got != want {
			t.Fatalf("sip2x64(%v) = %#x, the reference says %#x", m, got, want)
		}
	}
}

func testCipher(tb testing.TB, width int) *Cipher {
	tb.Helper()
	c, err := NewCipher([]byte("a key of the fleet, 32 bytes long"), width)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestOpaqueRoundTrip encodes a large sample, in parallel: the first
// numbers a tag issues, numbers near the top of the domain and a spread in
// between. Every id is in the domain, none is seen twice, and each decodes
// to its number.
func TestOpaqueRoundTrip(t *testing.T) {
	for _, width := range []int{Bits63, Bits53} {
		c := testCipher(t, width)
		const perWorker, workers = 50_000, 8
		var (
			mu   sync.Mutex
			seen = make(map[int64]int64, perWorker*workers*3/2)
			wg   sync.WaitGroup
		)
		for w := range workers {
			wg.Go(func() {
				local := make(map[int64]int64, perWorker)
				for i := range int64(perWorker) {
					var n int64
					switch w % 3 {
					case 0:
						n = int64(w/3)*perWorker + i + 1 // the first numbers
					case 1:
						n = c.Max() - int64(w/3)*perWorker - i // the top
					default:
						n = int64(bits.RotateLeft64(uint64(i*2654435761+int64(w)), 17)%uint64(c.Max())) + 1
					}
					id, err := c.Encode(n)
					if err != nil {
						t.Error(err)
						return
					}
					if id < 1 || id > c.Max() {
						t.Errorf("Encode(%d) = %d, outside 1..%d", n, id, c.Max())
						return
					}
					back, err := c.Decode(id)
					if err != nil || back != n {
						t.Errorf("Decode(Encode(%d)) = %d, %v", n, back, err)
						return
					}
					local[n] = id
				}
				mu.Lock()
				for n, id := range local {
					seen[id] = n
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		// The spread samples may repeat a number; count distinct numbers.
		numbers := make(map[int64]bool, len(seen))
		for _, n := range seen {
			numbers[n] = true
		}
		if len(numbers) != len(seen) {
			t.Fatalf("%d bits: %d ids for %d numbers: duplicates", width, len(seen), len(numbers))
		}
		if len(seen) < perWorker*workers*9/10 {
			t.Fatalf("%d bits: only %d distinct ids", width, len(seen))
		}
	}
}

// TestOpaqueHidesOrder checks that consecutive numbers do not give close or
// ordered ids: about half of the steps go down, and the ids spread over the
// domain.
func TestOpaqueHidesOrder(t *testing.T) {
	c := testCipher(t, Bits53)
	const n = 10_000
	down, high := 0, 0
	prev, _ := c.Encode(1)
	for i := int64(2); i <= n; i++ {
		id, _ := c.Encode(i)
		if id < prev {
			down++
		}
		if id > c.Max()/2 {
			high++
		}
		prev = id
	}
	if down < n*45/100 || down > n*55/100 || high < n*45/100 || high > n*55/100 {
		t.Fatalf("%d of %d steps go down and %d ids are in the upper half: not scattered", down, n, high)
	}
}

func TestCipherRefuses(t *testing.T) {
	if _, err := NewCipher([]byte("short"), Bits63); !errors.Is(err, ErrNoKey) {
		t.Fatalf("short key: %v", err)
	}
	if _, err := NewCipher([]byte("a key of the fleet, 32 bytes long"), 32); !errors.Is(err, ErrInvalidFormat) {
		t.Fatalf("32 bits: %v", err)
	}
	c := testCipher(t, Bits53)
	for _, n := range []int64{0, -1, 1 << 53} {
		if _, err := c.Encode(n); !errors.Is(err, ErrOutOfDomain) {
			t.Errorf("Encode(%d): %v", n, err)
		}
		if _, err := c.Decode(n); !errors.Is(err, ErrOutOfDomain) {
			t.Errorf("Decode(%d): %v", n, err)
		}
	}
	a, _ := NewCipher([]byte("a key of the fleet, 32 bytes long"), Bits63)
	b, _ := NewCipher([]byte("another key of the fleet, rotated"), Bits63)
	if a.KeyID() == b.KeyID() || len(a.KeyID()) != 12 {
		t.Fatalf("key ids %q and %q", a.KeyID(), b.KeyID())
	}
	x, _ := a.Encode(42)
	y, _ := b.Encode(42)
	if x == y {
		t.Fatal("two keys map 42 to the same id")
	}
}

// TestOpaqueSmallDomainIsBijection checks the whole network exhaustively
// over a small width: it is the same code at 63 and 53 bits.
func TestOpaqueSmallDomainIsBijection(t *testing.T) {
	c := testCipher(t, Bits53)
	c.n, c.u, c.v = 15, 7, 8
	seen := make([]bool, 1<<15)
	for n := int64(1); n <= c.Max(); n++ {
		id, err := c.Encode(n)
		if err != nil || id < 1 || id > c.Max() || seen[id] {
			t.Fatalf("Encode(%d) = %d, %v (seen %v)", n, id, err, err == nil && id >= 1 && id <= c.Max() && seen[id])
		}
		seen[id] = true
		if back, _ := c.Decode(id); back != n {
			t.Fatalf("Decode(Encode(%d)) = %d", n, back)
		}
	}
}
