package snowflake

import (
	"context"
	"errors"
	"math/rand"
	"testing"
	"time"
)

// randomLayout is a valid layout of any unit, width and order.
func randomLayout(r *rand.Rand) Layout {
	units := []time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second}
	l := Layout{Unit: units[r.Intn(len(units))], Order: Order(r.Intn(2))}
	total := []int{IDBits, JSBits}[r.Intn(2)]
	l.TimeBits = 20 + r.Intn(maxTimeBits(l.Unit)-20+1)
	rest := total - l.TimeBits
	l.WorkerBits = max(1, min(MaxWorkerBits, rest-MaxSequenceBits, 1+r.Intn(MaxWorkerBits)))
	l.SequenceBits = rest - l.WorkerBits
	if l.SequenceBits < 1 || l.SequenceBits > MaxSequenceBits {
		return DefaultLayout()
	}
	return l
}

// TestBoundsAgreeWithDecode is the property of Bounds: for any layout,
// epoch and interval, an id lies within the bounds exactly when it decodes
// to a unit of time within the interval's (widened to whole units and
// clipped to the layout's range), and an id issued at any instant of the
// interval lies within them.
func TestBoundsAgreeWithDecode(t *testing.T) {
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	ctx := context.Background()
	for i := range 3000 {
		l := randomLayout(r)
		if err := l.Validate(); err != nil {
			t.Fatalf("randomLayout: %v", err)
		}
		epoch := int64(1_288_834_974_657) + r.Int63n(int64(time.Hour*24*365*20/time.Millisecond))
		spanMs := l.End(epoch).UnixMilli() - epoch // beyond a time.Duration's 292 years
		now := time.UnixMilli(epoch + r.Int63n(spanMs))
		g, err := New(ctx, Settings{Layout: l, EpochMs: epoch, WorkerID: r.Int63n(l.MaxWorkerID() + 1), Now: func() time.Time { return now }})
		if err != nil {
			t.Fatalf("New(%v): %v", l, err)
		}
		at := func() time.Time {
			return time.UnixMilli(epoch + r.Int63n(spanMs/2*3) - spanMs/4).Add(time.Duration(r.Intn(1e6)))
		}
		from, to := at(), at()
		if i%5 == 0 { // short intervals, where units matter
			to = from.Add(time.Duration(r.Int63n(int64(3 * l.Unit))))
		}
		lo, hi, err := g.Bounds(from, to)
		unit := func(tm time.Time) int64 { return floorDiv(tm.UnixMilli()-epoch, l.Unit.Milliseconds()) }
		first, last := max(unit(from), 0), min(unit(to), int64(1)<<l.TimeBits-1)
		if err != nil {
			if !errors.Is(err, ErrInvalidInterval) || first <= last && !to.Before(from) {
				t.Fatalf("%v, epoch %d, %v..%v: %v", l, epoch, from, to, err)
			}
			continue
		}
		if lo < 0 || hi > l.MaxID() || lo > hi {
			t.Fatalf("%v, %v..%v: bounds %d..%d outside 0..%d", l, from, to, lo, hi, l.MaxID())
		}
		for _, id := range []int64{lo, hi, lo - 1, hi + 1, r.Int63() & l.MaxID(), lo + r.Int63n(max(hi-lo, 1))} {
			if id < 0 || id > l.MaxID() {
				continue
			}
			d, err := g.Decode(id)
			if err != nil {
				t.Fatal(err)
			}
			u := unit(d.Time)
			if in := lo <= id && id <= hi; in != (first <= u && u <= last) {
				t.Fatalf("%v, epoch %d, %v..%v: id %d (unit %d) within %d..%d: %v, its unit within %d..%d: %v",
					l, epoch, from, to, id, u, lo, hi, in, first, last, !in)
			}
		}
		// An id issued at an instant of the interval, within the layout's range.
		made := time.UnixMilli(from.UnixMilli() + r.Int63n(to.UnixMilli()-from.UnixMilli()+1))
		if made.UnixMilli() < epoch || !made.Before(l.End(epoch)) {
			continue
		}
		now = made
		g2, err := New(ctx, Settings{Layout: l, EpochMs: epoch, WorkerID: r.Int63n(l.MaxWorkerID() + 1), Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		id, err := g2.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if id < lo || id > hi {
			t.Fatalf("%v, %v..%v: id %d issued at %v outside %d..%d", l, from, to, id, made, lo, hi)
		}
	}
}

func TestBoundsRefusals(t *testing.T) {
	l, epoch := DefaultLayout(), int64(1_288_834_974_657)
	e := time.UnixMilli(epoch)
	for _, c := range []struct {
		name     string
		from, to time.Time
	}{
		{"ends before it begins", e.Add(time.Hour), e},
		{"ends before the epoch", e.Add(-time.Hour), e.Add(-time.Millisecond)},
		{"begins after the end", l.End(epoch), l.End(epoch).Add(time.Hour)},
	} {
		if _, _, err := l.Bounds(epoch, c.from, c.to); !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("%s: %v, want ErrInvalidInterval", c.name, err)
		}
	}
	lo, hi, err := l.Bounds(epoch, e.Add(-time.Hour), e)
	if err != nil || lo != 0 || hi != 1<<22-1 {
		t.Errorf("from before the epoch to it: %d..%d, %v; want 0..%d", lo, hi, err, 1<<22-1)
	}
	lo, hi, err = l.Bounds(epoch, e.Add(time.Millisecond), e.Add(time.Millisecond))
	if err != nil || lo != 1<<22 || hi != 2<<22-1 {
		t.Errorf("one millisecond: %d..%d, %v; want %d..%d", lo, hi, err, 1<<22, 2<<22-1)
	}
}
