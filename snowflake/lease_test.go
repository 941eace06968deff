package snowflake

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

const ttl = 30 * time.Second

// leaseSettings leases from store as "host-a" with a 30s TTL on clock.
func leaseSettings(clock *testkit.Clock, store *fakeStore) Settings {
	return Settings{
		Leases:    store,
		Holder:    "host-a",
		LeaseTTL:  ttl,
		Now:       clock.Now,
		Sleep:     clock.Sleep,
		SeqOffset: func() int64 { return 0 },
	}
}

// newLeaseGenerator returns a leasing Generator whose heartbeat is asleep.
func newLeaseGenerator(tb testing.TB, clock *testkit.Clock, store *fakeStore) *Generator {
	tb.Helper()
	g := newTestGenerator(tb, leaseSettings(clock, store))
	clock.WaitSleepers(tb, 1)
	return g
}

func TestLeaseLastTimestamp(t *testing.T) {
	tests := []struct {
		name      string
		last      time.Duration // the stored LastTimestamp, relative to now
		fresh     bool          // no lease row yet
		wantAfter time.Duration // the first id's time, relative to now
		wantErr   bool
	}{
		{name: "fresh worker id", fresh: true, wantAfter: 0},
		{name: "last timestamp behind", last: -time.Second, wantAfter: 0},
		{name: "last timestamp 1ms behind", last: -ms, wantAfter: 0},
		{name: "last timestamp now", last: 0, wantAfter: ms},
		{name: "last timestamp 3ms ahead", last: 3 * ms, wantAfter: 4 * ms},
		{name: "last timestamp the tolerance ahead", last: DefaultTolerance, wantAfter: DefaultTolerance + ms},
		{name: "last timestamp beyond the tolerance", last: DefaultTolerance + ms, wantErr: true},
		{name: "last timestamp an hour ahead", last: time.Hour, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(start, 10*ms)
			store := newFakeStore(clock)
			last := start.Add(tt.last)
			if !tt.fresh { // an expired lease of another holder
				store.put(Lease{WorkerID: 0, Holder: "host-old", LastTimestamp: last.UnixMilli(), Expires: start.Add(-time.Second)})
			}
			if tt.wantErr {
				g, err := New(context.Background(), leaseSettings(clock, store))
				if err == nil {
					_ = g.Close(context.Background())
					t.Fatal("New succeeded, want an error")
				}
				for _, want := range []string{fmtMs(last.UnixMilli()), start.UTC().Format(time.RFC3339Nano)} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("New: %q, want it to name %s", err, want)
					}
				}
				if l := store.get(0); clock.Now().Before(l.Expires) {
					t.Errorf("the refused lease is still live until %s", l.Expires)
				}
				return
			}

			g := newLeaseGenerator(t, clock, store)
			var ids []int64
			for range 2 * (MaxSequence + 1) {
				id := mustNext(t, g)
				if d, _ := g.Decode(id); !tt.fresh && d.TimestampMs() <= last.UnixMilli() {
					t.Fatalf("id %+v at or below the last timestamp %s", d, last)
				}
				ids = append(ids, id)
			}
			checkIncreasing(t, ids)
			first, _ := g.Decode(ids[0])
			if want := start.Add(tt.wantAfter); !first.Time.Equal(want) {
				t.Errorf("first id at %s, want %s", first.Time, want)
			}
		})
	}
}

// TestLeaseRenewalFailure: issuing stops before the lease expires when
// renewals fail, and resumes after one succeeds.
func TestLeaseRenewalFailure(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	store := newFakeStore(clock)
	g := newLeaseGenerator(t, clock, store)
	before := mustNext(t, g)
	store.set(func(s *fakeStore) { s.failRenew = errors.New("database down") })

	deadline := start.Add(g.ttl - g.margin) // the last renewal began at start
	clock.Step(t, g.every)
	for clock.Now().Add(g.retry).Before(deadline) {
		clock.Step(t, g.retry)
		if err := g.Ready(); err != nil {
			t.Fatalf("at %v: Ready() = %v before the deadline", clock.Now().Sub(start), err)
		}
		mustNext(t, g)
	}
	clock.Add(deadline.Sub(clock.Now()) - time.Nanosecond)
	last := mustNext(t, g)
	clock.Add(time.Nanosecond)
	if _, err := g.Next(context.Background()); !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "database down") {
		t.Fatalf("Next at the deadline: %v, want %v with the cause", err, ErrLeaseLost)
	}
	if err := g.Ready(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Ready at the deadline: %v, want %v", err, ErrLeaseLost)
	}
	if expires := store.get(0).Expires; !clock.Now().Before(expires) {
		t.Fatalf("stopped at %s, not before the lease expired at %s", clock.Now(), expires)
	}
	if st := g.Stats(); st.LeaseFailures < 2 || st.LeaseRenewals != 1 { // the one at start
		t.Errorf("Stats() = %+v", st)
	}

	store.set(func(s *fakeStore) { s.failRenew = nil })
	clock.Step(t, g.retry)
	if err := g.Ready(); err != nil {
		t.Fatalf("Ready after a renewal: %v", err)
	}
	after := mustNext(t, g)
	checkIncreasing(t, []int64{before, last, after})
	d, _ := g.Decode(last)
	store.set(func(s *fakeStore) {
		// A renewal records how far ahead the holder may issue.
		if got := s.renewedWith[len(s.renewedWith)-1]; got <= d.TimestampMs() || got <= clock.Now().UnixMilli() {
			t.Errorf("the renewal recorded %d, want above the last id's %d and the clock's %d", got, d.TimestampMs(), clock.Now().UnixMilli())
		}
	})
	if st := g.Stats(); st.LeaseRenewals != 2 {
		t.Errorf("Stats().LeaseRenewals = %d, want 2", st.LeaseRenewals)
	}
}

// TestLeaseLost: when the store says the lease is someone else's, the
// generator stops and acquires a worker id again.
func TestLeaseLost(t *testing.T) {
	t.Run("another id is free", func(t *testing.T) {
		clock := testkit.NewClock(start, 10*ms)
		store := newFakeStore(clock)
		g := newLeaseGenerator(t, clock, store)
		before := mustNext(t, g)
		store.put(Lease{WorkerID: 0, Holder: "thief", Expires: start.Add(time.Hour)})

		clock.Step(t, g.every)
		if got := g.WorkerID(); got != 1 {
			t.Fatalf("WorkerID() = %d after losing 0, want 1", got)
		}
		after := mustNext(t, g)
		checkIncreasing(t, []int64{before, after})
		if d, _ := g.Decode(after); d.WorkerID != 1 {
			t.Errorf("id after re-acquiring: %+v", d)
		}
	})
	t.Run("no id is free until the thief leaves", func(t *testing.T) {
		clock := testkit.NewClock(start, 10*ms)
		store := newFakeStore(clock)
		store.set(func(s *fakeStore) { s.workers = 1 })
		g := newLeaseGenerator(t, clock, store)
		before := mustNext(t, g)
		store.put(Lease{WorkerID: 0, Holder: "thief", Expires: start.Add(time.Hour)})

		clock.Step(t, g.every)
		if _, err := g.Next(context.Background()); !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), ErrNoWorkerID.Error()) {
			t.Fatalf("Next after losing the lease: %v, want %v", err, ErrLeaseLost)
		}
		if err := g.Ready(); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("Ready after losing the lease: %v", err)
		}

		// The thief issued up to 3ms ahead of our clock, then released.
		thiefLast := clock.Now().Add(3 * ms).UnixMilli()
		store.put(Lease{WorkerID: 0, LastTimestamp: thiefLast})
		clock.Step(t, g.retry)
		if err := g.Ready(); err != nil {
			t.Fatalf("Ready after re-acquiring: %v", err)
		}
		after := mustNext(t, g)
		checkIncreasing(t, []int64{before, after})
		if d, _ := g.Decode(after); d.WorkerID != 0 || d.TimestampMs() <= thiefLast {
			t.Errorf("id %+v, want worker 0 above %d", d, thiefLast)
		}
	})
}

func TestLeaseAcquireFails(t *testing.T) {
	other := errors.New("connection refused")
	tests := []struct {
		name  string
		setup func(s *fakeStore)
		want  error
	}{
		{name: "every id held", want: ErrNoWorkerID, setup: func(s *fakeStore) {
			s.workers = 2
			s.leases[0] = Lease{WorkerID: 0, Holder: "b", Expires: start.Add(time.Second)}
			s.leases[1] = Lease{WorkerID: 1, Holder: "c", Expires: start.Add(time.Second)}
		}},
		{name: "store down", want: other, setup: func(s *fakeStore) { s.failAcquire = other }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(start, 10*ms)
			store := newFakeStore(clock)
			store.set(tt.setup)
			g, err := New(context.Background(), leaseSettings(clock, store))
			if !errors.Is(err, tt.want) {
				if g != nil {
					_ = g.Close(context.Background())
				}
				t.Fatalf("New: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestLeaseHolderKeepsItsID(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	store := newFakeStore(clock)
	store.put(Lease{WorkerID: 0, Holder: "b", Expires: start.Add(time.Hour)})
	store.put(Lease{WorkerID: 5, Holder: "host-a", Expires: start.Add(-time.Hour), LastTimestamp: start.UnixMilli() - 10})
	g := newLeaseGenerator(t, clock, store)
	if got := g.WorkerID(); got != 5 {
		t.Errorf("WorkerID() = %d, want the holder's 5", got)
	}
}

// TestLeaseClose: Close stops the heartbeat goroutine and releases the lease
// with the last timestamp issued.
func TestLeaseClose(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	store := newFakeStore(clock)
	g, err := New(context.Background(), leaseSettings(clock, store))
	if err != nil {
		t.Fatal(err)
	}
	clock.WaitSleepers(t, 1)
	mustNext(t, g)
	clock.Step(t, g.every) // one renewal
	clock.Add(2 * ms)
	ids, err := g.NextN(context.Background(), MaxSequence+10) // over two milliseconds
	if err != nil {
		t.Fatal(err)
	}
	last, _ := g.Decode(ids[len(ids)-1])

	if err := g.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-g.done:
	default:
		t.Fatal("the heartbeat goroutine is still running after Close")
	}
	clock.WaitSleepers(t, 0) // its Sleep returned
	store.set(func(s *fakeStore) {
		want := []Lease{{WorkerID: 0, Holder: "host-a", LastTimestamp: last.TimestampMs()}}
		if len(s.released) != 1 || s.released[0] != want[0] {
			t.Errorf("released %+v, want %+v", s.released, want)
		}
		if l := s.leases[0]; clock.Now().Before(l.Expires) || l.LastTimestamp != last.TimestampMs() {
			t.Errorf("after Close, worker id 0 is %+v: live, or not at the last id's timestamp", l)
		}
	})
	if _, err := g.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if err := g.Ready(); !errors.Is(err, ErrClosed) {
		t.Errorf("Ready after Close: %v", err)
	}
	if err := g.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// A renewal would have happened here had the heartbeat survived.
	clock.Add(time.Hour)
	store.set(func(s *fakeStore) {
		if len(s.renewedWith) != 2 { // the one at start and one heartbeat
			t.Errorf("%d renewals, want 2", len(s.renewedWith))
		}
	})
}

// TestLeaseConcurrent issues from several goroutines while the heartbeat
// renews, loses and re-acquires the lease; run it with -race.
func TestLeaseConcurrent(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	store := newFakeStore(clock)
	g := newLeaseGenerator(t, clock, store)

	const goroutines, each = 4, 5000
	got := make([][]int64, goroutines)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			for len(got[w]) < each {
				select {
				case <-stop:
					return
				default:
				}
				id, err := g.Next(context.Background())
				if errors.Is(err, ErrLeaseLost) {
					continue
				}
				if err != nil {
					t.Errorf("Next: %v", err)
					return
				}
				got[w] = append(got[w], id)
			}
		})
	}
	for i := range 6 {
		if i == 3 {
			store.put(Lease{WorkerID: g.WorkerID(), Holder: "thief", Expires: clock.Now().Add(time.Hour)})
		}
		clock.Add(g.every)
	}
	close(stop)
	wg.Wait()

	seen := map[int64]bool{}
	for _, ids := range got {
		checkIncreasing(t, ids)
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("duplicate id %d", id)
			}
			seen[id] = true
		}
	}
}

func TestLeaseRegressed(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	store := newFakeStore(clock)
	var (
		mu     sync.Mutex
		events []LeaseEvent
	)
	s := leaseSettings(clock, store)
	s.OnLease = func(ev LeaseEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}
	g := newTestGenerator(t, s)
	clock.WaitSleepers(t, 1)
	before := mustNext(t, g)

	// The store fails over to a copy taken before this holder's renewals:
	// the same acquisition, with an earlier last timestamp.
	l := store.get(0)
	l.LastTimestamp = 0
	store.put(l)
	clock.Step(t, g.every)

	mu.Lock()
	got := append([]LeaseEvent(nil), events...)
	mu.Unlock()
	if len(got) != 2 || !errors.Is(got[0].Err, ErrLeaseRegressed) || !got[1].Acquired || got[1].Err != nil || got[1].WorkerID != 1 {
		t.Fatalf("lease events %+v: want a regression, then worker id 1 acquired", got)
	}
	if n := g.Stats().LeaseRegressions; n != 1 {
		t.Fatalf("LeaseRegressions = %d, want 1", n)
	}
	// Acquired again, but quiet until every holder the store forgot must
	// have stopped: the TTL less the margin after the regression was found.
	if err := g.Ready(); !errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrLeaseUnrenewed) {
		t.Fatalf("Ready right after the regression: %v, want ErrLeaseLost (not a renewal failure)", err)
	}
	if _, err := g.Next(context.Background()); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Next right after the regression: %v, want ErrLeaseLost", err)
	}
	clock.Step(t, g.ttl-g.margin)
	if err := g.Ready(); err != nil {
		t.Fatalf("Ready once the quiet time is over: %v", err)
	}
	after := mustNext(t, g)
	checkIncreasing(t, []int64{before, after})
	if d, _ := g.Decode(after); d.WorkerID != 1 {
		t.Fatalf("id after the regression: %+v, want worker id 1", d)
	}
}

// TestLeaseRegressedInOneRegistry: a regression found in one registry of a
// lease store made of several quiets only the leases of that registry: a
// worker id acquired again from another registry is used at once, one from
// the same registry waits as TestLeaseRegressed does. The fake store's
// Renew leaves the registry out of the lease it returns: the generator
// keeps it, since a lease is renewed where it was granted.
func TestLeaseRegressedInOneRegistry(t *testing.T) {
	tests := []struct {
		name, next string
		quiet      bool
	}{
		{name: "another registry", next: "c"},
		{name: "the same registry", next: "b", quiet: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := testkit.NewClock(start, 10*ms)
			store := newFakeStore(clock)
			store.set(func(s *fakeStore) { s.registry = "b" })
			g := newLeaseGenerator(t, clock, store)
			clock.Step(t, g.every) // a renewal, which the fake returns without its registry
			before := mustNext(t, g)

			l := store.get(0)
			l.LastTimestamp = 0
			store.put(l)
			store.set(func(s *fakeStore) { s.registry = tt.next })
			clock.Step(t, g.every)
			if n := g.Stats().LeaseRegressions; n != 1 {
				t.Fatalf("LeaseRegressions = %d, want 1", n)
			}
			err := g.Ready()
			if tt.quiet {
				if !errors.Is(err, ErrLeaseRegressed) {
					t.Fatalf("Ready after a regression, acquired again from the same registry: %v, want ErrLeaseRegressed", err)
				}
				clock.Step(t, g.ttl-g.margin)
				if err := g.Ready(); err != nil {
					t.Fatalf("Ready once the quiet time is over: %v", err)
				}
			} else if err != nil {
				t.Fatalf("Ready after a regression, acquired again from another registry: %v, want nil", err)
			}
			after := mustNext(t, g)
			checkIncreasing(t, []int64{before, after})
			if d, _ := g.Decode(after); d.WorkerID != 1 {
				t.Fatalf("id after the regression: %+v, want worker id 1", d)
			}
		})
	}
}

func TestLeaseUnrenewedIsToldApart(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	store := newFakeStore(clock)
	g := newLeaseGenerator(t, clock, store)
	store.set(func(s *fakeStore) { s.failRenew = errors.New("connection refused") })
	for range 10 {
		clock.Step(t, g.retry)
	}
	clock.Step(t, g.ttl)
	err := g.Ready()
	if !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrLeaseUnrenewed) {
		t.Fatalf("Ready with renewals failing past the TTL: %v, want ErrLeaseLost and ErrLeaseUnrenewed", err)
	}
}

func TestLeaseRegressedWhileAcquiringAgain(t *testing.T) {
	clock := testkit.NewClock(start, 10*ms)
	store := newFakeStore(clock)
	g := newLeaseGenerator(t, clock, store)
	mustNext(t, g)
	l := store.get(0)
	l.LastTimestamp = 0
	store.put(l)
	store.set(func(s *fakeStore) { s.failAcquire = errors.New("connection refused") })
	clock.Step(t, g.every)
	// Between the regression and a new worker id, Ready still says why.
	if err := g.Ready(); !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrLeaseRegressed) {
		t.Fatalf("Ready after a regression, acquiring again fails: %v, want ErrLeaseLost and ErrLeaseRegressed", err)
	}
}

// TestStatsLeaseState: Stats shows the worker id only while it is this
// generator's, -1 otherwise, and the lease's expiry by the store's clock.
func TestStatsLeaseState(t *testing.T) {
	t.Run("fixed worker id", func(t *testing.T) {
		clock := testkit.NewClock(start, 10*ms)
		g := newTestGenerator(t, fixedSettings(clock))
		st := g.Stats()
		if st.WorkerID != 7 || !st.LeaseExpires.IsZero() || !st.Exhausts.Equal(g.Exhausts()) {
			t.Errorf("Stats() = %+v, want worker 7, no lease expiry, exhausts %s", st, g.Exhausts())
		}
	})

	t.Run("renewals fail until issuing stops", func(t *testing.T) {
		clock := testkit.NewClock(start, 10*ms)
		store := newFakeStore(clock)
		g := newLeaseGenerator(t, clock, store)
		if st := g.Stats(); st.WorkerID != 0 || !st.LeaseExpires.Equal(start.Add(ttl)) {
			t.Fatalf("after New: Stats() = %+v, want worker 0 expiring at %s", st, start.Add(ttl))
		}
		clock.Step(t, g.every)
		renewed := clock.Now()
		if st := g.Stats(); !st.LeaseExpires.Equal(renewed.Add(ttl)) || st.LeaseRenewals != 2 {
			t.Fatalf("after a renewal: Stats() = %+v, want 2 renewals, expiry %s", st, renewed.Add(ttl))
		}

		store.set(func(s *fakeStore) { s.failRenew = errors.New("database down") })
		deadline := renewed.Add(g.ttl - g.margin)
		for clock.Now().Add(g.retry).Before(deadline) {
			clock.Step(t, g.retry)
		}
		clock.Add(deadline.Sub(clock.Now()) - time.Nanosecond)
		if got := g.Stats().WorkerID; got != 0 {
			t.Fatalf("just before issuing stops: worker id %d, want 0", got)
		}
		clock.Add(time.Nanosecond)
		st := g.Stats()
		if st.WorkerID != -1 || st.LeaseFailures == 0 {
			t.Fatalf("when issuing stops: Stats() = %+v, want worker -1 and failures", st)
		}
		if !clock.Now().Before(st.LeaseExpires) {
			t.Errorf("issuing stopped at %s, not before the expiry %s", clock.Now(), st.LeaseExpires)
		}

		store.set(func(s *fakeStore) { s.failRenew = nil })
		clock.Step(t, g.retry)
		if st := g.Stats(); st.WorkerID != 0 || !st.LeaseExpires.Equal(clock.Now().Add(ttl)) {
			t.Errorf("after a renewal: Stats() = %+v, want worker 0 expiring at %s", st, clock.Now().Add(ttl))
		}
	})

	t.Run("taken by another holder", func(t *testing.T) {
		clock := testkit.NewClock(start, 10*ms)
		store := newFakeStore(clock)
		store.set(func(s *fakeStore) { s.workers = 1 })
		g := newLeaseGenerator(t, clock, store)
		store.put(Lease{WorkerID: 0, Holder: "thief", Expires: start.Add(time.Hour)})
		clock.Step(t, g.every)
		if got := g.Stats().WorkerID; got != -1 {
			t.Fatalf("with the lease taken: worker id %d, want -1", got)
		}
		if got := g.WorkerID(); got != 0 {
			t.Errorf("WorkerID() = %d, want the last id held, 0", got)
		}
		store.put(Lease{WorkerID: 0})
		clock.Step(t, g.retry)
		if got := g.Stats().WorkerID; got != 0 {
			t.Errorf("after acquiring again: worker id %d, want 0", got)
		}
	})

	t.Run("closed", func(t *testing.T) {
		clock := testkit.NewClock(start, 10*ms)
		g := newLeaseGenerator(t, clock, newFakeStore(clock))
		if err := g.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := g.Stats().WorkerID; got != -1 {
			t.Errorf("after Close: worker id %d, want -1", got)
		}
	})
}

// TestStatsLeaseHolderAndRenewal: Stats names the holder, when the last
// successful renewal began and why the last one failed, until one succeeds.
func TestStatsLeaseHolderAndRenewal(t *testing.T) {
	t.Run("fixed worker id", func(t *testing.T) {
		s := fixedSettings(testkit.NewClock(start, 10*ms))
		s.Holder = "ignored without leases"
		g := newTestGenerator(t, s)
		if st := g.Stats(); st.Holder != "" || !st.LastRenewal.IsZero() || st.LeaseError != "" {
			t.Errorf("Stats() = %+v, want no holder, renewal or lease error", st)
		}
	})

	t.Run("leased", func(t *testing.T) {
		clock := testkit.NewClock(start, 10*ms)
		store := newFakeStore(clock)
		g := newLeaseGenerator(t, clock, store)
		if st := g.Stats(); st.Holder != "host-a" || !st.LastRenewal.Equal(start) || st.LeaseError != "" {
			t.Fatalf("after New: Stats() = %+v, want holder host-a, renewed at %s, no error", st, start)
		}

		store.set(func(s *fakeStore) { s.failRenew = errors.New("database down") })
		clock.Step(t, g.every)
		st := g.Stats()
		if !st.LastRenewal.Equal(start) || !strings.Contains(st.LeaseError, "database down") {
			t.Fatalf("after a failed renewal: Stats() = %+v, want renewed at %s and the error", st, start)
		}

		store.set(func(s *fakeStore) { s.failRenew = nil })
		clock.Step(t, g.retry)
		renewed := clock.Now()
		if st := g.Stats(); !st.LastRenewal.Equal(renewed) || st.LeaseError != "" {
			t.Errorf("after a renewal: Stats() = %+v, want renewed at %s, no error", st, renewed)
		}
	})
}
