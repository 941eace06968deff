package base62_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/leafid/leaf/base62"
)

func TestKnownValues(t *testing.T) {
	for _, tc := range []struct {
		id   int64
		text string
	}{
		{0, "00000000000"},
		{1, "00000000001"},
		{61, "0000000000z"},
		{62, "00000000010"},
		{math.MaxInt64, "AzL8n0Y58m7"},
	} {
		if got := base62.Encode(tc.id); got != tc.text {
			t.Errorf("Encode(%d) = %q, want %q", tc.id, got, tc.text)
		}
		if got, err := base62.Decode(tc.text); err != nil || got != tc.id {
			t.Errorf("Decode(%q) = %d, %v; want %d", tc.text, got, err, tc.id)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, s := range []string{"", "0000000000", "000000000000", "0000000000-", "AzL8n0Y58m8", "zzzzzzzzzzz", "0000000000\x00", "000000000é"} {
		if v, err := base62.Decode(s); !errors.Is(err, base62.ErrInvalid) {
			t.Errorf("Decode(%q) = %d, %v; want ErrInvalid", s, v, err)
		}
	}
}

// FuzzRoundTripAndOrder: decode(encode(x)) == x, and text order is number
// order.
func FuzzRoundTripAndOrder(f *testing.F) {
	f.Add(int64(0), int64(1))
	f.Add(int64(61), int64(62))
	f.Add(int64(math.MaxInt64-1), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, a, b int64) {
		if a < 0 {
			a = -(a + 1)
		}
		if b < 0 {
			b = -(b + 1)
		}
		ea, eb := base62.Encode(a), base62.Encode(b)
		if len(ea) != base62.Width {
			t.Fatalf("Encode(%d) = %q, not %d characters", a, ea, base62.Width)
		}
		if got, err := base62.Decode(ea); err != nil || got != a {
			t.Fatalf("Decode(Encode(%d)) = %d, %v", a, got, err)
		}
		if cmp := strings.Compare(ea, eb); (a < b) != (cmp < 0) || (a == b) != (cmp == 0) {
			t.Fatalf("order: %d %q vs %d %q", a, ea, b, eb)
		}
	})
}

func TestDecodeAnyString(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		b := make([]byte, base62.Width)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		v, err := base62.Decode(string(b))
		if err == nil && base62.Encode(v) != string(b) {
			t.Fatalf("Decode(%q) = %d, which encodes differently", b, v)
		}
	}
}
