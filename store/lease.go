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

	"github.com/leafid/leaf/snowflake"
)

// Limits of the lease calls.
const (
	// MaxWorkers is the number of worker ids of snowflake's 10-bit field.
	MaxWorkers = 1024
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

func (r leaseRow) lease() snowflake.Lease {
	return snowflake.Lease{
		WorkerID:      r.WorkerID,
		Holder:        r.Holder,
		Instance:      r.Instance,
		LastTimestamp: r.LastTimestamp,
		Expires:       time.UnixMilli(r.ExpiresMS).UTC(),
	}
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
	l, err := s.acquire(ctx, holder, maxWorkers, ttl)
	if err != nil {
		return snowflake.Lease{}, fmt.Errorf("acquire worker id for %q: %w", holder, err)
	}
	return l, nil
}

func (s *Store) acquire(ctx context.Context, holder string, maxWorkers int64, ttl time.Duration) (snowflake.Lease, error) {
	if err := validateHolder(holder); err != nil {
		return snowflake.Lease{}, err
	}
	if maxWorkers < 1 || maxWorkers > MaxWorkers {
		return snowflake.Lease{}, fmt.Errorf("max workers %d is outside 1..%d", maxWorkers, MaxWorkers)
	}
	ttlMS, err := ttlMillis(ttl)
	if err != nil {
		return snowflake.Lease{}, err
	}
	instance := rand.Text()
	for range acquireRounds {
		now, err := s.now(ctx, s.db)
		if err != nil {
			return snowflake.Lease{}, err
		}
		var rows []leaseRow
		if err := sqlx.SelectContext(ctx, s.db, &rows, selectLeases, maxWorkers); err != nil {
			return snowflake.Lease{}, fmt.Errorf("read leases: %w", err)
		}
		expires := now + ttlMS

		cands := candidates(rows, holder, maxWorkers, now)
		if len(cands) == 0 {
			return snowflake.Lease{}, fmt.Errorf("all %d worker ids are held by live leases: %w", maxWorkers, snowflake.ErrNoWorkerID)
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
func candidates(rows []leaseRow, holder string, maxWorkers, now int64) []candidate {
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
	cands := make([]candidate, 0, len(expired)+int(maxWorkers)-len(rows))
	for _, r := range expired {
		cands = append(cands, candidate{workerID: r.WorkerID, expired: true})
	}
	for id := range maxWorkers {
		if !used[id] {
			cands = append(cands, candidate{workerID: id})
		}
	}
	return cands
}

// take tries to lease one candidate id; ok is false when another holder
// got it first.
func (s *Store) take(ctx context.Context, c candidate, holder, instance string, now, expires int64) (snowflake.Lease, bool, error) {
	if c.expired {
		res, err := s.db.ExecContext(ctx, takeExpiredLease, holder, instance, expires, c.workerID, now)
		if err != nil {
			if isContention(err) {
				return snowflake.Lease{}, false, nil
			}
			return snowflake.Lease{}, false, fmt.Errorf("take expired worker id %d: %w", c.workerID, err)
		}
		n, err := rowsAffected(res)
		if err != nil || n == 0 {
			return snowflake.Lease{}, false, err
		}
	} else {
		if _, err := s.db.ExecContext(ctx, insertLease, c.workerID, holder, instance, expires); err != nil {
			if isDuplicateKey(err) || isContention(err) {
				return snowflake.Lease{}, false, nil
			}
			return snowflake.Lease{}, false, fmt.Errorf("take worker id %d: %w", c.workerID, err)
		}
	}
	// The row is ours until it expires; read what the last holder left.
	l, err := s.readLease(ctx, c.workerID, holder, instance)
	if errors.Is(err, snowflake.ErrLeaseLost) {
		return snowflake.Lease{}, false, nil
	}
	return l, err == nil, err
}

// Renew extends l by ttl from the database's now and records lastTimestamp
// unless a larger one is stored. The lease may have expired, as long as no
// other acquisition took the id; otherwise the error wraps
// snowflake.ErrLeaseLost. The returned LastTimestamp is the stored one.
func (s *Store) Renew(ctx context.Context, l snowflake.Lease, lastTimestamp int64, ttl time.Duration) (snowflake.Lease, error) {
	nl, err := s.renewFor(ctx, l, lastTimestamp, ttl)
	if err != nil {
		return snowflake.Lease{}, fmt.Errorf("renew worker id %d for %q: %w", l.WorkerID, l.Holder, err)
	}
	return nl, nil
}

func (s *Store) renewFor(ctx context.Context, l snowflake.Lease, lastTimestamp int64, ttl time.Duration) (snowflake.Lease, error) {
	ttlMS, err := ttlMillis(ttl)
	if err != nil {
		return snowflake.Lease{}, err
	}
	now, err := s.now(ctx, s.db)
	if err != nil {
		return snowflake.Lease{}, err
	}
	nl, ok, err := s.renew(ctx, l, lastTimestamp, now+ttlMS)
	if err != nil {
		return snowflake.Lease{}, err
	}
	if !ok {
		return snowflake.Lease{}, snowflake.ErrLeaseLost
	}
	return nl, nil
}

// Release records lastTimestamp as the last one used, even below the bound
// that renewals recorded, and expires the lease at once, so that the id is
// free for another holder. It returns an error wrapping
// snowflake.ErrLeaseLost when the id is no longer l's.
func (s *Store) Release(ctx context.Context, l snowflake.Lease, lastTimestamp int64) error {
	now, err := s.now(ctx, s.db)
	if err == nil {
		var res sql.Result
		res, err = s.db.ExecContext(ctx, releaseLease, now, lastTimestamp, l.WorkerID, l.Holder, l.Instance)
		var n int64
		if err == nil {
			n, err = rowsAffected(res)
		}
		if err == nil && n == 0 {
			err = snowflake.ErrLeaseLost
		}
	}
	if err != nil {
		return fmt.Errorf("release worker id %d for %q: %w", l.WorkerID, l.Holder, err)
	}
	return nil
}

// renew sets the expiry of l's row and raises its last timestamp to at
// least last; ok is false when the row is no longer l's.
func (s *Store) renew(ctx context.Context, l snowflake.Lease, last, expires int64) (snowflake.Lease, bool, error) {
	res, err := s.db.ExecContext(ctx, renewLease, expires, last, last, l.WorkerID, l.Holder, l.Instance)
	if err != nil {
		return snowflake.Lease{}, false, fmt.Errorf("update worker id %d: %w", l.WorkerID, err)
	}
	n, err := rowsAffected(res)
	if err != nil || n == 0 {
		return snowflake.Lease{}, false, err
	}
	l, err = s.readLease(ctx, l.WorkerID, l.Holder, l.Instance)
	if errors.Is(err, snowflake.ErrLeaseLost) {
		return snowflake.Lease{}, false, nil
	}
	return l, err == nil, err
}

// readLease reads the row of workerID if holder's acquisition instance has
// it, or returns snowflake.ErrLeaseLost.
func (s *Store) readLease(ctx context.Context, workerID int64, holder, instance string) (snowflake.Lease, error) {
	var r leaseRow
	if err := sqlx.GetContext(ctx, s.db, &r, selectLease, workerID, holder, instance); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return snowflake.Lease{}, snowflake.ErrLeaseLost
		}
		return snowflake.Lease{}, fmt.Errorf("read worker id %d: %w", workerID, err)
	}
	return r.lease(), nil
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
