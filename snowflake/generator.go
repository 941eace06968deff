package snowflake

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Generator issues snowflake ids. It is safe for concurrent use.
type Generator struct {
	epochMs int64
	layout  Layout
	// The layout as the hot path uses it: plain integers, so that issuing
	// an id costs a few shifts and no call.
	unitMs      int64 // 1, 10 or 1000
	timeShift   uint8 // W+S
	workerShift uint8 // S, or 0 with the sequence above the worker id
	seqShift    uint8 // 0, or W with the sequence above the worker id
	seqStep     int64 // 2^seqShift: from one sequence number's id to the next's
	maxTime     int64 // 2^T-1: the last unit of the range
	maxSeq      int64 // 2^S-1
	usedUp      int64 // 2^S: next sequence of a unit that has none left

	tolerance time.Duration
	now       func() time.Time
	sleep     func(context.Context, time.Duration) error
	seqOffset func() int64
	onLease   func(LeaseEvent)

	leases LeaseStore // nil with a fixed worker id
	holder string
	ttl    time.Duration
	margin time.Duration // issuing stops ttl-margin after the last renewal began
	every  time.Duration // heartbeat period
	retry  time.Duration // heartbeat period after a failure

	issued        atomic.Uint64
	backwards     atomic.Uint64
	seqWaits      atomic.Uint64
	renewals      atomic.Uint64
	leaseFailures atomic.Uint64
	regressions   atomic.Uint64

	mu        sync.Mutex           // protects the fields below
	last      int64                // unit since the epoch of the last id issued, or the leases' floor
	next      int64                // next sequence number in last; usedUp when none is left
	floorMs   int64                // Unix ms: the largest LastTimestamp acquired; never recorded lower
	workerID  int64                //
	lease     Lease                // the lease held (with Leases)
	renewedAt time.Time            // start of the last successful Acquire or Renew
	bound     int64                // unit since the epoch: no id above it; recorded in the store by the last Renew
	lost      bool                 // the store said the lease is someone else's
	quietTill map[string]time.Time // after a regression, by Lease.Registry: nothing is issued on its leases before it
	leaseErr  error                // the last renewal's error; nil after a success
	closed    bool

	stop      context.CancelFunc // stops the heartbeat
	done      chan struct{}      // closed when the heartbeat has returned
	closeOnce sync.Once
	closeErr  error
}

// New validates s and returns a Generator. With s.Leases it acquires a worker
// id (bounded by ctx) and starts the heartbeat that Close stops.
//
// Settings that cannot work are errors wrapping ErrInvalidSettings (a
// layout that fails Layout.Validate, a negative epoch, tolerance or lease
// TTL, an epoch in the future, a worker id outside the layout's, leases
// without a holder name); an epoch whose range has run out is
// ErrExhausted. With leases, the errors of the lease store are returned
// wrapped, ErrNoWorkerID among them.
func New(ctx context.Context, s Settings) (*Generator, error) {
	s = s.withDefaults()
	if err := s.validate(s.Now()); err != nil {
		return nil, err
	}
	l := s.Layout
	timeShift, workerShift, seqShift := l.shifts()
	g := &Generator{
		epochMs:     s.EpochMs,
		layout:      l,
		unitMs:      l.Unit.Milliseconds(),
		timeShift:   timeShift,
		workerShift: workerShift,
		seqShift:    seqShift,
		seqStep:     1 << seqShift,
		maxTime:     1<<l.TimeBits - 1,
		maxSeq:      l.MaxSequence(),
		usedUp:      l.MaxSequence() + 1,
		tolerance:   s.Tolerance,
		now:         s.Now,
		sleep:       s.Sleep,
		seqOffset:   s.SeqOffset,
		onLease:     s.OnLease,
		leases:      s.Leases,
		holder:      s.Holder,
		ttl:         s.LeaseTTL,
		last:        -1,
	}
	g.next = g.usedUp
	if g.seqOffset == nil {
		g.seqOffset = randomOffset(l)
	}
	if g.leases == nil {
		g.workerID = s.WorkerID
		return g, nil
	}
	g.margin = g.ttl / 6
	g.every = g.ttl / 3
	// After a failure the heartbeat tries again often, so that issuing
	// resumes soon after the store answers again; a store that is down
	// fails such calls at once.
	g.retry = max(min(g.every/3, maxRetry), time.Nanosecond)
	if err := g.acquireFirst(ctx); err != nil {
		return nil, err
	}
	hb, stop := context.WithCancel(context.WithoutCancel(ctx))
	g.stop = stop
	g.done = make(chan struct{})
	go g.heartbeat(hb)
	return g, nil
}

// Next returns a new id. ctx bounds the waits for the clock.
func (g *Generator) Next(ctx context.Context) (int64, error) {
	id, _, err := g.take(ctx, 1)
	return id, err
}

// NextN returns n new ids in increasing order, n >= 1.
func (g *Generator) NextN(ctx context.Context, n int) ([]int64, error) {
	if n < 1 {
		return nil, fmt.Errorf("snowflake: count %d is below 1", n)
	}
	ids := make([]int64, 0, n)
	for len(ids) < n {
		first, k, err := g.take(ctx, n-len(ids))
		if err != nil {
			return nil, err
		}
		for i := range int64(k) {
			ids = append(ids, first+i*g.seqStep)
		}
	}
	return ids, nil
}

// take reserves up to want ids of consecutive sequence numbers in one unit
// of time: first, first+step, ..., first+(n-1)*step, where step is 1 with
// the sequence in the low bits (Leaf's order) and 2^W above the worker id.
func (g *Generator) take(ctx context.Context, want int) (first int64, n int, err error) {
	counted := false
	for {
		g.mu.Lock()
		now := g.now()
		if err := g.usableLocked(now); err != nil {
			g.mu.Unlock()
			return 0, 0, err
		}
		t := g.unitOf(now)
		if t > g.last {
			if t > g.maxTime {
				g.mu.Unlock()
				return 0, 0, errExhausted(g.epochMs, g.layout)
			}
			g.last = t
			g.next = g.seqOffset() & g.maxSeq
		}
		if t == g.last && g.next <= g.maxSeq {
			n = int(min(int64(want), g.usedUp-g.next))
			first = g.compose(t, g.workerID, g.next)
			g.next += int64(n)
			g.mu.Unlock()
			g.issued.Add(uint64(n))
			return first, n, nil
		}

		var wait time.Duration
		if t == g.last { // no sequence number left in this unit
			g.seqWaits.Add(1)
			wait = g.untilUnit(now, g.last+1)
		} else { // the clock is behind the last id
			if !counted {
				counted = true
				g.backwards.Add(1)
			}
			wait = g.untilUnit(now, g.last)
			if wait > g.tolerance {
				err := g.errBackwardsLocked(now, wait)
				g.mu.Unlock()
				return 0, 0, err
			}
		}
		g.mu.Unlock()
		if err := g.sleep(ctx, wait); err != nil {
			return 0, 0, fmt.Errorf("snowflake: wait for the clock: %w", err)
		}
	}
}

// Ready returns nil when an id can be issued now without an error: the
// generator is open, its lease (if any) is held and fresh, the clock is not
// behind the last id by more than the tolerance and the range has not run out.
func (g *Generator) Ready() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if err := g.usableLocked(now); err != nil {
		return err
	}
	if g.unitOf(now) > g.maxTime {
		return errExhausted(g.epochMs, g.layout)
	}
	if wait := g.untilUnit(now, g.last); wait > g.tolerance {
		return g.errBackwardsLocked(now, wait)
	}
	return nil
}

// Layout is the ids' layout.
func (g *Generator) Layout() Layout { return g.layout }

// WorkerID is the worker id in use; with leases it may change after the
// lease was lost and acquired again. It is the last one held even while no
// lease is: Stats.WorkerID tells whether it is held.
func (g *Generator) WorkerID() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.workerID
}

// Close stops issuing; with leases it stops the heartbeat, waiting for it
// within ctx, and releases the lease recording the last timestamp issued.
// Calls after the first return the first's result.
func (g *Generator) Close(ctx context.Context) error {
	g.closeOnce.Do(func() { g.closeErr = g.close(ctx) })
	return g.closeErr
}

func (g *Generator) close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	if g.leases == nil {
		return nil
	}
	g.stop()
	select {
	case <-g.done:
	case <-ctx.Done():
		return fmt.Errorf("snowflake: stop the lease heartbeat: %w", ctx.Err())
	}
	g.mu.Lock()
	l, lost, last := g.lease, g.lost, g.lastMsLocked()
	g.mu.Unlock()
	if lost {
		return nil // nothing of ours to release
	}
	if err := g.leases.Release(ctx, l, last); err != nil {
		return fmt.Errorf("snowflake: release worker id %d: %w", l.WorkerID, err)
	}
	return nil
}
