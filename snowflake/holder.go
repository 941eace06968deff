package snowflake

// The lease holder: the first acquisition, the heartbeat that renews the
// lease, what happens when a renewal fails, finds the lease someone else's,
// or finds the store gone back in time, and whether the lease lets the
// generator issue now. The package comment, "Worker leases", has the whole
// account.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// maxRetry bounds the heartbeat's period after a failed renewal.
const maxRetry = 500 * time.Millisecond

// LeaseEvent reports one renewal or acquisition of the worker lease, for
// Settings.OnLease.
type LeaseEvent struct {
	// WorkerID is the worker id after the event.
	WorkerID int64
	// Acquired is true for an acquisition after the lease was lost.
	Acquired bool
	// Err is nil on success. It wraps ErrLeaseLost when the store says the
	// lease is not this holder's, and ErrLeaseRegressed as well when the
	// store went back in time.
	Err error
}

// acquireFirst leases a worker id for a new generator, refusing one whose
// last recorded timestamp is ahead of the local clock beyond the tolerance,
// and records the first renewal before anything is issued. g is not shared
// yet.
func (g *Generator) acquireFirst(ctx context.Context) error {
	start := g.now()
	l, err := g.leases.Acquire(ctx, g.holder, g.layout.MaxWorkerID()+1, g.ttl)
	if err != nil {
		return fmt.Errorf("snowflake: lease a worker id for %q: %w", g.holder, err)
	}
	if err := checkWorkerID(l.WorkerID, g.layout, "the lease store"); err != nil {
		return fmt.Errorf("snowflake: %w", err)
	}
	now := g.now()
	if ahead := time.UnixMilli(l.LastTimestamp).Sub(now); ahead > g.tolerance {
		err := fmt.Errorf("snowflake: worker id %d was last used at %s, %v ahead of the local clock %s (tolerance %v)",
			l.WorkerID, fmtMs(l.LastTimestamp), ahead, now.UTC().Format(time.RFC3339Nano), g.tolerance)
		if rerr := g.leases.Release(ctx, l, l.LastTimestamp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("snowflake: release worker id %d: %w", l.WorkerID, rerr))
		}
		return err
	}
	g.last = g.unitAtMs(l.LastTimestamp)
	g.floorMs = l.LastTimestamp // reported back as is until an id is issued
	g.adoptLocked(l, start)
	if err := g.extend(ctx); err != nil {
		err := fmt.Errorf("snowflake: record the first renewal of worker id %d: %w", l.WorkerID, err)
		if rerr := g.leases.Release(ctx, g.lease, g.lastMsLocked()); rerr != nil && !errors.Is(rerr, ErrLeaseLost) {
			err = errors.Join(err, fmt.Errorf("snowflake: release worker id %d: %w", l.WorkerID, rerr))
		}
		return err
	}
	return nil
}

// reserveLocked is the last timestamp (Unix ms) to record in a renewal that
// starts at start: the TTL less the margin ahead, as far as the holder may
// issue without another renewal. Recording it before issuing up to it means
// a later holder of the id starts above every id this one issued, whatever
// the two machines' clocks say.
func (g *Generator) reserveLocked(start time.Time) int64 {
	return max(start.Add(g.ttl-g.margin).UnixMilli(), g.lastMsLocked())
}

// lastMsLocked is the last timestamp (Unix ms) to record as used: the
// start of the last id's unit, and never below a LastTimestamp acquired,
// which may lie within a unit (written by a holder with another unit).
func (g *Generator) lastMsLocked() int64 {
	return max(g.startMs(g.last), g.floorMs)
}

// heartbeat renews the lease until ctx is cancelled.
func (g *Generator) heartbeat(ctx context.Context) {
	defer close(g.done)
	wait := g.every
	for {
		if g.sleep(ctx, wait) != nil || ctx.Err() != nil {
			return
		}
		if g.renew(ctx) == nil {
			wait = g.every
		} else {
			wait = g.retry
		}
	}
}

// renew renews the lease, or acquires one again when it was lost (also by
// this very renewal), reports each step to OnLease and returns the last
// step's error.
func (g *Generator) renew(ctx context.Context) error {
	g.mu.Lock()
	lost := g.lost
	g.mu.Unlock()
	if !lost {
		err := g.extend(ctx)
		g.report(LeaseEvent{WorkerID: g.WorkerID(), Err: err})
		if !errors.Is(err, ErrLeaseLost) {
			return err
		}
	}
	ev := g.reacquire(ctx)
	g.report(ev)
	return ev.Err
}

func (g *Generator) report(ev LeaseEvent) {
	if g.onLease != nil {
		g.onLease(ev)
	}
}

// extend renews the lease held, recording the bound of this holder's next
// timestamps. An error wrapping ErrLeaseLost means the store says the lease
// is someone else's (or went back in time): issuing stops at once.
func (g *Generator) extend(ctx context.Context) error {
	start := g.now()
	g.mu.Lock()
	l, reserve := g.lease, g.reserveLocked(start)
	g.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, g.every)
	defer cancel()
	nl, err := g.leases.Renew(ctx, l, reserve, g.ttl)
	if err == nil && nl.WorkerID != l.WorkerID {
		err = fmt.Errorf("the lease store renewed worker id %d as %d", l.WorkerID, nl.WorkerID)
	}
	nl.Registry = l.Registry // renewed where it was granted
	if err != nil {
		g.leaseFailures.Add(1)
		g.mu.Lock()
		lost := errors.Is(err, ErrLeaseLost)
		g.leaseErr = fmt.Errorf("renew: %w", err)
		g.lost = lost
		if errors.Is(err, ErrLeaseRegressed) {
			g.regressions.Add(1)
			if g.quietTill == nil {
				g.quietTill = map[string]time.Time{}
			}
			g.quietTill[l.Registry] = g.now().Add(g.ttl - g.margin)
		}
		g.mu.Unlock()
		return g.leaseErr
	}
	g.renewals.Add(1)
	g.mu.Lock()
	g.lease = nl
	g.renewedAt = start
	// The holder may issue in every unit that starts at or before reserve:
	// the next holder's floor is that unit.
	g.bound = max(g.bound, g.unitAtMs(reserve))
	g.leaseErr = nil
	g.mu.Unlock()
	return nil
}

// reacquire asks the store for a worker id again after the lease was lost.
func (g *Generator) reacquire(ctx context.Context) LeaseEvent {
	actx, cancel := context.WithTimeout(ctx, g.every)
	defer cancel()
	start := g.now()
	l, err := g.leases.Acquire(actx, g.holder, g.layout.MaxWorkerID()+1, g.ttl)
	if err == nil {
		err = checkWorkerID(l.WorkerID, g.layout, "the lease store")
	}
	g.mu.Lock()
	if err != nil {
		g.leaseFailures.Add(1)
		g.leaseErr = fmt.Errorf("acquire again: %w", err)
		ev := LeaseEvent{WorkerID: g.workerID, Acquired: true, Err: g.leaseErr}
		g.mu.Unlock()
		return ev
	}
	g.renewals.Add(1)
	g.adoptLocked(l, start)
	g.mu.Unlock()
	// Nothing is issued on the new id until a renewal records how far
	// ahead this holder may go; if this one fails, the next heartbeat's does.
	return LeaseEvent{WorkerID: l.WorkerID, Acquired: true, Err: g.extend(actx)}
}

// adoptLocked takes l, acquired at start, as the lease in use.
func (g *Generator) adoptLocked(l Lease, start time.Time) {
	g.lease = l
	g.workerID = l.WorkerID
	g.renewedAt = start
	g.lost = false
	g.leaseErr = nil
	g.raiseFloorLocked(l.LastTimestamp)
	g.bound = g.last // nothing to issue until a renewal records a bound
	// The worker id may have changed: the next id goes to a later unit,
	// so that ids keep increasing.
	g.next = g.usedUp
}

// raiseFloorLocked makes sure no id is issued in the unit that holds
// lastTimestamp (Unix ms) or below it.
func (g *Generator) raiseFloorLocked(lastTimestamp int64) {
	g.floorMs = max(g.floorMs, lastTimestamp)
	if floor := g.unitAtMs(lastTimestamp); floor > g.last {
		g.last = floor
		g.next = g.usedUp
	}
}

// usableLocked says why no id may be issued at now, or nil.
func (g *Generator) usableLocked(now time.Time) error {
	switch {
	case g.closed:
		return ErrClosed
	case g.leases == nil:
		return nil
	case now.Before(g.quietTill[g.lease.Registry]):
		err := fmt.Errorf("%w: %w: worker id %d: waiting until %s for every holder the store forgot to stop",
			ErrLeaseLost, ErrLeaseRegressed, g.workerID, g.quietTill[g.lease.Registry].UTC().Format(time.RFC3339Nano))
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
