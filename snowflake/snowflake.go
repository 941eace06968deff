// Package snowflake issues 64-bit ids that grow with time, in the layout of
// Meituan's Leaf (Twitter's snowflake):
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
// # Sequence offset
//
// Each new millisecond's sequence starts at Settings.SeqOffset() instead of
// 0; by default a random number in 0..99, as in Leaf. Under low traffic most
// milliseconds issue a single id; were its sequence always 0, every such id
// would be a multiple of 4096 and sharding by `id % n` (n a power of two up to
// 4096) would send them all to shard 0. The offset spreads them, at the price
// of up to 99 of the 4096 numbers of a busy millisecond.
//
// # Clock
//
// The generator keeps the millisecond of the last id it issued and never
// issues at or below it, whatever the wall clock does. When the clock is found
// behind that millisecond by at most Settings.Tolerance, the caller waits it
// out; by more, Next fails with an error wrapping ErrClockBackwards and the
// generator recovers by itself once the clock has caught up.
//
// # Worker leases
//
// The worker id is either fixed (Settings.WorkerID) or leased from a
// LeaseStore. A leaseholder issues only timestamps strictly above the
// lease's LastTimestamp. It renews the lease at once and then from a
// heartbeat goroutine every third of its TTL (every half second at most
// after a failed one); each renewal records, as the
// lease's LastTimestamp, the renewal's start plus LeaseTTL less a safety
// margin (a sixth of the TTL), and the holder issues no timestamp beyond
// what it recorded. It also stops issuing once LeaseTTL less the margin has
// passed on the local monotonic clock since the start of its last successful
// renewal: so it stops before the store can give the id to someone else,
// and the next holder starts above every id it issued, whatever the two
// clocks say. It resumes after a successful renewal; when the store says the
// lease is someone else's, it stops at once and acquires a worker id again.
// Close stops the heartbeat and releases the lease, recording the last
// timestamp issued.
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
	// ErrInvalidID: an id that this layout cannot have produced.
	ErrInvalidID = errors.New("invalid snowflake id")
	// ErrClosed: the generator was closed.
	ErrClosed = errors.New("generator closed")
	// ErrExhausted: the 41-bit range of milliseconds from the epoch has run
	// out; no id can be issued with this epoch any more.
	ErrExhausted = errors.New("timestamp range exhausted")
)

// The layout.
const (
	timeBits   = 41
	workerBits = 10
	seqBits    = 12

	workerShift = seqBits
	timeShift   = seqBits + workerBits
	maxMs       = 1<<timeBits - 1
	usedUp      = 1 << seqBits // next sequence of a millisecond that has none left

	// MaxWorkerID is the largest worker id (1023).
	MaxWorkerID = 1<<workerBits - 1
	// MaxSequence is the largest sequence number within a millisecond (4095).
	MaxSequence = 1<<seqBits - 1
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
	// It may not be negative nor in the future, and the 41-bit range it
	// starts must not have run out.
	EpochMs int64
	// WorkerID is the fixed worker id, 0..MaxWorkerID, used when Leases is
	// nil and ignored otherwise.
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
	// SeqOffset gives the first sequence number of each new millisecond;
	// nil means a random number in 0..99. Its result is taken modulo 4096.
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
	// id's millisecond (whether they waited or failed).
	ClockBackwards uint64
	// SequenceWaits counts the waits for the next millisecond because the
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
}

// Generator issues snowflake ids. It is safe for concurrent use.
type Generator struct {
	epochMs   int64
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
	lastMs    int64      // ms since the epoch of the last id issued, or the lease's floor
	next      int64      // next sequence number in lastMs; usedUp when none is left
	workerID  int64      //
	lease     Lease      // the lease held (with Leases)
	renewedAt time.Time  // start of the last successful Acquire or Renew
	boundMs   int64      // ms since the epoch: no id above it; recorded in the store by the last Renew
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
// negative epoch, tolerance or lease TTL, an epoch in the future, a worker
// id outside 0..MaxWorkerID, leases without a holder name); an epoch whose
// range has run out is ErrExhausted. With leases, the errors of the lease
// store are returned wrapped, ErrNoWorkerID among them.
func New(ctx context.Context, s Settings) (*Generator, error) {
	s = s.withDefaults()
	g := &Generator{
		epochMs:   s.EpochMs,
		tolerance: s.Tolerance,
		now:       s.Now,
		sleep:     s.Sleep,
		seqOffset: s.SeqOffset,
		onLease:   s.OnLease,
		leases:    s.Leases,
		holder:    s.Holder,
		ttl:       s.LeaseTTL,
		lastMs:    -1,
		next:      usedUp,
	}
	if err := s.validate(g.now()); err != nil {
		return nil, err
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
	if s.Tolerance == 0 {
		s.Tolerance = DefaultTolerance
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Sleep == nil {
		s.Sleep = sleep
	}
	if s.SeqOffset == nil {
		s.SeqOffset = randomOffset
	}
	if s.LeaseTTL == 0 {
		s.LeaseTTL = DefaultLeaseTTL
	}
	return s
}

// validate checks s, with its defaults, at now.
func (s Settings) validate(now time.Time) error {
	switch {
	case s.EpochMs < 0:
		return fmt.Errorf("%w: epoch %d is negative", ErrInvalidSettings, s.EpochMs)
	case s.Tolerance < 0:
		return fmt.Errorf("%w: clock tolerance %v is negative", ErrInvalidSettings, s.Tolerance)
	case s.EpochMs > now.UnixMilli():
		return fmt.Errorf("%w: epoch %s is in the future (now %s)",
			ErrInvalidSettings, fmtMs(s.EpochMs), now.UTC().Format(time.RFC3339Nano))
	case now.UnixMilli()-s.EpochMs > maxMs:
		return errExhausted(s.EpochMs)
	case s.Leases == nil:
		return checkWorkerID(s.WorkerID, "")
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

// take reserves up to want consecutive ids of one millisecond: first,
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
		ms := now.UnixMilli() - g.epochMs
		if ms > g.lastMs {
			if ms > maxMs {
				g.mu.Unlock()
				return 0, 0, errExhausted(g.epochMs)
			}
			g.lastMs = ms
			g.next = g.seqOffset() & MaxSequence
		}
		if ms == g.lastMs && g.next <= MaxSequence {
			n = int(min(int64(want), MaxSequence+1-g.next))
			first = compose(ms, g.workerID, g.next)
			g.next += int64(n)
			g.mu.Unlock()
			g.issued.Add(uint64(n))
			return first, n, nil
		}

		var wait time.Duration
		if ms == g.lastMs { // no sequence number left in this millisecond
			g.seqWaits.Add(1)
			wait = g.untilMs(now, g.lastMs+1)
		} else { // the clock is behind the last id
			if !counted {
				counted = true
				g.backwards.Add(1)
			}
			wait = g.untilMs(now, g.lastMs)
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

// untilMs is how long from now until millisecond ms (since the epoch) begins.
func (g *Generator) untilMs(now time.Time, ms int64) time.Duration {
	return time.UnixMilli(g.epochMs + ms).Sub(now)
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
	if age < limit && now.UnixMilli()-g.epochMs <= g.boundMs {
		return nil
	}
	why := "no renewal has completed"
	if g.leaseErr != nil {
		why = "last error: " + g.leaseErr.Error()
	}
	if age < limit {
		return fmt.Errorf("%w: %w: worker id %d: the clock reads %s, past %s, the last timestamp recorded as reserved; %s",
			ErrLeaseLost, ErrLeaseUnrenewed, g.workerID, now.UTC().Format(time.RFC3339Nano), fmtMs(g.epochMs+g.boundMs), why)
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
	if ms := now.UnixMilli() - g.epochMs; ms > maxMs {
		return errExhausted(g.epochMs)
	}
	if wait := g.untilMs(now, g.lastMs); wait > g.tolerance {
		return g.errBackwardsLocked(now, wait)
	}
	return nil
}

// Decode takes an id of this generator's layout and epoch apart. Negative
// ids are ErrInvalidID; every other int64 is a value the layout can hold.
func (g *Generator) Decode(id int64) (ID, error) {
	return decode(id, g.epochMs)
}

func decode(id, epochMs int64) (ID, error) {
	if id < 0 {
		return ID{}, fmt.Errorf("%w: %d is negative", ErrInvalidID, id)
	}
	return ID{
		ID:       id,
		Time:     time.UnixMilli(epochMs + id>>timeShift).UTC(),
		WorkerID: id >> workerShift & MaxWorkerID,
		Sequence: id & MaxSequence,
	}, nil
}

// compose is the inverse of decode for ms since the epoch.
func compose(ms, workerID, seq int64) int64 {
	return ms<<timeShift | workerID<<workerShift | seq
}

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

// Exhausts is the first instant (UTC) at which the 41-bit range of
// milliseconds has run out and no id can be issued.
func (g *Generator) Exhausts() time.Time {
	return exhausts(g.epochMs)
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
	l, lost, last := g.lease, g.lost, g.epochMs+g.lastMs
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
// its 4096 sequence numbers are used up. Only a caller with ids to take
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

func randomOffset() int64 { return rand.Int64N(100) }

// errExhausted says that the 41-bit range of epochMs has run out.
func errExhausted(epochMs int64) error {
	return fmt.Errorf("%w: the 41-bit range of epoch %s ran out at %s",
		ErrExhausted, fmtMs(epochMs), exhausts(epochMs).Format(time.RFC3339Nano))
}

// exhausts is the first instant at which the 41-bit range of epochMs has
// run out.
func exhausts(epochMs int64) time.Time { return time.UnixMilli(epochMs + maxMs + 1).UTC() }

// errBackwardsLocked says that the clock, at now, is wait behind the last
// id's millisecond.
func (g *Generator) errBackwardsLocked(now time.Time, wait time.Duration) error {
	return fmt.Errorf("%w: the clock reads %s, %v before the last id's millisecond %s (tolerance %v)",
		ErrClockBackwards, now.UTC().Format(time.RFC3339Nano), wait, fmtMs(g.epochMs+g.lastMs), g.tolerance)
}

// checkWorkerID checks that id fits the layout; from names where it came
// from when that was not the settings.
func checkWorkerID(id int64, from string) error {
	if id >= 0 && id <= MaxWorkerID {
		return nil
	}
	if from != "" {
		return fmt.Errorf("%s gave worker id %d, outside 0..%d", from, id, MaxWorkerID)
	}
	return fmt.Errorf("%w: worker id %d is outside 0..%d", ErrInvalidSettings, id, MaxWorkerID)
}

func fmtMs(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}
