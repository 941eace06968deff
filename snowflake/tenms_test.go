package snowflake

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

// sonyflakeEpochMs is sonyflake's default start time, 2014-09-01T00:00:00Z.
const sonyflakeEpochMs = 1_409_529_600_000

// tenStart is the start of a unit of 10 ms counted from sonyflakeEpochMs.
var tenStart = time.UnixMilli(sonyflakeEpochMs + 340_470_400_000)

// tenSettings: sonyflake's widths in units of 10 ms (39 bits of time, 16
// of worker id, 8 of sequence) from sonyflake's epoch.
func tenSettings(clock *testkit.Clock) Settings {
	s := fixedSettings(clock)
	s.Layout = tenLayout(39, 16, 8)
	s.EpochMs = sonyflakeEpochMs
	return s
}

// TestTenMsClock: with units of 10 ms, the clock rules hold per unit.
func TestTenMsClock(t *testing.T) {
	t.Run("sequence used up waits for the next unit", func(t *testing.T) {
		clock := testkit.NewClock(tenStart.Add(3*ms), 2*time.Second)
		g := newTestGenerator(t, tenSettings(clock))
		ids, err := g.NextN(context.Background(), 300)
		if err != nil {
			t.Fatal(err)
		}
		checkIncreasing(t, ids)
		first, _ := g.Decode(ids[0])
		full, _ := g.Decode(ids[255])
		last, _ := g.Decode(ids[299])
		if !first.Time.Equal(tenStart) || first.Sequence != 0 || full.Sequence != 255 || !full.Time.Equal(tenStart) ||
			!last.Time.Equal(tenStart.Add(10*ms)) || last.Sequence != 43 || last.WorkerID != 7 {
			t.Fatalf("first %+v, 256th %+v, last %+v", first, full, last)
		}
		if got, want := clock.Sleeps(), []time.Duration{7 * ms}; !slices.Equal(got, want) {
			t.Errorf("waits %v, want %v", got, want)
		}
		if got := g.Stats().SequenceWaits; got != 1 {
			t.Errorf("Stats().SequenceWaits = %d, want 1", got)
		}
	})
	t.Run("an id decodes to the start of its unit", func(t *testing.T) {
		clock := testkit.NewClock(tenStart.Add(9*ms), 2*time.Second)
		g := newTestGenerator(t, tenSettings(clock))
		d, err := g.Decode(mustNext(t, g))
		if err != nil || !d.Time.Equal(tenStart) || (d.TimestampMs()-sonyflakeEpochMs)%10 != 0 {
			t.Fatalf("Decode = %+v, %v; want the time %s", d, err, tenStart)
		}
	})
	t.Run("back within the unit goes on", func(t *testing.T) {
		clock := testkit.NewClock(tenStart.Add(9*ms), 2*time.Second)
		g := newTestGenerator(t, tenSettings(clock))
		a := mustNext(t, g)
		clock.Add(-8 * ms) // beyond the tolerance, within the unit
		b := mustNext(t, g)
		checkIncreasing(t, []int64{a, b})
		if st := g.Stats(); st.ClockBackwards != 0 || len(clock.Sleeps()) != 0 {
			t.Errorf("Stats() = %+v, waits %v", st, clock.Sleeps())
		}
	})
	t.Run("back across a unit within the tolerance waits", func(t *testing.T) {
		clock := testkit.NewClock(tenStart.Add(10*ms), 2*time.Second)
		g := newTestGenerator(t, tenSettings(clock))
		a := mustNext(t, g)
		clock.Add(-3 * ms)
		b := mustNext(t, g)
		checkIncreasing(t, []int64{a, b})
		if got, want := clock.Sleeps(), []time.Duration{3 * ms}; !slices.Equal(got, want) || g.Stats().ClockBackwards != 1 {
			t.Errorf("waits %v, want %v; Stats() = %+v", got, want, g.Stats())
		}
	})
	t.Run("back across a unit beyond the tolerance fails", func(t *testing.T) {
		clock := testkit.NewClock(tenStart.Add(10*ms), 2*time.Second)
		g := newTestGenerator(t, tenSettings(clock))
		a := mustNext(t, g)
		clock.Add(-DefaultTolerance - ms)
		if _, err := g.Next(context.Background()); !errors.Is(err, ErrClockBackwards) {
			t.Fatalf("Next = %v, want %v", err, ErrClockBackwards)
		}
		if err := g.Ready(); !errors.Is(err, ErrClockBackwards) {
			t.Fatalf("Ready = %v, want %v", err, ErrClockBackwards)
		}
		clock.Add(DefaultTolerance + ms)
		checkIncreasing(t, []int64{a, mustNext(t, g)})
	})
	t.Run("a clock before the epoch is in unit -1", func(t *testing.T) {
		clock := testkit.NewClock(tenStart, 2*time.Second)
		s := tenSettings(clock)
		s.EpochMs = tenStart.UnixMilli()
		g := newTestGenerator(t, s)
		for _, tt := range []struct {
			before time.Duration
			unit   int64
		}{{ms, -1}, {10 * ms, -1}, {11 * ms, -2}} {
			if got := g.unitOf(tenStart.Add(-tt.before)); got != tt.unit {
				t.Errorf("unit of %v before the epoch = %d, want %d", tt.before, got, tt.unit)
			}
		}
	})
	t.Run("the range's end", func(t *testing.T) {
		clock := testkit.NewClock(tenStart, 2*time.Second)
		g := newTestGenerator(t, tenSettings(clock))
		if got, want := g.Exhausts(), time.UnixMilli(sonyflakeEpochMs+(1<<39)*10).UTC(); !got.Equal(want) {
			t.Errorf("Exhausts = %s, want %s", got, want)
		}
	})
}

// TestTenMsLeases: a new holder of a worker id never issues in the unit of
// 10 ms of the last timestamp recorded, nor below it, whatever unit the
// holder that recorded it had, and records the start of the unit of its
// last id.
func TestTenMsLeases(t *testing.T) {
	tests := []struct {
		name  string
		last  time.Duration // the stored LastTimestamp, relative to the clock's unit
		clock time.Duration // the clock, relative to the same unit
		want  time.Duration // the first id's time, relative to the same unit
	}{
		{name: "a unit behind", last: -10 * ms, clock: 3 * ms, want: 0},
		{name: "within the unit", last: 0, clock: 3 * ms, want: 10 * ms},
		{name: "mid-unit from a holder in milliseconds", last: 7 * ms, clock: 8 * ms, want: 10 * ms},
		{name: "the tolerance ahead in the next unit", last: 12 * ms, clock: 9 * ms, want: 20 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(tenStart.Add(tt.clock), 2*time.Second)
			store := newFakeStore(clock)
			last := tenStart.Add(tt.last).UnixMilli()
			store.put(Lease{WorkerID: 0, Holder: "host-old", LastTimestamp: last, Expires: clock.Now().Add(-time.Minute)})
			s := leaseSettings(clock, store)
			s.Layout, s.EpochMs = tenLayout(39, 16, 8), sonyflakeEpochMs
			g := newTestGenerator(t, s)
			clock.WaitSleepers(t, 1)
			ids, err := g.NextN(context.Background(), 600) // over two units and a half
			if err != nil {
				t.Fatal(err)
			}
			checkIncreasing(t, ids)
			first, _ := g.Decode(ids[0])
			if want := tenStart.Add(tt.want); !first.Time.Equal(want) {
				t.Errorf("first id at %s, want %s", first.Time, want)
			}
			lastID, _ := g.Decode(ids[len(ids)-1])
			if err := g.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			store.set(func(s *fakeStore) {
				for _, r := range s.renewedWith {
					if r < last {
						t.Errorf("a renewal recorded %d, below the %d acquired", r, last)
					}
				}
				got := s.released[len(s.released)-1].LastTimestamp
				if got != lastID.TimestampMs() {
					t.Errorf("released with %d, want the start of the last id's unit %d", got, lastID.TimestampMs())
				}
			})

			// The next holder starts in a later unit, and so does one in
			// milliseconds: it issues above the start of that unit.
			for _, l := range []Layout{tenLayout(39, 16, 8), DefaultLayout()} {
				s.Holder, s.Layout = "host-new-"+l.String(), l
				g2 := newTestGenerator(t, s)
				clock.WaitSleepers(t, 1)
				next, _ := g2.Decode(mustNext(t, g2))
				if !next.Time.After(lastID.Time) {
					t.Errorf("%v: the next holder's first id at %s, not after the last one's %s", l, next.Time, lastID.Time)
				}
				if err := g2.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
