package snowflake

import "time"

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
	// Layout is the ids' layout; Epoch the start of their time field.
	Layout Layout
	Epoch  time.Time
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
		Epoch:            g.Epoch(),
	}
}
