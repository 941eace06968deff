package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// Limits of the lease calls.
const (
	// maxWorkers is the largest pool of worker ids: that of the widest
	// worker field a snowflake layout may have.
	maxWorkers = 1 << snowflake.MaxWorkerBits
	// MaxHolderLen is the width of leaf_worker_lease.holder.
	MaxHolderLen = 191
	// acquireRounds bounds how often Acquire re-reads the table after
	// losing every race it tried; each lost race is another holder's gain.
	acquireRounds = 64
)

// leaseRow is one row of leaf_worker_lease.
type leaseRow struct {
	WorkerID      int64  `db:"worker_id"`
	Holder        string `db:"holder"`
	Instance      string `db:"instance"`
	ExpiresMS     int64  `db:"expires_ms"`
	LastTimestamp int64  `db:"last_timestamp_ms"`
}

// Acquire leases a worker id in [0, maxWorkers) to holder for ttl, judged
// by the database clock, under a new random instance token. It takes an
// expired id, the holder's own first (a holder restarting after a release
// or an expiry gets its id back), then the longest expired, or else the
// lowest id never used. A live lease is never taken, not even one under the
// same holder name: that may be another process sharing the name. Every
// take is one conditional statement (an UPDATE that matches only an
// expired row, or an INSERT that a primary-key conflict refuses), so two
// acquisitions never get the same live id, however many call at once and
// from however many processes. When every id is held by a live lease it
// returns an error wrapping snowflake.ErrNoWorkerID.
func (s *Store) Acquire(ctx context.Context, holder string, maxWorkers int64, ttl time.Duration) (snowflake.Lease, error) {
	return s.AcquireIn(ctx, holder, 0, maxWorkers, ttl)
}

// AcquireIn is Acquire of a worker id in [lo, hi): the part of the
// worker-id space that this store leases from when it is one of several
// independent stores (see storeset).
func (s *Store) AcquireIn(ctx context.Context, holder string, lo, hi int64, ttl time.Duration) (snowflake.Lease, error) {
	l, err := s.acquire(ctx, holder, lo, hi, ttl)
	if err != nil {
		return snowflake.Lease{}, fmt.Errorf("acquire worker id for %q: %w", holder, err)
	}
	return l, nil
}

func (s *Store) acquire(ctx context.Context, holder string, lo, n int64, ttl time.Duration) (snowflake.Lease, error) {
	if err := s.takes(ctx); err != nil {
		return snowflake.Lease{}, err
	}
	if err := validateHolder(holder); err != nil {
		return snowflake.Lease{}, err
	}
	if n < 1 || n > maxWorkers || lo < 0 || lo >= n {
		return snowflake.Lease{}, fmt.Errorf("worker ids [%d, %d) are not within 0..%d", lo, n, maxWorkers)
	}
	ttlMS, err := ttlMillis(ttl)
	if err != nil {
		return snowflake.Lease{}, err
	}
	instance := rand.Text()
	for range acquireRounds {
		var (
			now, jumped int64
			rows        []leaseRow
		)
		err := s.callTaking(ctx, true, func(ctx context.Context) error {
			var err error
			if now, err = s.now(ctx); err != nil {
				return err
			}
			rows = rows[:0]
			if err := sqlx.SelectContext(ctx, s.db, &rows, selectLeases, lo, n); err != nil {
				return fmt.Errorf("read leases: %w", err)
			}
			jumped, err = s.lastJump(ctx)
			return err
		})
		if err == nil {
			if err = leaseHeld(now, jumped, ttlMS); err != nil && waitOut(ctx, jumped+ttlMS-now) {
				continue // a lease's length has passed since the jump: read again
			}
		}
		if err != nil {
			return snowflake.Lease{}, err
		}
		expires := now + ttlMS

		cands := candidates(rows, holder, lo, n, now)
		if len(cands) == 0 {
			return snowflake.Lease{}, fmt.Errorf("all %d worker ids are held by live leases: %w", n-lo, snowflake.ErrNoWorkerID)
		}
		for _, c := range cands {
			l, ok, err := s.take(ctx, c, holder, instance, now, expires)
			if err != nil {
				return snowflake.Lease{}, err
			}
			if ok {
				return l, nil
			}
		}
		// Every candidate went to someone else: read again.
	}
	return snowflake.Lease{}, fmt.Errorf("lost the race for a worker id %d times in a row", acquireRounds)
}

// candidate is a worker id that may be taken: expired (row is set) or
// never used.
type candidate struct {
	workerID int64
	expired  bool
}

// candidates lists the ids that holder may try to take: expired ones first
// (holder's own, then the longest expired), then the never used ones in
// increasing order.
func candidates(rows []leaseRow, holder string, lo, maxWorkers, now int64) []candidate {
	var expired []leaseRow
	used := make(map[int64]bool, len(rows))
	for _, r := range rows {
		used[r.WorkerID] = true
		if r.ExpiresMS <= now {
			expired = append(expired, r)
		}
	}
	slices.SortStableFunc(expired, func(a, b leaseRow) int {
		switch own := holder; {
		case a.Holder == own && b.Holder != own:
			return -1
		case a.Holder != own && b.Holder == own:
			return 1
		case a.ExpiresMS < b.ExpiresMS:
			return -1
		case a.ExpiresMS > b.ExpiresMS:
			return 1
		}
		return 0
	})
	cands := make([]candidate, 0, len(expired)+int(maxWorkers-lo)-len(rows))
	for _, r := range expired {
		cands = append(cands, candidate{workerID: r.WorkerID, expired: true})
	}
	for id := lo; id < maxWorkers; id++ {
		if !used[id] {
			cands = append(cands, candidate{workerID: id})
		}
	}
	return cands
}

// take tries to lease one candidate id; ok is false when another holder
// got it first. Whether it got the id, and the last timestamp the id's
// earlier holders recorded, are the answer of the one statement that took
// it: never a later read, which a multi-primary cluster may answer from a
// transaction it rolled back. A take whose answer was lost with its
// connection is retried and then finds the id taken: the id stays unused
// until its lease expires, and no two acquisitions ever hold it.
func (s *Store) take(ctx context.Context, c candidate, holder, instance string, now, expires int64) (snowflake.Lease, bool, error) {
	var (
		last int64
		ok   bool
	)
	err := s.call(ctx, true, func(ctx context.Context) error {
		var err error
		if c.expired {
			last, ok, err = s.updateReturning(ctx, s.sql.takeExpiredLease, holder, instance, expires, c.workerID, now)
			return err
		}
		_, err = s.db.ExecContext(ctx, insertLease, c.workerID, holder, instance, expires)
		switch {
		case err == nil:
			last, ok = 0, true
		case isDuplicateKey(err):
			ok, err = false, nil
		}
		return err
	})
	if err != nil {
		return snowflake.Lease{}, false, fmt.Errorf("take worker id %d: %w", c.workerID, err)
	}
	if !ok {
		return snowflake.Lease{}, false, nil
	}
	return snowflake.Lease{
		WorkerID:      c.workerID,
		Holder:        holder,
		Instance:      instance,
		LastTimestamp: last,
		Expires:       time.UnixMilli(expires).UTC(),
	}, true, nil
}

// Renew extends l by ttl from the database's now and records lastTimestamp
// unless a larger one is stored. The lease may have expired, as long as no
// other acquisition took the id. The error wraps snowflake.ErrLeaseLost when
// the id is no longer l's, and also snowflake.ErrLeaseRegressed when the
// row is l's but records a last timestamp below l.LastTimestamp, the one
// the last renewal stored: the database went back in time. The returned
// LastTimestamp is the one stored by this renewal's own statement.
func (s *Store) Renew(ctx context.Context, l snowflake.Lease, lastTimestamp int64, ttl time.Duration) (snowflake.Lease, error) {
	nl, err := s.renew(ctx, l, lastTimestamp, ttl)
	if err != nil {
		return snowflake.Lease{}, fmt.Errorf("renew worker id %d for %q: %w", l.WorkerID, l.Holder, err)
	}
	return nl, nil
}

func (s *Store) renew(ctx context.Context, l snowflake.Lease, last int64, ttl time.Duration) (snowflake.Lease, error) {
	if err := s.takes(ctx); err != nil {
		return snowflake.Lease{}, err
	}
	ttlMS, err := ttlMillis(ttl)
	if err != nil {
		return snowflake.Lease{}, err
	}
	var (
		stored, expires int64
		ok              bool
	)
	// Safe to retry: a second run extends the same row again.
	err = s.callTaking(ctx, true, func(ctx context.Context) error {
		now, err := s.now(ctx)
		if err != nil {
			return err
		}
		expires = now + ttlMS
		stored, ok, err = s.updateReturning(ctx, s.sql.renewLease,
			expires, last, last, l.WorkerID, l.Holder, l.Instance, l.LastTimestamp)
		return err
	})
	if err != nil {
		return snowflake.Lease{}, fmt.Errorf("update worker id %d: %w", l.WorkerID, err)
	}
	if !ok {
		return snowflake.Lease{}, s.whyNotRenewed(ctx, l)
	}
	l.LastTimestamp, l.Expires = stored, time.UnixMilli(expires).UTC()
	return l, nil
}

// whyNotRenewed explains a renewal that matched no row: the lease was lost,
// or the row went back in time. Either way the holder stops issuing.
func (s *Store) whyNotRenewed(ctx context.Context, l snowflake.Lease) error {
	var r leaseRow
	err := s.call(ctx, true, func(ctx context.Context) error {
		return sqlx.GetContext(ctx, s.db, &r, selectLease, l.WorkerID)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %w: the row of worker id %d is gone", snowflake.ErrLeaseLost, snowflake.ErrLeaseRegressed, l.WorkerID)
	case err != nil:
		return fmt.Errorf("%w: %w", snowflake.ErrLeaseLost, err)
	case (r.Holder != l.Holder || r.Instance != l.Instance) && r.ExpiresMS < l.Expires.UnixMilli():
		// A lawful takeover happens only after l expired and writes a
		// later expiry: this row predates l's last renewal.
		return fmt.Errorf("%w: %w: worker id %d shows %q expiring at %d, before the %d granted to this holder",
			snowflake.ErrLeaseLost, snowflake.ErrLeaseRegressed, l.WorkerID, r.Holder, r.ExpiresMS, l.Expires.UnixMilli())
	case r.Holder != l.Holder || r.Instance != l.Instance:
		return fmt.Errorf("%w: worker id %d is held by %q", snowflake.ErrLeaseLost, l.WorkerID, r.Holder)
	case r.LastTimestamp < l.LastTimestamp:
		return fmt.Errorf("%w: %w: worker id %d records last timestamp %d, below the %d this holder recorded",
			snowflake.ErrLeaseLost, snowflake.ErrLeaseRegressed, l.WorkerID, r.LastTimestamp, l.LastTimestamp)
	}
	return fmt.Errorf("%w: worker id %d was not renewed", snowflake.ErrLeaseLost, l.WorkerID)
}

// Release records lastTimestamp as the last one used, even below the bound
// that renewals recorded, and expires the lease at once, so that the id is
// free for another holder. It returns an error wrapping
// snowflake.ErrLeaseLost when the id is no longer l's.
func (s *Store) Release(ctx context.Context, l snowflake.Lease, lastTimestamp int64) error {
	var n int64
	// Safe to retry: the row stays l's, and a second run matches it again.
	err := s.call(ctx, true, func(ctx context.Context) error {
		now, err := s.now(ctx)
		if err != nil {
			return err
		}
		res, err := s.db.ExecContext(ctx, releaseLease, now, lastTimestamp, l.WorkerID, l.Holder, l.Instance)
		if err != nil {
			return err
		}
		n, err = rowsAffected(res)
		return err
	})
	if err == nil && n == 0 {
		err = snowflake.ErrLeaseLost
	}
	if err != nil {
		return fmt.Errorf("release worker id %d for %q: %w", l.WorkerID, l.Holder, err)
	}
	return nil
}

func validateHolder(holder string) error {
	if holder == "" {
		return errors.New("empty holder")
	}
	if n := utf8.RuneCountInString(holder); n > MaxHolderLen || !utf8.ValidString(holder) {
		return fmt.Errorf("holder of %d characters is not valid UTF-8 of at most %d", n, MaxHolderLen)
	}
	return nil
}

func ttlMillis(ttl time.Duration) (int64, error) {
	if ttl < time.Millisecond {
		return 0, fmt.Errorf("lease ttl %v is below 1ms", ttl)
	}
	return ttl.Milliseconds(), nil
}

// ErrAfterRestart is wrapped, beside segment.ErrStoreUnavailable, by an
// acquisition of a worker id refused because the database started again,
// while it could forget commits, less than a lease's length ago.
var ErrAfterRestart = errors.New("the database started again and may have forgotten worker leases")

// lastJump is when the rows were last moved forward after a restart
// (restart.go), by the database clock in milliseconds; 0 never, or while
// the check is off.
func (s *Store) lastJump(ctx context.Context) (int64, error) {
	if s.starts.jump == 0 {
		return 0, nil
	}
	var jumped sql.NullInt64
	if err := s.db.GetContext(ctx, &jumped, `SELECT MAX(jumped_ms) FROM leaf_db_start`); err != nil {
		return 0, fmt.Errorf("read leaf_db_start: %w", err)
	}
	return jumped.Int64, nil
}

// waitOut waits ms milliseconds, unless ctx ends before: it reports
// whether it waited them.
func waitOut(ctx context.Context, ms int64) bool {
	d := time.Duration(ms) * time.Millisecond
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// leaseHeld refuses to lease a worker id, after a restart of a database
// that could forget commits, until a lease's length has passed since the
// rows were moved forward (jumped): the database may have forgotten that a
// worker id was taken, and the instance still issuing with it finds out at
// its next renewal, within its lease, and stops. Times are milliseconds of
// the database clock.
func leaseHeld(now, jumped, ttlMS int64) error {
	if until := jumped + ttlMS; jumped > 0 && now < until {
		return fmt.Errorf("%w: %w: no worker id is leased until %s, a lease's length after its rows were moved forward",
			segment.ErrStoreUnavailable, ErrAfterRestart, time.UnixMilli(until).UTC().Format(time.RFC3339Nano))
	}
	return nil
}
