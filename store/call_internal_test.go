package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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

var (
	errDeadlock = &mysql.MySQLError{Number: mysqlDeadlock, Message: "Deadlock found when trying to get lock"}
	errLockWait = &mysql.MySQLError{Number: mysqlLockTimeout, Message: "Lock wait timeout exceeded"}
	errNotReady = &mysql.MySQLError{Number: mysqlUnknownCom, Message: "WSREP has not yet prepared node for application use"}
	errDupKey   = &mysql.MySQLError{Number: mysqlDuplicateKey, Message: "Duplicate entry"}
)

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

func TestCallDeadlineTakesTheStoreDown(t *testing.T) {
	var (
		mu      sync.Mutex
		changes []Health
	)
	s := bareStore(50*time.Millisecond, func(h Health) {
		mu.Lock()
		changes = append(changes, h)
		mu.Unlock()
	})
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

	// Two calls hang on a database that does not answer; the first to
	// reach the deadline takes the store down and the other one with it.
	errs := make(chan error, 2)
	go func() { errs <- s.call(context.Background(), true, hang) }()
	go func() {
		errs <- s.call(context.Background(), true, func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(10 * time.Millisecond) // let the other call see its deadline first
			return ctx.Err()
		})
	}()
	for range 2 {
		if err := <-errs; !errors.Is(err, segment.ErrStoreUnavailable) {
			t.Fatalf("call on a silent database = %v, want ErrStoreUnavailable", err)
		}
	}
	s.settle()
	if s.Health().Up {
		t.Fatal("store still up after a call timed out")
	}

	// While down, calls fail at once without running.
	ran := false
	start := time.Now()
	err := s.call(context.Background(), true, func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, segment.ErrStoreUnavailable) || ran {
		t.Fatalf("call while down = %v (ran %v), want ErrStoreUnavailable without running", err, ran)
	}
	if took := time.Since(start); took > 10*time.Millisecond {
		t.Fatalf("call while down took %v", took)
	}

	s.health.answered() // what a successful probe does
	if err := s.call(context.Background(), true, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("call after recovery: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 2 || changes[0].Up || !changes[1].Up || changes[1].Failed < 2 || changes[1].DownFor <= 0 {
		t.Fatalf("health changes %+v: want down, then up counting the failed calls and the time down", changes)
	}
}

func TestASlowStatementIsNotAnOutage(t *testing.T) {
	s := bareStore(50*time.Millisecond, nil)
	s.probeFunc = func(context.Context) error { return nil } // the database answers others
	err := s.call(context.Background(), true, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	if !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("call past its deadline = %v, want ErrStoreUnavailable", err)
	}
	s.settle()
	if !s.Health().Up {
		t.Fatal("one slow statement took the store down while the database answers")
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

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want kind
	}{
		{errDeadlock, conflict},
		{fmt.Errorf("wrapped: %w", errLockWait), conflict},
		{errNotReady, unreachable},
		{mysql.ErrInvalidConn, unreachable},
		{&mysql.MySQLError{Number: mysqlReadOnly}, unreachable},
		{&mysql.MySQLError{Number: mysqlReadOnlyTx, Message: "Cannot execute statement in a READ ONLY transaction."}, unreachable},
		{&mysql.MySQLError{Number: mysqlOffline, Message: "The server is currently in offline mode"}, unreachable},
		{&mysql.MySQLError{Number: mysqlGRRolledBack, Message: "Plugin instructed the server to rollback the current transaction."}, conflict},
		{&mysql.MySQLError{Number: mysqlReadOnlyMode, Message: "Running in read-only mode"}, unreachable},
		{&mysql.MySQLError{Number: mysqlTooManyConns, Message: "Too many connections"}, unreachable},
		{&mysql.MySQLError{Number: mysqlQueryShutdown, Message: "Server shutdown in progress"}, unreachable},
		{&mysql.MySQLError{Number: mysqlConnKilled, Message: "Connection was killed"}, unreachable},
		{&mysql.MySQLError{Number: mysqlServerGone}, unreachable},
		{&mysql.MySQLError{Number: mysqlServerLost}, unreachable},
		{&mysql.MySQLError{Number: 1317, Message: "Query execution was interrupted"}, permanent},
		{&mysql.MySQLError{Number: 3024, Message: "Query execution was interrupted, maximum statement execution time exceeded"}, permanent},
		{&mysql.MySQLError{Number: 1969, Message: "Query execution was interrupted (max_statement_time exceeded)"}, permanent},
		{errors.Join(fmt.Errorf("node a: %w: read_only is ON", errNotWritable)), unreachable},
		{errDupKey, permanent},
		{segment.ErrUnknownTag, permanent},
	}
	for _, tc := range tests {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestATimedOutCallStopsTheOthersAtOnce(t *testing.T) {
	s := bareStore(200*time.Millisecond, nil)
	release := make(chan struct{})
	s.probeFunc = func(context.Context) error { <-release; return errNoAnswer } // a black hole
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

	first := make(chan error, 1)
	go func() { first <- s.call(context.Background(), true, hang) }()
	time.Sleep(100 * time.Millisecond) // the second call's deadline comes 100 ms after the first's
	second := s.call(context.Background(), true, hang)
	if err := <-first; !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("first call = %v, want ErrStoreUnavailable", err)
	}
	// Ended by the suspicion the first call raised, while the probe still
	// waits: not at its own deadline.
	if !errors.Is(second, segment.ErrStoreUnavailable) || !strings.Contains(second.Error(), "stopped answering during the call") {
		t.Fatalf("second call = %v, want it cancelled when the first ran out of time", second)
	}
	if err := s.call(context.Background(), true, func(context.Context) error { return nil }); !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("call while the probe decides = %v, want refused", err)
	}
	if !s.Health().Up {
		t.Fatal("down before the probe decided")
	}
	close(release)
	s.settle()
	if s.Health().Up {
		t.Fatal("still up after the probe got no answer")
	}
}
