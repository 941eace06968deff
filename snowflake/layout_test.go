package snowflake

import (
	"context"
	"errors"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/quick"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

func msLayout(t, w, s int) Layout {
	return Layout{Unit: time.Millisecond, TimeBits: t, WorkerBits: w, SequenceBits: s}
}

func sLayout(t, w, s int) Layout {
	return Layout{Unit: time.Second, TimeBits: t, WorkerBits: w, SequenceBits: s}
}

// tenLayout is a layout in units of 10 ms, sonyflake's.
func tenLayout(t, w, s int) Layout {
	return Layout{Unit: 10 * time.Millisecond, TimeBits: t, WorkerBits: w, SequenceBits: s}
}

func TestLayoutValidate(t *testing.T) {
	tests := []struct {
		name    string
		layout  Layout
		wantMsg string // a part of the error; "" for a valid layout
	}{
		{name: "default", layout: DefaultLayout()},
		{name: "more sequence", layout: msLayout(41, 8, 14)},
		{name: "seconds", layout: sLayout(31, 10, 22)},
		{name: "53 bits", layout: msLayout(41, 5, 7)},
		{name: "53 bits of seconds", layout: sLayout(31, 6, 16)},
		{name: "widest time in ms", layout: msLayout(47, 4, 12)},
		{name: "widest time in s", layout: sLayout(37, 10, 16)},
		{name: "sonyflake's widths in 10 ms", layout: tenLayout(39, 16, 8)},
		{name: "widest time in 10 ms", layout: tenLayout(44, 3, 16)},
		{name: "53 bits of 10 ms", layout: tenLayout(38, 6, 9)},
		{name: "sonyflake's", layout: sonyflakeLayout()},
		{name: "sequence above worker, widest worker", layout: Layout{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 16, SequenceBits: 6, Order: TimeSequenceWorker}},
		{name: "widest worker", layout: msLayout(41, 16, 6)},
		{name: "widest sequence", layout: sLayout(30, 1, 32)},
		{name: "narrowest fields", layout: msLayout(47, 1, 15)},

		{name: "sum 62", layout: msLayout(41, 10, 11), wantMsg: "41 time + 10 worker + 11 sequence bits make 62: want 63"},
		{name: "sum 64", layout: msLayout(41, 10, 13), wantMsg: "make 64"},
		{name: "sum 54", layout: msLayout(41, 5, 8), wantMsg: "or 53"},
		{name: "time 0", layout: msLayout(0, 16, 32), wantMsg: "0 time bits: want 1 to 47"},
		{name: "worker 0", layout: msLayout(41, 0, 22), wantMsg: "0 worker bits: want 1 to 16"},
		{name: "sequence 0", layout: msLayout(47, 16, 0), wantMsg: "0 sequence bits: want 1 to 32"},
		{name: "negative", layout: msLayout(41, -1, 23), wantMsg: "-1 worker bits"},
		{name: "time too wide in ms", layout: msLayout(48, 3, 12), wantMsg: "48 time bits: want 1 to 47 with milliseconds"},
		{name: "time too wide in s", layout: sLayout(38, 10, 15), wantMsg: "38 time bits: want 1 to 37 with seconds"},
		{name: "time too wide in 10 ms", layout: tenLayout(45, 2, 16), wantMsg: "45 time bits: want 1 to 44 with 10-millisecond units"},
		{name: "unit 100 ms", layout: Layout{Unit: 100 * ms, TimeBits: 41, WorkerBits: 10, SequenceBits: 12},
			wantMsg: "time unit 100ms: want ms (milliseconds), 10ms (10-millisecond units) or s (seconds)"},
		{name: "worker too wide", layout: msLayout(41, 17, 5), wantMsg: "17 worker bits: want 1 to 16"},
		{name: "sequence too wide", layout: msLayout(29, 1, 33), wantMsg: "33 sequence bits: want 1 to 32"},
		{name: "unit minute", layout: Layout{Unit: time.Minute, TimeBits: 41, WorkerBits: 10, SequenceBits: 12}, wantMsg: "time unit 1m0s"},
		{name: "unit unset", layout: Layout{TimeBits: 41, WorkerBits: 10, SequenceBits: 12}, wantMsg: "time unit 0s"},
		{name: "unit only", layout: Layout{Unit: time.Millisecond}, wantMsg: "0 time bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.layout.Validate()
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Validate(%v) = %v", tt.layout, err)
				}
				// A valid layout makes a working generator.
				clock := testkit.NewClock(start, 10*ms)
				s := fixedSettings(clock)
				s.Layout, s.EpochMs, s.WorkerID = tt.layout, start.UnixMilli(), tt.layout.MaxWorkerID()
				g := newTestGenerator(t, s)
				d, err := g.Decode(mustNext(t, g))
				if err != nil || !d.Time.Equal(start) || d.WorkerID != tt.layout.MaxWorkerID() {
					t.Fatalf("first id %+v, %v", d, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Validate(%+v) = %v, want %v mentioning %q", tt.layout, err, ErrInvalidSettings, tt.wantMsg)
			}
			s := fixedSettings(testkit.NewClock(start, 10*ms))
			s.Layout = tt.layout
			if g, err := New(context.Background(), s); !errors.Is(err, ErrInvalidSettings) {
				if err == nil {
					_ = g.Close(context.Background())
				}
				t.Fatalf("New with %+v = %v, want %v", tt.layout, err, ErrInvalidSettings)
			}
		})
	}
}

// TestLayoutFigures pins the figures docs/snowflake.md gives for its
// example layouts, counted from the default epoch.
func TestLayoutFigures(t *testing.T) {
	tests := []struct {
		layout    Layout
		end       string
		perSecond int64
		workers   int64
		maxID     int64
	}{
		{DefaultLayout(), "2080-07-10T17:30:30.209Z", 4_096_000, 1024, 1<<63 - 1},
		{msLayout(41, 8, 14), "2080-07-10T17:30:30.209Z", 16_384_000, 256, 1<<63 - 1},
		{sLayout(31, 10, 22), "2078-11-22T04:57:02.657Z", 4_194_304, 1024, 1<<63 - 1},
		{sLayout(36, 10, 17), "4188-06-22T09:15:10.657Z", 131_072, 1024, 1<<63 - 1},
		{msLayout(41, 5, 7), "2080-07-10T17:30:30.209Z", 128_000, 32, 9_007_199_254_740_991},
		{tenLayout(39, 16, 8), "2185-01-19T05:11:53.537Z", 25_600, 65_536, 1<<63 - 1},
		{sonyflakeLayout(), "2185-01-19T05:11:53.537Z", 25_600, 65_536, 1<<63 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.layout.String(), func(t *testing.T) {
			if got := tt.layout.End(DefaultEpochMs).Format(time.RFC3339Nano); got != tt.end {
				t.Errorf("End = %s, want %s", got, tt.end)
			}
			if got := tt.layout.IDsPerSecond(); got != tt.perSecond {
				t.Errorf("IDsPerSecond = %d, want %d", got, tt.perSecond)
			}
			if got := tt.layout.MaxWorkerID() + 1; got != tt.workers {
				t.Errorf("%d worker ids, want %d", got, tt.workers)
			}
			if got := tt.layout.MaxID(); got != tt.maxID {
				t.Errorf("MaxID = %d, want %d", got, tt.maxID)
			}
		})
	}
	if got := DefaultLayout().String(); got != "41,10,12 ms" {
		t.Errorf("DefaultLayout().String() = %q", got)
	}
	// From sonyflake's own default epoch, its layout's range.
	if got := tenLayout(39, 16, 8).End(sonyflakeEpochMs).Format(time.RFC3339Nano); got != "2188-11-16T03:28:58.88Z" {
		t.Errorf("End from sonyflake's epoch = %s", got)
	}
	var zero Settings
	if got := zero.withDefaults().Layout; got != DefaultLayout() {
		t.Errorf("the zero Layout stands for %+v, want the default", got)
	}
}

// layoutOf turns fuzzed numbers into a layout; most are not valid. unit
// picks one of the units, or none.
func layoutOf(unit, timeBits, workerBits, seqBits uint8) Layout {
	l := msLayout(int(timeBits), int(workerBits), int(seqBits))
	if int(unit) < len(units) {
		l.Unit = units[unit].unit
	} else {
		l.Unit = time.Duration(unit) * time.Millisecond
	}
	return l
}

// FuzzLayout checks, over layouts, that an id gives back the parts it was
// made of, and that ids order as (time, worker, sequence) do, or as (time,
// sequence, worker) with that order, so that different parts never make
// the same id.
func FuzzLayout(f *testing.F) {
	const msU, tenU, sU = 0, 1, 2 // indexes of units
	f.Add(uint8(msU), uint8(0), uint8(41), uint8(10), uint8(12), uint64(1), uint64(2), uint64(3), uint64(1), uint64(2), uint64(4))
	f.Add(uint8(msU), uint8(0), uint8(41), uint8(8), uint8(14), uint64(1<<41-1), uint64(255), uint64(1<<14-1), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(sU), uint8(0), uint8(31), uint8(10), uint8(22), uint64(5), uint64(1), uint64(7), uint64(5), uint64(2), uint64(0))
	f.Add(uint8(msU), uint8(0), uint8(41), uint8(5), uint8(7), uint64(1<<41-1), uint64(31), uint64(127), uint64(1<<41-1), uint64(31), uint64(126))
	f.Add(uint8(sU), uint8(1), uint8(37), uint8(16), uint8(10), uint64(1<<37-1), uint64(1<<16-1), uint64(1023), uint64(9), uint64(9), uint64(9))
	f.Add(uint8(msU), uint8(0), uint8(47), uint8(1), uint8(15), uint64(3), uint64(1), uint64(0), uint64(2), uint64(1), uint64(1<<15-1))
	f.Add(uint8(tenU), uint8(1), uint8(39), uint8(16), uint8(8), uint64(1<<39-1), uint64(1<<16-1), uint64(255), uint64(7), uint64(0), uint64(255))
	f.Add(uint8(tenU), uint8(1), uint8(44), uint8(3), uint8(16), uint64(1<<44-1), uint64(7), uint64(0), uint64(1<<44-1), uint64(6), uint64(1<<16-1))
	f.Add(uint8(msU), uint8(0), uint8(41), uint8(10), uint8(11), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0)) // sum 62
	f.Add(uint8(sU), uint8(0), uint8(41), uint8(10), uint8(12), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0))  // too wide for seconds
	f.Add(uint8(msU), uint8(2), uint8(41), uint8(10), uint8(12), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0)) // no such order
	f.Add(uint8(msU), uint8(1), uint8(41), uint8(10), uint8(12), uint64(3), uint64(1), uint64(0), uint64(3), uint64(0), uint64(1)) // worker 1 seq 0 above worker 0 seq 1, under Leaf's order only
	f.Add(uint8(100), uint8(0), uint8(41), uint8(10), uint8(12), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0)) // 100 ms: no unit
	f.Fuzz(func(t *testing.T, unit, order, timeBits, workerBits, seqBits uint8, t1, w1, s1, t2, w2, s2 uint64) {
		l := layoutOf(unit, timeBits, workerBits, seqBits)
		l.Order = Order(order)
		if err := l.Validate(); err != nil {
			if !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("Validate(%+v) = %v, want it to wrap %v", l, err, ErrInvalidSettings)
			}
			return
		}
		clock := testkit.NewClock(start, 0)
		g := newTestGenerator(t, Settings{Layout: l, EpochMs: start.UnixMilli(), Now: clock.Now, Sleep: clock.Sleep})
		part := func(v uint64, bits int) int64 { return int64(v & (1<<bits - 1)) }
		a := [3]int64{part(t1, l.TimeBits), part(w1, l.WorkerBits), part(s1, l.SequenceBits)}
		b := [3]int64{part(t2, l.TimeBits), part(w2, l.WorkerBits), part(s2, l.SequenceBits)}
		ids := [2]int64{}
		for i, p := range [2][3]int64{a, b} {
			id := g.compose(p[0], p[1], p[2])
			if id < 0 || id > l.MaxID() {
				t.Fatalf("%v: parts %v make %d, outside 0..%d", l, p, id, l.MaxID())
			}
			d, err := g.Decode(id)
			if err != nil {
				t.Fatalf("%v: Decode(%d): %v", l, id, err)
			}
			want := ID{ID: id, Time: time.UnixMilli(start.UnixMilli() + p[0]*l.Unit.Milliseconds()).UTC(), WorkerID: p[1], Sequence: p[2]}
			if d != want {
				t.Fatalf("%v: Decode(%d) = %+v, want %+v", l, id, d, want)
			}
			ids[i] = id
		}
		ka, kb := a, b // the parts from the top
		if l.Order == TimeSequenceWorker {
			ka[1], ka[2], kb[1], kb[2] = a[2], a[1], b[2], b[1]
		}
		if got, want := cmp(ids[0], ids[1]), slices.Compare(ka[:], kb[:]); got != want {
			t.Fatalf("%v: ids %d, %d of parts %v, %v compare %d, want %d", l, ids[0], ids[1], a, b, got, want)
		}
		// Above the layout's bits, nothing decodes.
		if l.Bits() < IDBits {
			if _, err := g.Decode(l.MaxID() + 1); !errors.Is(err, ErrInvalidID) {
				t.Fatalf("%v: Decode(%d) = %v, want %v", l, l.MaxID()+1, err, ErrInvalidID)
			}
		}
	})
}

func cmp(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// validLayout is a random valid Layout, for testing/quick.
type validLayout struct{ Layout }

func (validLayout) Generate(r *rand.Rand, _ int) reflect.Value {
	for {
		l := msLayout(0, 1+r.Intn(MaxWorkerBits), 1+r.Intn(MaxSequenceBits))
		l.Unit = units[r.Intn(len(units))].unit
		l.Order = Order(r.Intn(len(orderNames)))
		total := IDBits
		if r.Intn(3) == 0 {
			total = JSBits
		}
		l.TimeBits = total - l.WorkerBits - l.SequenceBits
		if l.Validate() == nil {
			return reflect.ValueOf(validLayout{l})
		}
	}
}

// TestLayoutGenerators draws ids at random layouts on a clock that jumps
// forward and steps back within the tolerance: they increase, never
// repeat and decode to the worker id and the unit they were issued in.
func TestLayoutGenerators(t *testing.T) {
	check := func(vl validLayout, seed int64) bool {
		l := vl.Layout
		rng := rand.New(rand.NewSource(seed))
		clock := testkit.NewClock(start, 2*time.Second)
		worker := rng.Int63n(l.MaxWorkerID() + 1)
		rangeMs := int64(1) << l.TimeBits * l.Unit.Milliseconds()
		g, err := New(context.Background(), Settings{
			Layout: l, WorkerID: worker, EpochMs: start.UnixMilli() - rng.Int63n(min(1000, rangeMs)),
			Now: clock.Now, Sleep: clock.Sleep,
		})
		if err != nil {
			t.Errorf("%v: New: %v", l, err)
			return false
		}
		defer func() { _ = g.Close(context.Background()) }()
		var ids []int64
		for range 200 {
			clock.Add(time.Duration(rng.Int63n(int64(3*l.Unit))) - DefaultTolerance)
			n := 1 + rng.Intn(int(min(3*(l.MaxSequence()+1), 300)))
			before := clock.Now()
			got, err := g.NextN(context.Background(), n)
			if errors.Is(err, ErrExhausted) {
				if !clock.Now().Add(l.Unit).After(g.Exhausts()) {
					t.Errorf("%v: %v at %s, before the last unit ending %s", l, err, clock.Now(), g.Exhausts())
					return false
				}
				break // a narrow time field: its range is over
			}
			if err != nil {
				t.Errorf("%v: NextN(%d): %v", l, n, err)
				return false
			}
			for _, id := range got {
				d, err := g.Decode(id)
				if err != nil || d.WorkerID != worker || d.Time.After(clock.Now()) ||
					d.Time.Before(before.Add(-DefaultTolerance-l.Unit)) || id > l.MaxID() {
					t.Errorf("%v: id %d decodes to %+v, %v (worker %d, clock %s)", l, id, d, err, worker, clock.Now())
					return false
				}
			}
			ids = append(ids, got...)
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Errorf("%v: id %d (%d) is not above id %d (%d)", l, i, ids[i], i-1, ids[i-1])
				return false
			}
		}
		return true
	}
	if err := quick.Check(check, &quick.Config{MaxCount: 200}); err != nil {
		t.Fatal(err)
	}
}

// TestSmallSequence: with 4 bits of sequence a millisecond holds 16 ids;
// the 17th waits for the next millisecond.
func TestSmallSequence(t *testing.T) {
	l := msLayout(41, 8, 4) // 53 bits
	clock := testkit.NewClock(start.Add(300*time.Microsecond), 10*ms)
	s := fixedSettings(clock)
	s.Layout, s.SeqOffset = l, func() int64 { return 16 + 3 } // taken modulo 16
	g := newTestGenerator(t, s)
	for want := int64(3); want <= 15; want++ {
		d, _ := g.Decode(mustNext(t, g))
		if d.Sequence != want || !d.Time.Equal(start) || d.WorkerID != 7 {
			t.Fatalf("id %+v, want sequence %d at %s", d, want, start)
		}
	}
	if n := len(clock.Sleeps()); n != 0 {
		t.Fatalf("%d waits before the millisecond was used up", n)
	}
	d, _ := g.Decode(mustNext(t, g))
	if want := start.Add(ms); d.Sequence != 3 || !d.Time.Equal(want) {
		t.Fatalf("first id after the wait %+v, want sequence 3 at %s", d, want)
	}
	if got, want := clock.Sleeps(), []time.Duration{700 * time.Microsecond}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if got := g.Stats().SequenceWaits; got != 1 {
		t.Errorf("Stats().SequenceWaits = %d, want 1", got)
	}
}

// TestSmallSequenceParallel draws from many goroutines on the real clock at
// 16 ids per millisecond, so that nearly every call finds the millisecond
// used up by another: no id repeats.
func TestSmallSequenceParallel(t *testing.T) {
	l := msLayout(41, 8, 4)
	g := newTestGenerator(t, Settings{Layout: l, WorkerID: 200})
	const goroutines, each = 8, 400 // 3,200 ids: at least 200 ms
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			for len(got[w]) < each {
				if w%2 == 0 {
					id, err := g.Next(context.Background())
					if err != nil {
						t.Errorf("Next: %v", err)
						return
					}
					got[w] = append(got[w], id)
					continue
				}
				ids, err := g.NextN(context.Background(), min(20, each-len(got[w])))
				if err != nil {
					t.Errorf("NextN: %v", err)
					return
				}
				got[w] = append(got[w], ids...)
			}
		})
	}
	wg.Wait()
	seen := make(map[int64]bool, goroutines*each)
	perMs := map[int64]int{}
	for _, ids := range got {
		checkIncreasing(t, ids)
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("id %d issued twice", id)
			}
			seen[id] = true
			d, _ := g.Decode(id)
			if d.WorkerID != 200 || id > l.MaxID() {
				t.Fatalf("id %d decodes to %+v", id, d)
			}
			perMs[d.TimestampMs()]++
		}
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d ids, want %d", len(seen), goroutines*each)
	}
	for m, n := range perMs {
		if n > 16 {
			t.Fatalf("%d ids in millisecond %d, above the 16 of 4 sequence bits", n, m)
		}
	}
	if g.Stats().SequenceWaits == 0 {
		t.Error("no caller waited for the next millisecond")
	}
}

// secondsSettings: 33 bits of seconds, 16 of worker id and 4 of sequence
// (53 bits), an epoch 657 ms into a second, and a clock at the start of
// one of its seconds.
func secondsSettings(clock *testkit.Clock) Settings {
	s := fixedSettings(clock)
	s.Layout = sLayout(33, 16, 4)
	s.EpochMs = DefaultEpochMs
	return s
}

// secondStart is a start of a second counted from DefaultEpochMs.
var secondStart = time.UnixMilli(DefaultEpochMs + 461_000_000_000)

// TestSecondsClock: with seconds, the clock rules hold per second.
func TestSecondsClock(t *testing.T) {
	t.Run("sequence used up waits for the next second", func(t *testing.T) {
		clock := testkit.NewClock(secondStart.Add(250*ms), 2*time.Second)
		g := newTestGenerator(t, secondsSettings(clock))
		ids, err := g.NextN(context.Background(), 20)
		if err != nil {
			t.Fatal(err)
		}
		checkIncreasing(t, ids)
		first, _ := g.Decode(ids[0])
		last, _ := g.Decode(ids[19])
		if !first.Time.Equal(secondStart) || !last.Time.Equal(secondStart.Add(time.Second)) || last.Sequence != 3 {
			t.Fatalf("first %+v, last %+v", first, last)
		}
		if got, want := clock.Sleeps(), []time.Duration{750 * ms}; !slices.Equal(got, want) {
			t.Errorf("waits %v, want %v", got, want)
		}
	})
	t.Run("back within the second goes on", func(t *testing.T) {
		clock := testkit.NewClock(secondStart.Add(500*ms), 2*time.Second)
		g := newTestGenerator(t, secondsSettings(clock))
		a := mustNext(t, g)
		clock.Add(-400 * ms)
		b := mustNext(t, g)
		checkIncreasing(t, []int64{a, b})
		if st := g.Stats(); st.ClockBackwards != 0 || len(clock.Sleeps()) != 0 {
			t.Errorf("Stats() = %+v, waits %v", st, clock.Sleeps())
		}
	})
	t.Run("back across a second within the tolerance waits", func(t *testing.T) {
		clock := testkit.NewClock(secondStart.Add(time.Second), 2*time.Second)
		g := newTestGenerator(t, secondsSettings(clock))
		a := mustNext(t, g)
		clock.Add(-3 * ms)
		b := mustNext(t, g)
		checkIncreasing(t, []int64{a, b})
		if got, want := clock.Sleeps(), []time.Duration{3 * ms}; !slices.Equal(got, want) || g.Stats().ClockBackwards != 1 {
			t.Errorf("waits %v, want %v; Stats() = %+v", got, want, g.Stats())
		}
	})
	t.Run("back across a second beyond the tolerance fails", func(t *testing.T) {
		clock := testkit.NewClock(secondStart.Add(time.Second), 2*time.Second)
		g := newTestGenerator(t, secondsSettings(clock))
		a := mustNext(t, g)
		clock.Add(-DefaultTolerance - ms)
		if _, err := g.Next(context.Background()); !errors.Is(err, ErrClockBackwards) {
			t.Fatalf("Next = %v, want %v", err, ErrClockBackwards)
		}
		clock.Add(DefaultTolerance + ms)
		checkIncreasing(t, []int64{a, mustNext(t, g)})
	})
	t.Run("a clock before the epoch is in unit -1", func(t *testing.T) {
		clock := testkit.NewClock(secondStart, 2*time.Second)
		s := secondsSettings(clock)
		s.EpochMs = secondStart.UnixMilli()
		g := newTestGenerator(t, s)
		if got := g.unitOf(secondStart.Add(-ms)); got != -1 {
			t.Errorf("unit of 1 ms before the epoch = %d, want -1", got)
		}
		if got := g.unitOf(secondStart.Add(-1001 * ms)); got != -2 {
			t.Errorf("unit of 1001 ms before the epoch = %d, want -2", got)
		}
	})
}

// TestSecondsLeases: a new holder of a worker id never issues in the
// second of the last timestamp recorded, nor below it, and records the
// start of the second of its last id.
func TestSecondsLeases(t *testing.T) {
	tests := []struct {
		name  string
		last  time.Duration // the stored LastTimestamp, relative to the clock's second
		clock time.Duration // the clock, relative to the same second
		want  time.Duration // the first id's time, relative to the same second
	}{
		{name: "a second behind", last: -time.Second, clock: 100 * ms, want: 0},
		{name: "within the second", last: 0, clock: 100 * ms, want: time.Second},
		{name: "mid-second from a holder in milliseconds", last: 80 * ms, clock: 100 * ms, want: time.Second},
		{name: "the tolerance ahead in the next second", last: time.Second + 2*ms, clock: 999 * ms, want: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(secondStart.Add(tt.clock), 2*time.Second)
			store := newFakeStore(clock)
			last := secondStart.Add(tt.last).UnixMilli()
			store.put(Lease{WorkerID: 0, Holder: "host-old", LastTimestamp: last, Expires: clock.Now().Add(-time.Minute)})
			s := leaseSettings(clock, store)
			s.Layout, s.EpochMs = sLayout(33, 16, 4), DefaultEpochMs
			g := newTestGenerator(t, s)
			clock.WaitSleepers(t, 1)
			ids, err := g.NextN(context.Background(), 40) // over two seconds and a half
			if err != nil {
				t.Fatal(err)
			}
			checkIncreasing(t, ids)
			first, _ := g.Decode(ids[0])
			if want := secondStart.Add(tt.want); !first.Time.Equal(want) {
				t.Errorf("first id at %s, want %s", first.Time, want)
			}
			lastID, _ := g.Decode(ids[len(ids)-1])
			if err := g.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			store.set(func(s *fakeStore) {
				// A renewal records a bound at or above the last id's second.
				for _, r := range s.renewedWith {
					if r < last {
						t.Errorf("a renewal recorded %d, below the %d acquired", r, last)
					}
				}
				got := s.released[len(s.released)-1].LastTimestamp
				if got != lastID.TimestampMs() {
					t.Errorf("released with %d, want the last id's second %d", got, lastID.TimestampMs())
				}
			})

			// The next holder starts in a later second.
			s.Holder = "host-new"
			g2 := newTestGenerator(t, s)
			clock.WaitSleepers(t, 1)
			next, _ := g2.Decode(mustNext(t, g2))
			if !next.Time.After(lastID.Time) {
				t.Errorf("the next holder's first id at %s, not after the last one's %s", next.Time, lastID.Time)
			}
		})
	}
}

// TestSecondsReleaseKeepsTheFloor: a holder in seconds that issued
// nothing releases the exact timestamp it acquired, not the start of its
// second, so that a holder in milliseconds after it repeats nothing.
func TestSecondsReleaseKeepsTheFloor(t *testing.T) {
	clock := testkit.NewClock(secondStart.Add(500*ms), 2*time.Second)
	store := newFakeStore(clock)
	last := secondStart.Add(400 * ms).UnixMilli()
	store.put(Lease{WorkerID: 0, Holder: "host-ms", LastTimestamp: last, Expires: clock.Now().Add(-time.Second)})
	s := leaseSettings(clock, store)
	s.Layout, s.EpochMs = sLayout(33, 16, 4), DefaultEpochMs
	g := newTestGenerator(t, s)
	clock.WaitSleepers(t, 1)
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := store.get(0).LastTimestamp; got != last {
		t.Errorf("released with %d, want the %d acquired", got, last)
	}
}

func TestWorkerIDPerLayout(t *testing.T) {
	for _, tt := range []struct {
		layout Layout
		id     int64
		ok     bool
	}{
		{msLayout(41, 5, 7), -1, false},
		{msLayout(41, 5, 7), 0, true},
		{msLayout(41, 5, 7), 31, true},
		{msLayout(41, 5, 7), 32, false},
		{msLayout(41, 16, 6), 65535, true},
		{msLayout(41, 16, 6), 65536, false},
	} {
		if got := tt.layout.ValidWorkerID(tt.id); got != tt.ok {
			t.Errorf("%v: ValidWorkerID(%d) = %v, want %v", tt.layout, tt.id, got, tt.ok)
		}
		s := fixedSettings(testkit.NewClock(start, 10*ms))
		s.Layout, s.WorkerID = tt.layout, tt.id
		g, err := New(context.Background(), s)
		if tt.ok {
			if err != nil {
				t.Errorf("%v, worker id %d: %v", tt.layout, tt.id, err)
				continue
			}
			_ = g.Close(context.Background())
			continue
		}
		if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), "worker id") {
			t.Errorf("%v, worker id %d: %v, want %v", tt.layout, tt.id, err, ErrInvalidSettings)
		}
	}

	// A leased id comes from a pool of 2^WorkerBits.
	clock := testkit.NewClock(start, 10*ms)
	store := newFakeStore(clock)
	var asked []int64
	s := leaseSettings(clock, store)
	s.Leases, s.Layout = &poolSpy{fakeStore: store, asked: &asked}, msLayout(41, 5, 7)
	newTestGenerator(t, s)
	clock.WaitSleepers(t, 1)
	if !slices.Equal(asked, []int64{32}) {
		t.Errorf("Acquire asked for pools %v, want [32]", asked)
	}
}

// poolSpy records the pool size of each Acquire.
type poolSpy struct {
	*fakeStore
	asked *[]int64
}

func (p *poolSpy) Acquire(ctx context.Context, holder string, maxWorkers int64, ttl time.Duration) (Lease, error) {
	*p.asked = append(*p.asked, maxWorkers)
	return p.fakeStore.Acquire(ctx, holder, maxWorkers, ttl)
}

// TestDefaultOffsetNarrowSequence: the default offset costs at most a
// 32nd of a unit's numbers, and is 0 below 32 of them.
func TestDefaultOffsetNarrowSequence(t *testing.T) {
	for _, tt := range []struct {
		layout Layout
		below  int64
	}{
		{DefaultLayout(), 100},
		{msLayout(41, 5, 7), 4},
		{msLayout(41, 8, 4), 1},
		{sonyflakeLayout(), 1},
		{Layout{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Order: TimeSequenceWorker}, 1},
	} {
		f := randomOffset(tt.layout)
		seen := map[int64]bool{}
		for range 2000 {
			v := f()
			if v < 0 || v >= tt.below {
				t.Fatalf("%v: offset %d, want 0..%d", tt.layout, v, tt.below-1)
			}
			seen[v] = true
		}
		if int64(len(seen)) != tt.below {
			t.Errorf("%v: %d distinct offsets, want %d", tt.layout, len(seen), tt.below)
		}
	}
}
