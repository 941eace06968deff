package snowflake

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

// sonyflakeLayout is sonyflake's: 39 bits of 10 ms, then 8 of sequence,
// then 16 of worker (machine) id.
func sonyflakeLayout() Layout {
	l := tenLayout(39, 16, 8)
	l.Order = TimeSequenceWorker
	return l
}

func TestOrders(t *testing.T) {
	for _, tt := range []struct {
		order Order
		name  string
	}{
		{TimeWorkerSequence, "time,worker,sequence"},
		{TimeSequenceWorker, "time,sequence,worker"},
	} {
		if got := tt.order.String(); got != tt.name {
			t.Errorf("Order(%d).String() = %q, want %q", int(tt.order), got, tt.name)
		}
		if got, ok := ParseOrder(tt.name); !ok || got != tt.order {
			t.Errorf("ParseOrder(%q) = %v, %v; want %v", tt.name, got, ok, tt.order)
		}
	}
	for _, s := range []string{"", "time,worker", "worker,time,sequence", "sequence,worker,time", "time, sequence, worker",
		"TIME,SEQUENCE,WORKER", "time,sequence,worker,", "sonyflake", "0", "1"} {
		if o, ok := ParseOrder(s); ok {
			t.Errorf("ParseOrder(%q) = %v, want it refused", s, o)
		}
	}
	if got := Order(2).String(); got != "Order(2)" {
		t.Errorf("Order(2).String() = %q", got)
	}
	if want := "time,worker,sequence (Leaf's) or time,sequence,worker (sonyflake's)"; OrderChoices() != want {
		t.Errorf("OrderChoices() = %q, want %q", OrderChoices(), want)
	}
	var zero Layout
	if zero.Order != TimeWorkerSequence || DefaultLayout().Order != TimeWorkerSequence {
		t.Error("the zero Order is not Leaf's")
	}
	for _, o := range []Order{-1, 2} {
		l := DefaultLayout()
		l.Order = o
		if err := l.Validate(); !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), "field order "+o.String()) {
			t.Errorf("Validate with order %d = %v, want %v", int(o), err, ErrInvalidSettings)
		}
	}
	if got := sonyflakeLayout().String(); got != "39,16,8 10ms time,sequence,worker" {
		t.Errorf("String() = %q", got)
	}
}

// TestSequenceAboveWorker: with the sequence above the worker id, an id is
// t<<(W+S) | sequence<<W | worker, one worker's ids within a unit are 2^W
// apart, and the low bits are the worker id.
func TestSequenceAboveWorker(t *testing.T) {
	tests := []struct {
		name   string
		layout Layout
	}{
		{"sonyflake's", sonyflakeLayout()},
		{"Leaf's widths", Layout{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Order: TimeSequenceWorker}},
		{"53 bits of seconds", Layout{Unit: time.Second, TimeBits: 31, WorkerBits: 6, SequenceBits: 16, Order: TimeSequenceWorker}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.layout
			w, sq := uint(l.WorkerBits), uint(l.SequenceBits)
			clock := testkit.NewClock(start, 10*time.Second)
			s := fixedSettings(clock)
			s.Layout, s.EpochMs, s.WorkerID = l, start.UnixMilli(), 5
			s.SeqOffset = func() int64 { return 2 }
			g := newTestGenerator(t, s)
			clock.Add(3 * l.Unit)

			ids, err := g.NextN(context.Background(), 4)
			if err != nil {
				t.Fatal(err)
			}
			checkIncreasing(t, ids)
			for i, id := range ids {
				seq := int64(2 + i)
				if want := 3<<(w+sq) | seq<<w | 5; id != want {
					t.Errorf("id %d = %d, want %d", i, id, want)
				}
				if id%(1<<w) != 5 {
					t.Errorf("id %d %% 2^%d = %d, want the worker id 5", id, w, id%(1<<w))
				}
				d, err := g.Decode(id)
				if want := (ID{ID: id, Time: start.Add(3 * l.Unit).UTC(), WorkerID: 5, Sequence: seq}); err != nil || d != want {
					t.Errorf("Decode(%d) = %+v, %v; want %+v", id, d, err, want)
				}
			}
			if d := ids[1] - ids[0]; d != 1<<w {
				t.Errorf("ids %d apart, want 2^%d", d, w)
			}
			// The highest sequence number of a unit, then the next unit.
			id := g.compose(9, l.MaxWorkerID(), l.MaxSequence())
			if d, err := g.Decode(id); err != nil || d.WorkerID != l.MaxWorkerID() || d.Sequence != l.MaxSequence() ||
				id != 10<<(w+sq)-1 {
				t.Errorf("Decode(%d) = %+v, %v", id, d, err)
			}
		})
	}
}

// TestSequenceAboveWorkerUsedUp: a worker that used its unit's sequence
// numbers waits for the next unit, and a batch spans both.
func TestSequenceAboveWorkerUsedUp(t *testing.T) {
	clock := testkit.NewClock(tenStart.Add(4*ms), 2*time.Second)
	s := tenSettings(clock)
	s.Layout = sonyflakeLayout()
	g := newTestGenerator(t, s)
	ids, err := g.NextN(context.Background(), 260)
	if err != nil {
		t.Fatal(err)
	}
	checkIncreasing(t, ids)
	for i, id := range ids {
		d, _ := g.Decode(id)
		wantTime, wantSeq := tenStart, int64(i)
		if i >= 256 {
			wantTime, wantSeq = tenStart.Add(10*ms), int64(i-256)
		}
		if d.WorkerID != 7 || d.Sequence != wantSeq || !d.Time.Equal(wantTime) {
			t.Fatalf("id %d decodes to %+v, want sequence %d at %s", i, d, wantSeq, wantTime)
		}
	}
	if got, want := clock.Sleeps(), []time.Duration{6 * ms}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
}

// TestSequenceAboveWorkerParallel draws sonyflake's layout from many
// goroutines on the real clock, several workers at once: no id repeats,
// each decodes to its worker, and no unit holds more than 256 of a worker.
func TestSequenceAboveWorkerParallel(t *testing.T) {
	l := sonyflakeLayout()
	const workers, goroutines, each = 3, 6, 1000 // 6,000 ids: 2,000 per worker, at least 80 ms
	gens := make([]*Generator, workers)
	for i := range gens {
		gens[i] = newTestGenerator(t, Settings{Layout: l, WorkerID: int64(1<<16 - 1 - i), EpochMs: sonyflakeEpochMs})
	}
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for w := range goroutines {
		g := gens[w%workers]
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
				ids, err := g.NextN(context.Background(), min(37, each-len(got[w])))
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
	perUnit := map[[2]int64]int{}
	for w, ids := range got {
		checkIncreasing(t, ids)
		g := gens[w%workers]
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("id %d issued twice", id)
			}
			seen[id] = true
			d, err := g.Decode(id)
			if err != nil || d.WorkerID != g.WorkerID() || id&(1<<16-1) != g.WorkerID() {
				t.Fatalf("id %d decodes to %+v, %v; want worker %d", id, d, err, g.WorkerID())
			}
			perUnit[[2]int64{d.WorkerID, d.TimestampMs()}]++
		}
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d ids, want %d", len(seen), goroutines*each)
	}
	for k, n := range perUnit {
		if n > 256 {
			t.Fatalf("%d ids of worker %d in the unit at %d, above the 256 of 8 sequence bits", n, k[0], k[1])
		}
	}
}
