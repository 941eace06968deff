package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/segment"
)

// bareStore has the call machinery of a Store and no database.
// Its probe fails, as it would on a database that does not answer.
func bareStore(timeout time.Duration, onHealth func(Health)) *Store {
	s := &Store{timeout: timeout, health: newHealth(onHealth),
		probeFunc: func(context.Context) error { return errNoAnswer }}
	s.closing, s.stop = context.WithCancel(context.Background())
	return s
}

// settle waits for the background confirmations of s.
func (s *Store) settle() { s.bg.Wait() }

var errNoAnswer = errors.New("no answer")

// script is a call body that fails with errs in turn, then succeeds.
type script struct {
	errs  []error
	calls int
}

func (s *script) fn(context.Context) error {
	s.calls++
	if s.calls <= len(s.errs) {
		return s.errs[s.calls-1]
	}
	return nil
}

func TestCallRetries(t *testing.T) {
	tests := []struct {
		name      string
		safe      bool
		errs      []error
		wantCalls int
		wantErr   error // nil: success
		wantDown  bool
	}{
		{"conflicts are retried", false, []error{errDeadlock, errLockWait, errDeadlock}, 4, nil, false},
		{"a conflict that persists is unavailable, not down", true, []error{errDeadlock, errDeadlock, errDeadlock, errDeadlock}, attempts, segment.ErrStoreUnavailable, false},
		{"a dead connection is retried when safe", true, []error{mysql.ErrInvalidConn, mysql.ErrInvalidConn}, 3, nil, false},
		{"a dead connection is not retried when unsafe", false, []error{mysql.ErrInvalidConn}, 1, segment.ErrStoreUnavailable, false},
		{"a node that keeps refusing takes the store down", true, []error{errNotReady, errNotReady, errNotReady, errNotReady}, attempts, segment.ErrStoreUnavailable, true},
		{"a statement's own answer is not retried", true, []error{errDupKey}, 1, errDupKey, false},
		{"a domain error is not retried", true, []error{segment.ErrUnknownTag}, 1, segment.ErrUnknownTag, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := bareStore(time.Second, nil)
			sc := &script{errs: tc.errs}
			err := s.call(context.Background(), tc.safe, sc.fn)
			if sc.calls != tc.wantCalls {
				t.Errorf("%d calls, want %d", sc.calls, tc.wantCalls)
			}
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("call = %v, want %v", err, tc.wantErr)
			}
			if up := s.Health().Up; up == tc.wantDown {
				t.Errorf("Health().Up = %v after the call, want %v", up, !tc.wantDown)
			}
		})
	}
}

func TestCallerCancellationSaysNothingOfTheDatabase(t *testing.T) {
	s := bareStore(time.Second, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.call(ctx, true, func(ctx context.Context) error { return ctx.Err() })
	if !errors.Is(err, context.Canceled) || errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("call with the caller's context cancelled = %v, want context.Canceled alone", err)
	}
	if !s.Health().Up {
		t.Fatal("a caller's cancellation took the store down")
	}
}
