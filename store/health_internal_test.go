package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
)

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
