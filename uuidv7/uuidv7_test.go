package uuidv7_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/uuidv7"
)

// TestLayout checks the bits RFC 9562 section 5.7 fixes: 48 bits of
// big-endian Unix milliseconds, version 7 in the top four bits of byte 6,
// variant 0b10 in the top two bits of byte 8.
func TestLayout(t *testing.T) {
	at := time.UnixMilli(0x0123_4567_89AB)
	g := uuidv7.New(uuidv7.Options{Now: func() time.Time { return at }})
	u := g.New()
	if !bytes.Equal(u[:6], []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xAB}) {
		t.Fatalf("timestamp bytes % x", u[:6])
	}
	if u[6]>>4 != 7 || u.Version() != 7 {
		t.Fatalf("version nibble %x", u[6]>>4)
	}
	if u[8]>>6 != 0b10 {
		t.Fatalf("variant bits %02b", u[8]>>6)
	}
	if !u.Time().Equal(at) {
		t.Fatalf("Time() = %v, want %v", u.Time(), at)
	}
	s := u.String()
	if len(s) != 36 || s[14] != '7' || !strings.ContainsRune("89ab", rune(s[19])) || s != strings.ToLower(s) {
		t.Fatalf("canonical form %q", s)
	}
	back, err := uuidv7.Parse(strings.ToUpper(s))
	if err != nil || back != u {
		t.Fatalf("Parse(%q) = %v, %v", s, back, err)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{"", "0190a6e0-5c5b-7abc-8def", "0190a6e0x5c5b-7abc-8def-0123456789ab", "0190a6e0-5c5b-7abc-8def-0123456789ag"} {
		if _, err := uuidv7.Parse(s); !errors.Is(err, uuidv7.ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid", s, err)
		}
	}
	for _, s := range []string{"0190a6e0-5c5b-4abc-8def-0123456789ab", "0190a6e0-5c5b-7abc-cdef-0123456789ab"} {
		if _, err := uuidv7.Parse(s); !errors.Is(err, uuidv7.ErrNotV7) {
			t.Errorf("Parse(%q) = %v, want ErrNotV7", s, err)
		}
	}
}

// TestOrderWithinAMillisecondAndBackwards: many UUIDs in one millisecond,
// enough to run the counter out, and a clock that steps back, still come
// out strictly increasing.
func TestOrderWithinAMillisecondAndBackwards(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	maxRand := func(b []byte) { // the largest counter start and increments
		for i := range b {
			b[i] = 0xff
		}
	}
	g := uuidv7.New(uuidv7.Options{Now: func() time.Time { return now }, Rand: maxRand})
	prev := g.New()
	for i := range 10_000 {
		if i == 5000 {
			now = now.Add(-time.Hour)
		}
		u := g.New()
		if bytes.Compare(u[:], prev[:]) <= 0 {
			t.Fatalf("UUID %d %v not after %v", i, u, prev)
		}
		if u.Version() != 7 || u[8]>>6 != 0b10 {
			t.Fatalf("UUID %d %v lost its version or variant", i, u)
		}
		prev = u
	}
	if prev.Time().Before(time.UnixMilli(1_700_000_000_000)) {
		t.Fatalf("a clock that stepped back moved the UUIDs back: %v", prev.Time())
	}
}

// TestConcurrentUniqueAndOrdered: under concurrency every UUID is unique,
// and each goroutine sees its own strictly increasing.
func TestConcurrentUniqueAndOrdered(t *testing.T) {
	g := uuidv7.New(uuidv7.Options{})
	const workers, each = 8, 20_000
	out := make([][]uuidv7.UUID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			us := make([]uuidv7.UUID, each)
			for i := range us {
				us[i] = g.New()
				if i > 0 && bytes.Compare(us[i][:], us[i-1][:]) <= 0 {
					t.Errorf("worker %d: %v after %v", w, us[i], us[i-1])
					return
				}
			}
			out[w] = us
		})
	}
	wg.Wait()
	all := slices.Concat(out...)
	slices.SortFunc(all, func(a, b uuidv7.UUID) int { return bytes.Compare(a[:], b[:]) })
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("duplicate %v", all[i])
		}
	}
	if len(all) != workers*each {
		t.Fatalf("%d UUIDs, want %d", len(all), workers*each)
	}
}

func BenchmarkNew(b *testing.B) {
	g := uuidv7.New(uuidv7.Options{})
	for b.Loop() {
		_ = g.New()
	}
}
