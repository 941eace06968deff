package uuidv7

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"
	"time"
)

// TestBoundsAgreeWithTime: a UUID lies within the bounds of an interval
// exactly when its time lies within the interval's milliseconds, and one
// made at an instant of the interval lies within them.
func TestBoundsAgreeWithTime(t *testing.T) {
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	at := func() time.Time {
		return time.UnixMilli(r.Int63n(4_000_000_000_000) - 100_000_000_000).Add(time.Duration(r.Intn(1e6)))
	}
	for i := range 20000 {
		from, to := at(), at()
		if i%3 == 0 {
			to = from.Add(time.Duration(r.Intn(3e6)))
		}
		lo, hi, err := Bounds(from, to)
		first, last := max(from.UnixMilli(), 0), to.UnixMilli()
		if err != nil {
			if !errors.Is(err, ErrInvalidInterval) || !to.Before(from) && last >= 0 {
				t.Fatalf("%v..%v: %v", from, to, err)
			}
			continue
		}
		for _, u := range []UUID{lo, hi, step(lo, -1), step(hi, 1), random(r), made(r, from, to)} {
			if u.Version() != 7 {
				continue
			}
			ms := u.Time().UnixMilli()
			in := bytes.Compare(u[:], lo[:]) >= 0 && bytes.Compare(u[:], hi[:]) <= 0
			if in != (first <= ms && ms <= last) || (u.String() >= lo.String() && u.String() <= hi.String()) != in {
				t.Fatalf("%v..%v: %v (ms %d) within %v..%v: %v", from, to, u, ms, lo, hi, in)
			}
		}
	}
}

// step is u's millisecond moved by d, its random bits kept.
func step(u UUID, d int64) UUID {
	v := u
	ms := u.Time().UnixMilli() + d
	if ms < 0 || ms > maxMs {
		return UUID{}
	}
	w := compose(ms, 0, 0)
	copy(v[0:6], w[0:6])
	return v
}

// random is a version 7 UUID of any millisecond and random bits.
func random(r *rand.Rand) UUID {
	return compose(r.Int63n(maxMs+1), uint16(r.Intn(1<<12)), uint64(r.Int63())&(1<<62-1))
}

// made is a UUID a generator made at an instant from from to to.
func made(r *rand.Rand, from, to time.Time) UUID {
	now := time.UnixMilli(max(from.UnixMilli(), 0) + r.Int63n(max(to.UnixMilli()-max(from.UnixMilli(), 0), 1)))
	return New(Options{Now: func() time.Time { return now }}).New()
}

func TestBoundsRefusals(t *testing.T) {
	e := time.UnixMilli(0)
	for _, c := range []struct {
		name     string
		from, to time.Time
	}{
		{"ends before it begins", e.Add(time.Hour), e},
		{"ends before 1970", e.Add(-time.Hour), e.Add(-time.Millisecond)},
		{"begins after the last millisecond", time.UnixMilli(maxMs + 1), time.UnixMilli(maxMs + 2)},
	} {
		if _, _, err := Bounds(c.from, c.to); !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("%s: %v, want ErrInvalidInterval", c.name, err)
		}
	}
	lo, hi, err := Bounds(time.UnixMilli(1_700_000_000_000), time.UnixMilli(1_700_000_000_000))
	if err != nil || lo.String() != "018bcfe5-6800-7000-8000-000000000000" || hi.String() != "018bcfe5-6800-7fff-bfff-ffffffffffff" {
		t.Errorf("one millisecond: %v..%v, %v", lo, hi, err)
	}
}
