// Package snowflake issues 64-bit ids that grow with time. By default they
// have the layout of Meituan's Leaf (Twitter's snowflake):
//
//	+-------+----------------------------------+-----------+-------------+
//	| 1 bit | 41 bits                          | 10 bits   | 12 bits     |
//	| 0     | milliseconds since the epoch     | worker id | sequence    |
//	+-------+----------------------------------+-----------+-------------+
//	 bit 63   bits 62..22                        bits 21..12 bits 11..0
//
//	id = ms<<22 | worker<<12 | sequence
//
// The sign bit is always 0, so every id is a positive int64. The 41 bits of
// milliseconds last 2^41 ms (about 69.7 years) from the epoch; Exhausts tells
// when. One worker issues at most 4096 ids per millisecond (4.096 million per
// second); a caller who finds the millisecond used up waits, asleep, for the
// next one.
//
// # Layouts
//
// Settings.Layout changes the unit of the time field (milliseconds or
// seconds) and the widths of the three fields:
//
//	id = t<<(W+S) | worker<<S | sequence      T + W + S = 63, or 53
//
// with T bits of time, W of worker id and S of sequence. The time field
// lasts 2^T units from the epoch; a worker issues at most 2^S ids per unit;
// leased worker ids come from a pool of 2^W. When T+W+S is 53, the ten bits
// below the sign bit are 0 too, and every id is an integer that a
// JavaScript number holds exactly. Decode reads an id by the generator's
// layout: an id of one layout read by another is meaningless, so changing
// the layout of a running system is a migration, like changing the epoch.
//
// Below, "unit" is the layout's time unit; with Leaf's layout, a
// millisecond.
//
// # Sequence offset
//
// Each new unit's sequence starts at Settings.SeqOffset() instead of 0; by
// default a random number in 0..99, as in Leaf. Under low traffic most units
// issue a single id; were its sequence always 0, every such id would be a
// multiple of 4096 and sharding by `id % n` (n a power of two up to 4096)
// would send them all to shard 0. The offset spreads them, at the price of up
// to 99 of the 4096 numbers of a busy millisecond. With a narrower sequence
// field the default offset is below 2^S/32, so that it costs at most a 32nd
// of a unit's numbers (with 4 bits of sequence it is always 0).
//
// # Clock
//
// The generator keeps the unit of the last id it issued and never issues
// below it, nor in it once its sequence numbers are used up, whatever the
// wall clock does. When the clock is found behind the start of that unit by
// at most Settings.Tolerance, the caller waits it out; by more, Next fails
// with an error wrapping ErrClockBackwards and the generator recovers by
// itself once the clock has caught up. With seconds, a clock that steps back
// within the second of the last id goes unnoticed and harms nothing: the
// sequence goes on.
//
// # Worker leases
//
// The worker id is either fixed (Settings.WorkerID) or leased from a
// LeaseStore, from a pool of 2^W. A leaseholder issues only units strictly
// above the one that holds the lease's LastTimestamp. It renews the lease
// at once and then from a heartbeat goroutine every third of its TTL (every
// half second at most after a failed one); each renewal records, as the
// lease's LastTimestamp, the renewal's start plus LeaseTTL less a safety
// margin (a sixth of the TTL), and the holder issues no unit that starts
// beyond what it recorded. It also stops issuing once LeaseTTL less the
// margin has passed on the local monotonic clock since the start of its
// last successful renewal: so it stops before the store can give the id to
// someone else, and the next holder starts above every id it issued,
// whatever the two clocks say. It resumes after a successful renewal; when
// the store says the lease is someone else's, it stops at once and
// acquires a worker id again. Close stops the heartbeat and releases the
// lease, recording the last timestamp issued.
//
// LastTimestamp is in Unix milliseconds whatever the unit: a unit is
// recorded as its first millisecond, the time its ids decode to. So with
// seconds a holder records the start of its last id's second, and the next
// holder of the id starts in a later second, waiting for it if need be.
//
// When a renewal finds the lease older than the store had confirmed
// (ErrLeaseRegressed: a failover to a database that missed the last
// writes), the store can no longer be trusted to know who holds which id:
// another holder may be issuing on an id the store shows free. So after
// acquiring again the generator issues nothing until LeaseTTL less the
// margin has passed since the regression was found, by which time every
// holder whose renewals the store lost has stopped by itself.
package snowflake

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of snowflake mode.
var (
	// ErrInvalidSettings: Settings that cannot work (see New).
	ErrInvalidSettings = errors.New("invalid snowflake settings")
	// ErrClockBackwards: the clock moved back by more than the tolerance.
	ErrClockBackwards = errors.New("clock moved backwards")
	// ErrLeaseLost: the worker-id lease could not be renewed in time, or
	// another holder has it; no id is issued until it is renewed.
	ErrLeaseLost = errors.New("worker lease lost")
	// ErrLeaseRegressed: the lease store answered with a lease older than
	// one it had already confirmed (a failover to a database that missed
	// the last writes). It comes wrapped with ErrLeaseLost.
	ErrLeaseRegressed = errors.New("worker lease went back in time")
	// ErrLeaseUnrenewed: the lease could not be renewed in time, most
	// likely because the store does not answer; no id is issued until a
	// renewal succeeds. It comes wrapped with ErrLeaseLost.
	ErrLeaseUnrenewed = errors.New("worker lease not renewed in time")
	// ErrNoWorkerID: every worker id is held by a live lease.
	ErrNoWorkerID = errors.New("no free worker id")
	// ErrInvalidID: an id that this layout cannot have produced (a
	// negative one, or one above 2^53-1 with a 53-bit layout).
	ErrInvalidID = errors.New("invalid snowflake id")
	// ErrClosed: the generator was closed.
	ErrClosed = errors.New("generator closed")
	// ErrExhausted: the range of the layout's time field from the epoch has
	// run out; no id can be issued with this epoch and layout any more.
	ErrExhausted = errors.New("timestamp range exhausted")
)

// Limits of the default layout, DefaultLayout().
const (
	// MaxWorkerID is the largest worker id of the default layout (1023);
	// Layout.MaxWorkerID gives any layout's.
	MaxWorkerID = 1<<10 - 1
	// MaxSequence is the largest sequence number within a millisecond of
	// the default layout (4095); Layout.MaxSequence gives any layout's.
	MaxSequence = 1<<12 - 1
)

// Defaults of Settings.
const (
	// DefaultEpochMs is Twitter's and Leaf's epoch, 2010-11-04T01:42:54.657Z.
	DefaultEpochMs   = 1288834974657
	DefaultLeaseTTL  = 30 * time.Second
	DefaultTolerance = 5 * time.Millisecond

	// maxRetry bounds the heartbeat's period after a failed renewal.
	maxRetry = 500 * time.Millisecond
)

// Settings configures a Generator. Zero fields take the documented defaults.
type Settings struct {
	// EpochMs is the epoch in Unix milliseconds; 0 means DefaultEpochMs.
	// It may not be negative nor in the future, and the range of the
	// layout's time field from it must not have run out.
	EpochMs int64
	// Layout is the ids' layout; the zero Layout means DefaultLayout().
	Layout Layout
	// WorkerID is the fixed worker id, 0..Layout.MaxWorkerID(), used when
	// Leases is nil and ignored otherwise.
	WorkerID int64
	// Leases, when set, is where the worker id is leased from.
	Leases LeaseStore
	// Holder identifies this process to Leases; required with Leases.
	Holder string
	// LeaseTTL is the lease's time to live; 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Tolerance is the largest backward clock step that is waited out;
	// 0 means DefaultTolerance.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now. Lease ages are measured with
	// Sub on its values, so time.Now's monotonic reading is used.
	Now func() time.Time
	// Sleep waits for d or until ctx is done; nil means a timer. It serves
	// the waits for the clock and the lease heartbeat's period.
	Sleep func(ctx context.Context, d time.Duration) error
	// SeqOffset gives the first sequence number of each new unit of time;
	// nil means a random number in 0..99, or below 2^SequenceBits/32 when
	// that is less (see the package comment). Its result is taken modulo
	// 2^SequenceBits.
	SeqOffset func() int64
	// OnLease, when set, is called after each renewal and acquisition made
	// by the heartbeat, from the heartbeat's goroutine.
	OnLease func(LeaseEvent)
}

// Stats are a Generator's counters since New, and the state an operator
// watches.
type Stats struct {
	// WorkerID is the worker id ids are issued with: the fixed one, or the
	// leased one while the lease is held; -1 while no lease is held (the
	// store gave it to another, renewals failed until issuing stopped, or
	// Close released it). Generator.WorkerID keeps the last id instead.
	WorkerID int64
	// Issued counts the ids handed out.
	Issued uint64
	// ClockBackwards counts the calls that found the clock behind the last
	// id's unit of time (whether they waited or failed).
	ClockBackwards uint64
	// SequenceWaits counts the waits for the next unit of time because the
	// current one had no sequence number left.
	SequenceWaits uint64
	// LeaseRenewals and LeaseFailures count successful and failed lease
	// renewals (re-acquisitions included); both stay 0 without Leases.
	LeaseRenewals uint64
	LeaseFailures uint64
	// LeaseRegressions counts the renewals that found the lease gone back
	// in time (ErrLeaseRegressed).
	LeaseRegressions uint64
	// LeaseExpires is when the lease last acquired or renewed runs out,
	// by the store's clock; zero without Leases. It is not cleared when
	// the lease is lost, so a lapsed lease shows a time in the past.
	LeaseExpires time.Time
	// Holder is the name this generator holds leases under; LastRenewal
	// is when its last successful renewal or acquisition began, by the
	// local clock; LeaseError is why the last one failed, empty after a
	// success. All three stay empty without Leases.
	Holder      string
	LastRenewal time.Time
	LeaseError  string
	// Exhausts is the same as Generator.Exhausts.
	Exhausts time.Time
	// Layout is the ids' layout.
	Layout Layout
}

// Generator issues snowflake ids. It is safe for concurrent use.
type Generator struct {
	epochMs int64
	layout  Layout
	// The layout as the hot path uses it: plain integers, so that issuing
	// an id costs a few shifts and no call.
	unitMs      int64 // 1 or 1000
	timeShift   uint8 // W+S
	workerShift uint8 // S
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

	mu        sync.Mutex // protects the fields below
	last      int64      // unit since the epoch of the last id issued, or the leases' floor
	next      int64      // next sequence number in last; usedUp when none is left
	floorMs   int64      // Unix ms: the largest LastTimestamp acquired; never recorded lower
	workerID  int64      //
	lease     Lease      // the lease held (with Leases)
	renewedAt time.Time  // start of the last successful Acquire or Renew
	bound     int64      // unit since the epoch: no id above it; recorded in the store by the last Renew
	lost      bool       // the store said the lease is someone else's
	quietTill time.Time  // after a regression: nothing is issued before it
	leaseErr  error      // the last renewal's error; nil after a success
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
	g := &Generator{
		epochMs:     s.EpochMs,
		layout:      l,
		unitMs:      l.Unit.Milliseconds(),
		timeShift:   uint8(l.WorkerBits + l.SequenceBits),
		workerShift: uint8(l.SequenceBits),
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

// withDefaults fills the zero fields of s with the documented defaults.
func (s Settings) withDefaults() Settings {
	if s.EpochMs == 0 {
		s.EpochMs = DefaultEpochMs
	}
	s.Layout = s.Layout.orDefault()
	if s.Tolerance == 0 {
		s.Tolerance = DefaultTolerance
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Sleep == nil {
		s.Sleep = sleep
	}
	if s.LeaseTTL == 0 {
		s.LeaseTTL = DefaultLeaseTTL
	}
	return s
}

// validate checks s, with its defaults, at now.
func (s Settings) validate(now time.Time) error {
	if err := s.Layout.Validate(); err != nil {
		return err
	}
	switch {
	case s.EpochMs < 0:
		return fmt.Errorf("%w: epoch %d is negative", ErrInvalidSettings, s.EpochMs)
	case s.Tolerance < 0:
		return fmt.Errorf("%w: clock tolerance %v is negative", ErrInvalidSettings, s.Tolerance)
	case s.EpochMs > now.UnixMilli():
		return fmt.Errorf("%w: epoch %s is in the future (now %s)",
			ErrInvalidSettings, fmtMs(s.EpochMs), now.UTC().Format(time.RFC3339Nano))
	case !now.Before(s.Layout.End(s.EpochMs)):
		return errExhausted(s.EpochMs, s.Layout)
	case s.Leases == nil:
		return checkWorkerID(s.WorkerID, s.Layout, "")
	case s.Holder == "":
		return fmt.Errorf("%w: a lease holder name is required with a lease store", ErrInvalidSettings)
	case s.LeaseTTL < 0:
		return fmt.Errorf("%w: lease TTL %v is negative", ErrInvalidSettings, s.LeaseTTL)
	}
	return nil
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
			ids = append(ids, first+i)
		}
	}
	return ids, nil
}

// take reserves up to want consecutive ids of one unit of time: first,
// first+1, ..., first+n-1.
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

// unitOf is the unit of time since the epoch that now is in. It stays
// within the compiler's inlining budget, so that take pays no call for it:
// with milliseconds it adds one well-predicted branch to the subtraction
// that a fixed layout needed.
func (g *Generator) unitOf(now time.Time) int64 {
	t := now.UnixMilli() - g.epochMs
	if g.unitMs != 1 {
		t = floorDiv(t, g.unitMs)
	}
	return t
}

// floorDiv is a/b rounded down (b > 0), not toward zero: a clock before the
// epoch is in unit -1, not 0.
func floorDiv(a, b int64) int64 {
	if a < 0 {
		a -= b - 1
	}
	return a / b
}

// startMs is the first Unix millisecond of unit t since the epoch.
func (g *Generator) startMs(t int64) int64 { return g.epochMs + t*g.unitMs }

// untilUnit is how long from now until unit t (since the epoch) begins.
func (g *Generator) untilUnit(now time.Time, t int64) time.Duration {
	return time.UnixMilli(g.startMs(t)).Sub(now)
}

// unitAtMs is the unit since the epoch that Unix millisecond ms is in.
func (g *Generator) unitAtMs(ms int64) int64 {
	return g.unitOf(time.UnixMilli(ms))
}

// usableLocked says why no id may be issued at now, or nil.
func (g *Generator) usableLocked(now time.Time) error {
	switch {
	case g.closed:
		return ErrClosed
	case g.leases == nil:
		return nil
	case now.Before(g.quietTill):
		err := fmt.Errorf("%w: %w: worker id %d: waiting until %s for every holder the store forgot to stop",
			ErrLeaseLost, ErrLeaseRegressed, g.workerID, g.quietTill.UTC().Format(time.RFC3339Nano))
		if g.leaseErr != nil {
			err = fmt.Errorf("%w; %w", err, g.leaseErr)
		}
		return err
	case g.lost:
		return fmt.Errorf("%w: worker id %d: %w", ErrLeaseLost, g.workerID, g.leaseErr)
	}
	age, limit := now.Sub(g.renewedAt), g.ttl-g.margin
	if age < limit && g.unitOf(now) <= g.bound {
		return nil
	}
	why := "no renewal has completed"
	if g.leaseErr != nil {
		why = "last error: " + g.leaseErr.Error()
	}
	if age < limit {
		return fmt.Errorf("%w: %w: worker id %d: the clock reads %s, past %s, the last timestamp recorded as reserved; %s",
			ErrLeaseLost, ErrLeaseUnrenewed, g.workerID, now.UTC().Format(time.RFC3339Nano), fmtMs(g.startMs(g.bound)), why)
	}
	return fmt.Errorf("%w: %w: worker id %d not renewed for %v (limit %v); %s",
		ErrLeaseLost, ErrLeaseUnrenewed, g.workerID, age, limit, why)
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

// Decode takes an id of this generator's layout and epoch apart: its Time
// is the start of its unit. Negative ids, and with a 53-bit layout ids
// above 2^53-1, are ErrInvalidID; every other int64 is a value the layout
// can hold.
func (g *Generator) Decode(id int64) (ID, error) {
	switch {
	case id < 0:
		return ID{}, fmt.Errorf("%w: %d is negative", ErrInvalidID, id)
	case id > g.layout.MaxID():
		return ID{}, fmt.Errorf("%w: %d is above %d, the largest id of the %d-bit layout %s",
			ErrInvalidID, id, g.layout.MaxID(), g.layout.Bits(), g.layout)
	}
	return ID{
		ID:       id,
		Time:     time.UnixMilli(g.startMs(id >> g.timeShift)).UTC(),
		WorkerID: id >> g.workerShift & g.layout.MaxWorkerID(),
		Sequence: id & g.maxSeq,
	}, nil
}

// compose is the inverse of Decode for unit t since the epoch.
func (g *Generator) compose(t, workerID, seq int64) int64 {
	return t<<g.timeShift | workerID<<g.workerShift | seq
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

// Stats returns the generator's counters and lease state.
func (g *Generator) Stats() Stats {
	g.mu.Lock()
	worker, expires, renewed, leaseErr := int64(-1), g.lease.Expires, g.renewedAt, ""
	if g.heldLocked(g.now()) {
		worker = g.workerID
	}
	if g.leaseErr != nil {
		leaseErr = g.leaseErr.Error()
	}
	holder := ""
	if g.leases != nil {
		holder = g.holder
	}
	g.mu.Unlock()
	return Stats{
		WorkerID:         worker,
		Issued:           g.issued.Load(),
		ClockBackwards:   g.backwards.Load(),
		SequenceWaits:    g.seqWaits.Load(),
		LeaseRenewals:    g.renewals.Load(),
		LeaseFailures:    g.leaseFailures.Load(),
		LeaseRegressions: g.regressions.Load(),
		LeaseExpires:     expires,
		Holder:           holder,
		LastRenewal:      renewed,
		LeaseError:       leaseErr,
		Exhausts:         g.Exhausts(),
		Layout:           g.layout,
	}
}

// heldLocked says whether the worker id is this generator's at now: a
// fixed one always is; a leased one until the store gives it to another,
// Close releases it, or renewals have failed for as long as issuing goes
// on without one (LeaseTTL less the margin). A regression's quiet time
// does not count: the lease acquired after it is held, only not used yet.
func (g *Generator) heldLocked(now time.Time) bool {
	switch {
	case g.leases == nil:
		return true
	case g.closed, g.lost:
		return false
	}
	return now.Sub(g.renewedAt) < g.ttl-g.margin
}

// Exhausts is the first instant (UTC) at which the range of the layout's
// time field has run out and no id can be issued.
func (g *Generator) Exhausts() time.Time {
	return g.layout.End(g.epochMs)
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

// spinFor is the last stretch of a wait that sleep spends yielding the
// processor rather than on a timer: a timer fires late by tens to hundreds
// of microseconds, a large part of the millisecond a caller waits for when
// its 4096 sequence numbers are used up (with Leaf's layout). Only a caller with ids to take
// spins, so an idle generator costs nothing.
const spinFor = time.Millisecond

// sleep waits d, or until ctx is done: on a timer for all but the last
// spinFor, then yielding until the deadline.
func sleep(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	if coarse := d - spinFor; coarse > 0 {
		t := time.NewTimer(coarse)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return err
		}
		runtime.Gosched()
	}
	return nil
}

// randomOffset is the default Settings.SeqOffset of layout l: random below
// 100, or below 2^S/32 when that is less, and at least below 1.
func randomOffset(l Layout) func() int64 {
	span := min(max((l.MaxSequence()+1)/32, 1), 100)
	return func() int64 { return rand.Int64N(span) }
}

// errExhausted says that the range of l's time field from epochMs has run
// out.
func errExhausted(epochMs int64, l Layout) error {
	return fmt.Errorf("%w: the %d-bit range of %s of epoch %s ran out at %s",
		ErrExhausted, l.TimeBits, unitName(l.Unit), fmtMs(epochMs), l.End(epochMs).Format(time.RFC3339Nano))
}

// errBackwardsLocked says that the clock, at now, is wait behind the start
// of the last id's unit.
func (g *Generator) errBackwardsLocked(now time.Time, wait time.Duration) error {
	return fmt.Errorf("%w: the clock reads %s, %v before the last id's time %s (tolerance %v)",
		ErrClockBackwards, now.UTC().Format(time.RFC3339Nano), wait, fmtMs(g.startMs(g.last)), g.tolerance)
}

// checkWorkerID checks that id fits layout l; from names where it came
// from when that was not the settings.
func checkWorkerID(id int64, l Layout, from string) error {
	if id >= 0 && id <= l.MaxWorkerID() {
		return nil
	}
	if from != "" {
		return fmt.Errorf("%s gave worker id %d, outside 0..%d", from, id, l.MaxWorkerID())
	}
	return fmt.Errorf("%w: worker id %d is outside 0..%d of %d worker bits", ErrInvalidSettings, id, l.MaxWorkerID(), l.WorkerBits)
}

func fmtMs(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}
