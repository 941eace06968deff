package snowflake

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

const ms = time.Millisecond

// Leaf's layout written out, apart from the code under test: 41 bits of
// milliseconds above 10 of worker id above 12 of sequence.
const (
	maxMs     = 1<<41 - 1
	timeShift = 22
)

func compose(ms, worker, seq int64) int64 { return ms<<timeShift | worker<<12 | seq }

// TestParallelUnique draws ids from many goroutines on the real clock.
func TestParallelUnique(t *testing.T) {
	g := newTestGenerator(t, Settings{WorkerID: 1})
	const (
		goroutines = 8
		each       = 25_000 // 200k ids in all
		batch      = 50
	)
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			ids := make([]int64, 0, each)
			for len(ids) < each {
				if w%2 == 0 { // half use Next, half NextN
					id, err := g.Next(context.Background())
					if err != nil {
						t.Errorf("Next: %v", err)
						return
					}
					ids = append(ids, id)
					continue
				}
				more, err := g.NextN(context.Background(), min(batch, each-len(ids)))
				if err != nil {
					t.Errorf("NextN: %v", err)
					return
				}
				ids = append(ids, more...)
			}
			got[w] = ids
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	var all []int64
	for w, ids := range got {
		checkIncreasing(t, ids)
		if len(ids) != each {
			t.Fatalf("goroutine %d drew %d ids, want %d", w, len(ids), each)
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	dups := 0
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dups++
		}
	}
	if dups != 0 {
		t.Fatalf("%d duplicates among %d ids", dups, len(all))
	}
	if st := g.Stats(); st.Issued != goroutines*each {
		t.Errorf("Stats().Issued = %d, want %d", st.Issued, goroutines*each)
	}
}

// TestClock drives the injected clock through forward and backward steps.
func TestClock(t *testing.T) {
	type step struct {
		shift time.Duration // move the clock by this before drawing
		take  int           // ids to draw with Next
		want  error         // the error of the first draw, nil for success
	}
	tests := []struct {
		name      string
		steps     []step
		backwards uint64 // Stats().ClockBackwards at the end
	}{
		{name: "forward jumps", steps: []step{
			{0, 10, nil}, {ms, 10, nil}, {time.Second, 10, nil}, {time.Hour, 10, nil}, {24 * time.Hour, 10, nil},
		}},
		{name: "back 1ms", backwards: 1, steps: []step{
			{0, 10, nil}, {-ms, 10, nil}, {0, 10, nil},
		}},
		{name: "back a fraction of a millisecond", backwards: 1, steps: []step{
			{300 * time.Microsecond, 10, nil}, {-600 * time.Microsecond, 10, nil},
		}},
		{name: "back exactly the tolerance", backwards: 1, steps: []step{
			{0, 10, nil}, {-DefaultTolerance, 10, nil},
		}},
		{name: "back twice within the tolerance", backwards: 2, steps: []step{
			{0, 10, nil}, {-3 * ms, 10, nil}, {-4 * ms, 10, nil}, {5 * ms, 10, nil},
		}},
		{name: "back beyond the tolerance", backwards: 2, steps: []step{
			{0, 10, nil}, {-DefaultTolerance - ms, 1, ErrClockBackwards},
			{0, 1, ErrClockBackwards}, // still behind
			{DefaultTolerance + ms, 10, nil},
		}},
		{name: "back an hour then forward", backwards: 1, steps: []step{
			{0, 10, nil}, {-time.Hour, 1, ErrClockBackwards}, {time.Hour + 3*ms, 10, nil},
		}},
		{name: "sequence exhausted", steps: []step{
			{0, 3 * (MaxSequence + 1), nil}, {0, 10, nil},
		}},
		{name: "back during sequence exhaustion", backwards: 1, steps: []step{
			{0, MaxSequence + 1, nil}, {-2 * ms, 10, nil},
		}},
		{name: "beyond the tolerance during sequence exhaustion", backwards: 1, steps: []step{
			{0, MaxSequence + 1, nil}, {-10 * ms, 1, ErrClockBackwards}, {10 * ms, 10, nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(start, 10*ms)
			g := newTestGenerator(t, fixedSettings(clock))
			var ids []int64
			for i, st := range tt.steps {
				clock.Add(st.shift)
				for n := range st.take {
					id, err := g.Next(context.Background())
					if st.want != nil {
						if !errors.Is(err, st.want) {
							t.Fatalf("step %d: Next = %d, %v; want %v", i, id, err, st.want)
						}
						if err := g.Ready(); !errors.Is(err, st.want) {
							t.Fatalf("step %d: Ready() = %v, want %v", i, err, st.want)
						}
						break
					}
					if err != nil {
						t.Fatalf("step %d, id %d: %v", i, n, err)
					}
					d, _ := g.Decode(id)
					if now := clock.Now(); d.Time.After(now) {
						t.Fatalf("step %d: id of %s issued at %s", i, d.Time, now)
					}
					ids = append(ids, id)
				}
			}
			checkIncreasing(t, ids) // so no duplicates and never back
			if got := g.Stats().ClockBackwards; got != tt.backwards {
				t.Errorf("Stats().ClockBackwards = %d, want %d", got, tt.backwards)
			}
		})
	}
}

// TestClockJitter moves the clock at random, never back beyond the
// tolerance, and checks that ids keep increasing.
func TestClockJitter(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	g := newTestGenerator(t, fixedSettings(clock))
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]int64, 0, 20_000)
	for range cap(ids) {
		clock.Add(time.Duration(rng.Int64N(int64(7*ms))) - DefaultTolerance) // -5ms..+2ms
		ids = append(ids, mustNext(t, g))
	}
	checkIncreasing(t, ids)
	if g.Stats().ClockBackwards == 0 {
		t.Error("the clock was never seen going back")
	}
}

func TestSequenceExhaustion(t *testing.T) {
	clock := testkit.NewClock(start.Add(300*time.Microsecond), 10*ms)
	s := fixedSettings(clock)
	s.SeqOffset = func() int64 { return 7 }
	g := newTestGenerator(t, s)

	for want := int64(7); want <= MaxSequence; want++ {
		d, _ := g.Decode(mustNext(t, g))
		if d.Sequence != want || !d.Time.Equal(start) {
			t.Fatalf("id %+v, want sequence %d at %s", d, want, start)
		}
	}
	if n := len(clock.Sleeps()); n != 0 {
		t.Fatalf("%d waits before the millisecond was used up", n)
	}
	d, _ := g.Decode(mustNext(t, g))
	if want := start.Add(ms); d.Sequence != 7 || !d.Time.Equal(want) || d.WorkerID != 7 {
		t.Fatalf("first id after exhaustion %+v, want sequence 7 at %s", d, want)
	}
	// One sleep, exactly to the next millisecond boundary: no spin.
	if got, want := clock.Sleeps(), []time.Duration{700 * time.Microsecond}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if got := g.Stats().SequenceWaits; got != 1 {
		t.Errorf("Stats().SequenceWaits = %d, want 1", got)
	}
}

func TestSequenceOffset(t *testing.T) {
	tests := []struct {
		name   string
		offset func() int64
		check  func(tb testing.TB, seqs []int64)
	}{
		{name: "default is random in 0..99", check: func(tb testing.TB, seqs []int64) {
			tb.Helper()
			seen := map[int64]bool{}
			for _, s := range seqs {
				if s < 0 || s > 99 {
					tb.Fatalf("sequence %d outside 0..99", s)
				}
				seen[s] = true
			}
			if len(seen) < 50 {
				tb.Errorf("only %d distinct offsets in %d milliseconds", len(seen), len(seqs))
			}
		}},
		{name: "fixed", offset: func() int64 { return 42 }, check: allSeq(42)},
		{name: "zero", offset: func() int64 { return 0 }, check: allSeq(0)},
		{name: "above the range is taken modulo 4096", offset: func() int64 { return 4096 + 5 }, check: allSeq(5)},
		{name: "negative is taken modulo 4096", offset: func() int64 { return -1 }, check: allSeq(MaxSequence)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(start, 10*ms)
			s := fixedSettings(clock)
			s.SeqOffset = tt.offset
			g := newTestGenerator(t, s)
			var seqs []int64
			for range 1000 { // one id per millisecond: low traffic
				clock.Add(ms)
				d, _ := g.Decode(mustNext(t, g))
				seqs = append(seqs, d.Sequence)
			}
			tt.check(t, seqs)
		})
	}
}

func allSeq(want int64) func(testing.TB, []int64) {
	return func(tb testing.TB, seqs []int64) {
		tb.Helper()
		for i, s := range seqs {
			if s != want {
				tb.Fatalf("sequence %d of millisecond %d, want %d", s, i, want)
			}
		}
	}
}

func TestNew(t *testing.T) {
	store := newFakeStore(testkit.NewClock(start, 0))
	tests := []struct {
		name    string
		edit    func(s *Settings)
		want    error  // errors.Is, when wantMsg is not enough
		wantMsg string // a part of the error; "" for success
	}{
		{name: "defaults", edit: func(*Settings) {}},
		{name: "epoch now", edit: func(s *Settings) { s.EpochMs = late.UnixMilli() }},
		{name: "future epoch", edit: func(s *Settings) { s.EpochMs = late.UnixMilli() + 1 }, wantMsg: "in the future"},
		{name: "negative epoch", edit: func(s *Settings) { s.EpochMs = -1 }, wantMsg: "negative"},
		{name: "range run out", edit: func(s *Settings) { s.EpochMs = late.UnixMilli() - maxMs - 1 }, want: ErrExhausted},
		{name: "last millisecond of the range", edit: func(s *Settings) { s.EpochMs = late.UnixMilli() - maxMs }},
		{name: "worker id 0", edit: func(s *Settings) { s.WorkerID = 0 }},
		{name: "worker id 1023", edit: func(s *Settings) { s.WorkerID = MaxWorkerID }},
		{name: "worker id 1024", edit: func(s *Settings) { s.WorkerID = MaxWorkerID + 1 }, wantMsg: "worker id 1024"},
		{name: "worker id -1", edit: func(s *Settings) { s.WorkerID = -1 }, wantMsg: "worker id -1"},
		{name: "negative tolerance", edit: func(s *Settings) { s.Tolerance = -ms }, wantMsg: "tolerance"},
		{name: "leases without a holder", edit: func(s *Settings) { s.Leases = store }, wantMsg: "holder"},
		{name: "negative lease TTL", edit: func(s *Settings) { s.Leases, s.Holder, s.LeaseTTL = store, "a", -time.Second }, wantMsg: "TTL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(late, 10*ms)
			s := fixedSettings(clock)
			tt.edit(&s)
			g, err := New(context.Background(), s)
			if tt.want == nil && tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				t.Cleanup(func() { _ = g.Close(context.Background()) })
				if _, err := g.Next(context.Background()); err != nil {
					t.Fatalf("Next: %v", err)
				}
				return
			}
			if err == nil {
				_ = g.Close(context.Background())
				t.Fatalf("New succeeded, want an error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("New: %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("New: %q, want it to mention %q", err, tt.wantMsg)
			}
			if tt.want == nil && !errors.Is(err, ErrInvalidSettings) {
				t.Errorf("New: %v, want it to wrap ErrInvalidSettings", err)
			}
		})
	}
}

func TestExhausts(t *testing.T) {
	clock := testkit.NewClock(late, 10*ms)
	s := fixedSettings(clock)
	if g := newTestGenerator(t, s); !g.Exhausts().Equal(time.UnixMilli(DefaultEpochMs + 1<<41)) {
		t.Errorf("default epoch: Exhausts() = %s", g.Exhausts())
	}

	s.EpochMs = late.UnixMilli() - maxMs // now is the range's last millisecond
	g := newTestGenerator(t, s)
	if want := late.Add(ms); !g.Exhausts().Equal(want) {
		t.Fatalf("Exhausts() = %s, want %s", g.Exhausts(), want)
	}
	d, _ := g.Decode(mustNext(t, g))
	if !d.Time.Equal(late) || d.ID>>timeShift != maxMs {
		t.Fatalf("last id %+v", d)
	}
	clock.Add(ms)
	if _, err := g.Next(context.Background()); !errors.Is(err, ErrExhausted) {
		t.Errorf("Next after the range: %v, want %v", err, ErrExhausted)
	}
	if err := g.Ready(); !errors.Is(err, ErrExhausted) {
		t.Errorf("Ready after the range: %v, want %v", err, ErrExhausted)
	}
}

func TestDecode(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	g := newTestGenerator(t, fixedSettings(clock))
	tests := []struct {
		name               string
		ms, worker, seq    int64
		wantTime           time.Time
		wantWorker, wantSq int64
	}{
		{name: "zero", wantTime: time.UnixMilli(DefaultEpochMs)},
		{name: "small", ms: 1, worker: 2, seq: 3, wantTime: time.UnixMilli(DefaultEpochMs + 1), wantWorker: 2, wantSq: 3},
		{name: "largest", ms: maxMs, worker: MaxWorkerID, seq: MaxSequence, wantTime: g.Exhausts().Add(-ms), wantWorker: MaxWorkerID, wantSq: MaxSequence},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := compose(tt.ms, tt.worker, tt.seq)
			d, err := g.Decode(id)
			if err != nil {
				t.Fatal(err)
			}
			want := ID{ID: id, Time: tt.wantTime.UTC(), WorkerID: tt.wantWorker, Sequence: tt.wantSq}
			if d != want {
				t.Errorf("Decode(%d) = %+v, want %+v", id, d, want)
			}
		})
	}
	t.Run("generated", func(t *testing.T) {
		clock.Add(123 * ms)
		id := mustNext(t, g)
		d, err := g.Decode(id)
		if err != nil {
			t.Fatal(err)
		}
		want := ID{ID: id, Time: clock.Now().UTC(), WorkerID: 7, Sequence: 0}
		if d != want || d.TimestampMs() != clock.Now().UnixMilli() {
			t.Errorf("Decode(%d) = %+v, want %+v", id, d, want)
		}
	})
	for _, id := range []int64{-1, math.MinInt64} {
		if _, err := g.Decode(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Decode(%d): %v, want %v", id, err, ErrInvalidID)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(int64(0), uint64(0), uint16(0), uint16(0))
	f.Add(int64(-1), uint64(maxMs), uint16(MaxWorkerID), uint16(MaxSequence))
	f.Add(int64(math.MaxInt64), uint64(1), uint16(2), uint16(3))
	f.Add(int64(math.MinInt64), uint64(1<<41), uint16(1024), uint16(4096))
	g, err := New(context.Background(), Settings{WorkerID: 3})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw int64, msPart uint64, worker, seq uint16) {
		// A generated id gives back its parts.
		m, w, s := int64(msPart&maxMs), int64(worker&MaxWorkerID), int64(seq&MaxSequence)
		id := compose(m, w, s)
		d, err := g.Decode(id)
		if err != nil {
			t.Fatalf("Decode(%d): %v", id, err)
		}
		if d.ID != id || d.TimestampMs() != DefaultEpochMs+m || d.WorkerID != w || d.Sequence != s {
			t.Fatalf("Decode(%d) = %+v, want ms %d worker %d sequence %d", id, d, m, w, s)
		}

		// Any int64: no panic, negative is invalid, the rest round-trips.
		d, err = g.Decode(raw)
		if raw < 0 {
			if !errors.Is(err, ErrInvalidID) {
				t.Fatalf("Decode(%d): %v, want %v", raw, err, ErrInvalidID)
			}
			return
		}
		if err != nil {
			t.Fatalf("Decode(%d): %v", raw, err)
		}
		if back := compose(d.TimestampMs()-DefaultEpochMs, d.WorkerID, d.Sequence); back != raw {
			t.Fatalf("Decode(%d) = %+v, which composes to %d", raw, d, back)
		}
	})
}

func TestNextN(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	s := fixedSettings(clock)
	s.SeqOffset = func() int64 { return 4000 } // 96 ids per millisecond
	g := newTestGenerator(t, s)

	first := mustNext(t, g)
	ids, err := g.NextN(context.Background(), 300)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 300 {
		t.Fatalf("%d ids, want 300", len(ids))
	}
	checkIncreasing(t, append([]int64{first}, ids...))
	last, _ := g.Decode(ids[len(ids)-1])
	if want := start.Add(3 * ms); !last.Time.Equal(want) { // 95 + 96 + 96 + 13
		t.Errorf("last id at %s, want %s", last.Time, want)
	}
	if got := g.Stats().Issued; got != 301 {
		t.Errorf("Stats().Issued = %d, want 301", got)
	}
	for _, n := range []int{0, -1} {
		if ids, err := g.NextN(context.Background(), n); err == nil {
			t.Errorf("NextN(%d) = %d ids, want an error", n, len(ids))
		}
	}
}

func TestWaitCancelled(t *testing.T) {
	clock := testkit.NewClock(start, 0) // every wait blocks
	g := newTestGenerator(t, fixedSettings(clock))
	if _, err := g.NextN(context.Background(), MaxSequence+1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with the millisecond used up and ctx cancelled: %v", err)
	}
}

func TestCloseFixed(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	g, err := New(context.Background(), fixedSettings(clock))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	mustNext(t, g)
	for range 2 {
		if err := g.Close(context.Background()); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if _, err := g.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if _, err := g.NextN(context.Background(), 2); !errors.Is(err, ErrClosed) {
		t.Errorf("NextN after Close: %v", err)
	}
	if err := g.Ready(); !errors.Is(err, ErrClosed) {
		t.Errorf("Ready after Close: %v", err)
	}
}
