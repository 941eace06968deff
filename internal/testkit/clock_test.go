package testkit_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestClockShortSleepsMoveIt(t *testing.T) {
	c := testkit.NewClock(t0, 10*time.Millisecond)
	ctx := context.Background()
	for _, d := range []time.Duration{time.Millisecond, 10 * time.Millisecond, -time.Second} {
		if err := c.Sleep(ctx, d); err != nil {
			t.Fatalf("Sleep(%v): %v", d, err)
		}
	}
	if want := t0.Add(11 * time.Millisecond); !c.Now().Equal(want) {
		t.Errorf("Now() = %s, want %s: a negative sleep moves nothing", c.Now(), want)
	}
	c.Add(-time.Hour)
	if want := t0.Add(11*time.Millisecond - time.Hour); !c.Now().Equal(want) {
		t.Errorf("after Add(-1h): Now() = %s, want %s", c.Now(), want)
	}
	if got, want := c.Sleeps(), []time.Duration{time.Millisecond, 10 * time.Millisecond, -time.Second}; !slices.Equal(got, want) {
		t.Errorf("Sleeps() = %v, want %v", got, want)
	}
}

func TestClockLongSleepWaitsForAdd(t *testing.T) {
	c := testkit.NewClock(t0, 0)
	done := make(chan error, 1)
	go func() { done <- c.Sleep(context.Background(), time.Second) }()
	c.WaitSleepers(t, 1)

	c.Add(999 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Sleep(1s) returned %v after the clock moved 999ms", err)
	default:
	}
	if !c.Now().Equal(t0.Add(999 * time.Millisecond)) {
		t.Errorf("Now() = %s: a blocked sleep moved the clock", c.Now())
	}
	c.Add(time.Millisecond)
	if err := <-done; err != nil {
		t.Fatalf("Sleep(1s) after the clock moved 1s: %v", err)
	}
	c.WaitSleepers(t, 0)
}

func TestClockSleepCancelled(t *testing.T) {
	c := testkit.NewClock(t0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Sleep(ctx, time.Hour) }()
	c.WaitSleepers(t, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep after cancel = %v, want %v", err, context.Canceled)
	}
	c.WaitSleepers(t, 0)
	// A short sleep on a done context still moves the clock, and says so.
	c2 := testkit.NewClock(t0, time.Second)
	if err := c2.Sleep(ctx, time.Millisecond); !errors.Is(err, context.Canceled) || !c2.Now().Equal(t0.Add(time.Millisecond)) {
		t.Errorf("short Sleep on a cancelled context = %v at %s, want %v at %s", err, c2.Now(), context.Canceled, t0.Add(time.Millisecond))
	}
}

// Step wakes a loop and returns when it sleeps again.
func TestClockStep(t *testing.T) {
	c := testkit.NewClock(t0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	woken := make(chan time.Time, 10)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for c.Sleep(ctx, time.Minute) == nil {
			woken <- c.Now()
		}
	}()
	c.WaitSleepers(t, 1)
	for i := 1; i <= 3; i++ {
		c.Step(t, time.Minute)
		if got, want := <-woken, t0.Add(time.Duration(i)*time.Minute); !got.Equal(want) {
			t.Fatalf("wake %d at %s, want %s", i, got, want)
		}
	}
	cancel()
	<-stopped
}
