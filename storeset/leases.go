package storeset

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leafid/leaf/snowflake"
)

// LeaseStore is what a store of a set needs to lease snowflake worker ids
// in its own part of the worker-id space. The store package implements it.
type LeaseStore interface {
	AcquireIn(ctx context.Context, holder string, lo, hi int64, ttl time.Duration) (snowflake.Lease, error)
	Renew(ctx context.Context, l snowflake.Lease, lastTimestamp int64, ttl time.Duration) (snowflake.Lease, error)
	Release(ctx context.Context, l snowflake.Lease, lastTimestamp int64) error
}

// Leases leases snowflake worker ids from the stores of a set: from the
// first store that is up, in the configured order, and always in that
// store's part of the worker-id space (its slot), so no two stores ever
// lease the same worker id, whichever regions run them. A lease is renewed
// and released in the store that granted it; when that store is lost, the
// lease cannot be renewed, the generator stops issuing before it expires,
// and its next lease comes from another store, in that store's part.
//
// Each store is a registry of its own (snowflake.Lease.Registry is its
// name): a store found gone back in time by a renewal puts only its own
// part in doubt. For the lease's time to live after that, the next lease
// comes from another store if one gives it, which the generator uses at
// once instead of waiting out the doubt.
type Leases struct {
	s *Stores

	mu        sync.Mutex            // protects the fields below
	owners    map[string]*member    // the store of each acquisition, by Lease.Instance
	regressed map[*member]time.Time // a store found gone back in time: until when it is avoided
}

var _ snowflake.LeaseStore = (*Leases)(nil)

// Leases returns the set's worker-id leases; a lone store leases from the
// whole worker-id space.
func (s *Stores) Leases() snowflake.LeaseStore {
	if s.lone != nil {
		return loneLeases{s.lone}
	}
	return &Leases{s: s, owners: map[string]*member{}, regressed: map[*member]time.Time{}}
}

// loneLeases are the worker-id leases of a lone store.
type loneLeases struct{ LeaseStore }

func (l loneLeases) Acquire(ctx context.Context, holder string, maxWorkers int64, ttl time.Duration) (snowflake.Lease, error) {
	return l.AcquireIn(ctx, holder, 0, maxWorkers, ttl)
}

// Acquire leases a worker id of the first store that is up and has one,
// leaving to the last the stores found gone back in time lately.
func (l *Leases) Acquire(ctx context.Context, holder string, maxWorkers int64, ttl time.Duration) (snowflake.Lease, error) {
	set := l.s.Set()
	now := time.Now()
	l.mu.Lock()
	rank := make(map[*member]int, len(l.s.members))
	for _, m := range l.s.members {
		if !m.up() {
			rank[m]++
		}
		if now.Before(l.regressed[m]) {
			rank[m] += 2
		}
	}
	l.mu.Unlock()
	var errs []error
	for pass := range 4 {
		for _, m := range l.s.members {
			if rank[m] != pass {
				continue
			}
			lo, hi, err := set.Workers(m.name, maxWorkers)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			lease, err := m.st.AcquireIn(ctx, holder, lo, hi, ttl)
			if err != nil {
				errs = append(errs, fmt.Errorf("store %q: %w", m.name, err))
				if ctx.Err() != nil {
					return snowflake.Lease{}, errors.Join(errs...)
				}
				continue
			}
			lease.Registry = m.name
			l.mu.Lock()
			l.owners[lease.Instance] = m
			l.mu.Unlock()
			return lease, nil
		}
	}
	err := errors.Join(errs...)
	if err == nil {
		err = errors.New("no store leases worker ids")
	}
	return snowflake.Lease{}, fmt.Errorf("acquire a worker id from the set's stores: %w", err)
}

// owner is the store that granted lease: as this process recorded it, or
// by the lease's Registry (a lease acquired through another instance).
func (l *Leases) owner(lease snowflake.Lease) (*member, error) {
	l.mu.Lock()
	m := l.owners[lease.Instance]
	l.mu.Unlock()
	if m == nil && lease.Registry != "" {
		for _, c := range l.s.members {
			if c.name == lease.Registry {
				m = c
			}
		}
	}
	if m == nil {
		return nil, fmt.Errorf("worker id %d was not leased here: %w", lease.WorkerID, snowflake.ErrLeaseLost)
	}
	return m, nil
}

// Renew renews the lease in the store that granted it. A store that
// answers that the lease went back in time is avoided by Acquire for ttl.
func (l *Leases) Renew(ctx context.Context, lease snowflake.Lease, lastTimestamp int64, ttl time.Duration) (snowflake.Lease, error) {
	m, err := l.owner(lease)
	if err != nil {
		return snowflake.Lease{}, err
	}
	renewed, err := m.st.Renew(ctx, lease, lastTimestamp, ttl)
	if errors.Is(err, snowflake.ErrLeaseRegressed) {
		l.mu.Lock()
		l.regressed[m] = time.Now().Add(ttl)
		l.mu.Unlock()
	}
	renewed.Registry = m.name
	return renewed, err
}

// Release releases the lease in the store that granted it.
func (l *Leases) Release(ctx context.Context, lease snowflake.Lease, lastTimestamp int64) error {
	m, err := l.owner(lease)
	if err != nil {
		return err
	}
	err = m.st.Release(ctx, lease, lastTimestamp)
	l.mu.Lock()
	delete(l.owners, lease.Instance)
	l.mu.Unlock()
	return err
}
