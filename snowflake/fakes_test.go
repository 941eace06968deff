package snowflake

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

// start is where every fake clock begins: a millisecond boundary.
var start = time.UnixMilli(1_750_000_000_000)

// late is a millisecond (in 2065) late enough for an epoch whose 41-bit
// range has run out.
var late = time.UnixMilli(3_000_000_000_000)

// fakeStore is an in-memory LeaseStore whose expiry runs on a fake clock.
type fakeStore struct {
	clock *testkit.Clock

	mu          sync.Mutex
	workers     int64  // ids it hands out: 0..workers-1; 0 means as asked
	registry    string // Lease.Registry of the leases it grants; its Renew leaves it out
	leases      map[int64]Lease
	failAcquire error
	failRenew   error
	acquires    int
	renewedWith []int64 // lastTimestamp of each Renew
	released    []Lease // each Release, LastTimestamp as passed
}

var _ LeaseStore = (*fakeStore)(nil)

func newFakeStore(clock *testkit.Clock) *fakeStore {
	return &fakeStore{clock: clock, leases: make(map[int64]Lease)}
}

func (s *fakeStore) Acquire(_ context.Context, holder string, maxWorkers int64, ttl time.Duration) (Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acquires++
	if s.failAcquire != nil {
		return Lease{}, s.failAcquire
	}
	now := s.clock.Now()
	n := maxWorkers
	if s.workers > 0 {
		n = min(n, s.workers)
	}
	free := func(l Lease, ok bool) bool { return !ok || l.Holder == "" || !now.Before(l.Expires) }
	take := func(id int64) (Lease, error) {
		l := Lease{WorkerID: id, Holder: holder, Instance: fmt.Sprint(s.acquires), LastTimestamp: s.leases[id].LastTimestamp,
			Expires: now.Add(ttl), Registry: s.registry}
		s.leases[id] = l
		return l, nil
	}
	for id := range n { // the holder's own id first, if it is free
		if l, ok := s.leases[id]; ok && l.Holder == holder && free(l, ok) {
			return take(id)
		}
	}
	for id := range n {
		if l, ok := s.leases[id]; free(l, ok) {
			return take(id)
		}
	}
	return Lease{}, ErrNoWorkerID
}

func (s *fakeStore) Renew(_ context.Context, l Lease, lastTimestamp int64, ttl time.Duration) (Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renewedWith = append(s.renewedWith, lastTimestamp)
	if s.failRenew != nil {
		return Lease{}, s.failRenew
	}
	cur, ok := s.leases[l.WorkerID]
	if !ok || cur.Holder != l.Holder || cur.Instance != l.Instance {
		return Lease{}, ErrLeaseLost
	}
	if cur.LastTimestamp < l.LastTimestamp {
		return Lease{}, fmt.Errorf("%w: %w", ErrLeaseLost, ErrLeaseRegressed)
	}
	cur.LastTimestamp = max(cur.LastTimestamp, lastTimestamp)
	cur.Expires = s.clock.Now().Add(ttl)
	s.leases[l.WorkerID] = cur
	cur.Registry = ""
	return cur, nil
}

func (s *fakeStore) Release(_ context.Context, l Lease, lastTimestamp int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = append(s.released, Lease{WorkerID: l.WorkerID, Holder: l.Holder, LastTimestamp: lastTimestamp})
	if cur := s.leases[l.WorkerID]; cur.Holder == l.Holder && cur.Instance == l.Instance {
		cur.Expires = s.clock.Now()
		cur.LastTimestamp = lastTimestamp
		s.leases[l.WorkerID] = cur
	}
	return nil
}

// put sets a worker id's lease as is.
func (s *fakeStore) put(l Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leases[l.WorkerID] = l
}

func (s *fakeStore) get(id int64) Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leases[id]
}

func (s *fakeStore) set(f func(s *fakeStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// newTestGenerator builds a Generator from s and closes it at cleanup.
func newTestGenerator(tb testing.TB, s Settings) *Generator {
	tb.Helper()
	g, err := New(context.Background(), s)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() {
		if err := g.Close(context.Background()); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return g
}

// fixedSettings uses clock c, worker 7 and a sequence offset of 0.
func fixedSettings(c *testkit.Clock) Settings {
	return Settings{
		WorkerID:  7,
		Now:       c.Now,
		Sleep:     c.Sleep,
		SeqOffset: func() int64 { return 0 },
	}
}

// mustNext draws one id or fails the test.
func mustNext(tb testing.TB, g *Generator) int64 {
	tb.Helper()
	id, err := g.Next(context.Background())
	if err != nil {
		tb.Fatalf("Next: %v", err)
	}
	return id
}

// checkIncreasing fails when ids are not strictly increasing.
func checkIncreasing(tb testing.TB, ids []int64) {
	tb.Helper()
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			tb.Fatalf("id %d (%d) is not above id %d (%d)", i, ids[i], i-1, ids[i-1])
		}
	}
}
