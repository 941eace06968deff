package snowflake

import (
	"context"
	"time"
)

// Lease is a worker id held by one holder until it expires.
type Lease struct {
	WorkerID int64
	Holder   string
	// Instance tells this acquisition apart from any other under the same
	// holder name; the store sets it, and Renew and Release act only on
	// the acquisition that has it.
	Instance string
	// LastTimestamp is the highest id timestamp (Unix milliseconds) that
	// any holder of this worker id may have used: a bound recorded ahead
	// by renewals, or the exact last one recorded at release. A new holder
	// issues only above it.
	LastTimestamp int64
	// Expires is when the lease runs out by the database's clock.
	Expires time.Time
	// Registry names the registry of worker ids that granted the lease,
	// when the LeaseStore is made of several independent ones, each
	// leasing only in its own part of the worker-id space (one per store
	// of a set); "" for a single one. A lease is renewed where it was
	// granted, so its registry never changes. A regression found in one
	// registry quiets only leases of that registry (see the package
	// comment): another's record of who holds its ids is not in doubt.
	Registry string
}

// LeaseStore hands out worker-id leases. Expiry is judged by the store's
// clock (the database's), so holders on different machines agree on it.
type LeaseStore interface {
	// Acquire leases a worker id in [0, maxWorkers) for holder, for ttl,
	// as a new acquisition (a new Instance). It takes a free or expired id,
	// preferring the holder's own expired one, so a holder restarting
	// after a release gets its id back. It never takes a live lease, not
	// even one under the same holder name, so two acquisitions never hold
	// the same id at once. It returns ErrNoWorkerID when all ids are held.
	Acquire(ctx context.Context, holder string, maxWorkers int64, ttl time.Duration) (Lease, error)
	// Renew extends the lease by ttl from now and records lastTimestamp
	// (never lowering the stored one). It returns ErrLeaseLost when the
	// lease is no longer this acquisition's.
	Renew(ctx context.Context, l Lease, lastTimestamp int64, ttl time.Duration) (Lease, error)
	// Release records lastTimestamp as the last one used (it may be below
	// the bound that renewals recorded) and frees the id at once.
	Release(ctx context.Context, l Lease, lastTimestamp int64) error
}
