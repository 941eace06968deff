package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/leafid/leaf/segment"
)

// attempts is how often one call is tried: a conflict between cluster
// nodes, a lock wait or a dead pooled connection is retried at once
// (after a short random pause for conflicts), a few times, before it
// counts as failed.
const attempts = 4

// conflictPause is the largest pause before retrying a conflict.
const conflictPause = 20 * time.Millisecond

// call runs fn, one or more statements, under the store's deadline and
// retries it when a retry can help: always after a conflict, and after a
// broken connection when safe is true (fn may then run twice; it must do
// no harm, such as a range taken and never used). It fails at once while
// the database is known to be down, and takes it down when the database
// does not answer within the deadline or keeps breaking connections.
//
// Errors that say the database is unavailable wrap
// segment.ErrStoreUnavailable; the caller's own cancellation is returned as
// it is; every other error is the statement's answer.
func (s *Store) call(ctx context.Context, safe bool, fn func(ctx context.Context) error) error {
	gen, err := s.health.admit()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	stop := context.AfterFunc(gen, cancel) // the store went down meanwhile
	defer stop()

	var k kind
	for try := 1; ; try++ {
		err = fn(cctx)
		if err == nil {
			s.health.answered()
			return nil
		}
		k = classify(err)
		if cctx.Err() != nil || try == attempts || k == permanent || (k == unreachable && !safe) {
			break
		}
		if k == conflict {
			pause := time.Duration(rand.Int64N(int64(conflictPause))) + time.Millisecond
			select {
			case <-cctx.Done():
			case <-time.After(pause):
			}
		}
	}

	switch {
	case ctx.Err() != nil: // the caller gave up: says nothing of the database
		return err
	case gen.Err() != nil:
		return fmt.Errorf("%w: the database stopped answering during the call: %w", segment.ErrStoreUnavailable, err)
	case cctx.Err() != nil:
		// One slow statement (a row locked by someone else, say) is not an
		// outage: the store goes down only when a probe cannot get an
		// answer either. Until the probe decides, nothing waits on the
		// database.
		s.confirm(fmt.Errorf("no answer within %v: %w", s.timeout, err))
		return fmt.Errorf("%w: no answer within %v: %w", segment.ErrStoreUnavailable, s.timeout, err)
	}
	switch k {
	case unreachable:
		if safe { // retried, and it still breaks
			s.health.down(err)
		}
		return fmt.Errorf("%w: %w", segment.ErrStoreUnavailable, err)
	case conflict:
		s.health.answered()
		return fmt.Errorf("%w: conflict persisted over %d attempts: %w", segment.ErrStoreUnavailable, attempts, err)
	}
	s.health.answered()
	return notMigratedError(err)
}
