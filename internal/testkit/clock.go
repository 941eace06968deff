package testkit

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Clock is a clock that only the test moves, for code that takes its time
// from a now function and waits through a sleep function. A Sleep of at
// most auto moves the clock forward by itself and returns at once (a wait
// for the next millisecond, say); a longer one (a heartbeat's period)
// blocks until the test moves the clock past its end with Add.
type Clock struct {
	mu       sync.Mutex // protects the fields below
	now      time.Time
	auto     time.Duration
	sleeps   []time.Duration // every Sleep asked for
	sleepers []*sleeper      // blocked in Sleep
	changed  chan struct{}   // closed and replaced when sleepers changes
}

type sleeper struct {
	until time.Time
	wake  chan struct{}
}

// NewClock returns a Clock that reads at and moves by itself for sleeps
// of at most auto.
func NewClock(at time.Time, auto time.Duration) *Clock {
	return &Clock{now: at, auto: auto, changed: make(chan struct{})}
}

// Now is the clock's reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock by d, backwards when d < 0, and wakes the sleepers
// whose end has come.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addLocked(d)
}

func (c *Clock) addLocked(d time.Duration) {
	c.now = c.now.Add(d)
	kept := c.sleepers[:0]
	for _, s := range c.sleepers {
		if s.until.After(c.now) {
			kept = append(kept, s)
		} else {
			close(s.wake)
		}
	}
	if len(kept) != len(c.sleepers) {
		clear(c.sleepers[len(kept):])
		c.sleepers = kept
		c.notifyLocked()
	}
}

func (c *Clock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Sleep waits until the clock has moved d on, or until ctx is done. A d of
// at most auto moves the clock itself; a longer one waits for Add.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	if d <= c.auto {
		c.addLocked(max(d, 0))
		c.mu.Unlock()
		return ctx.Err()
	}
	s := &sleeper{until: c.now.Add(d), wake: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	c.notifyLocked()
	c.mu.Unlock()
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		for i, o := range c.sleepers {
			if o == s {
				c.sleepers = append(c.sleepers[:i], c.sleepers[i+1:]...)
				c.notifyLocked()
				break
			}
		}
		c.mu.Unlock()
		return ctx.Err()
	}
}

// Sleeps returns the durations asked of Sleep so far.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// WaitSleepers waits until exactly n goroutines are blocked in Sleep. It
// waits on a channel, not on time; the timeout only ends a broken test.
func (c *Clock) WaitSleepers(tb testing.TB, n int) {
	tb.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		c.mu.Lock()
		got, changed := len(c.sleepers), c.changed
		c.mu.Unlock()
		if got == n {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			tb.Fatalf("%d goroutines blocked in Sleep, want %d", got, n)
		}
	}
}

// Step moves the clock by d and waits until one goroutine is blocked in
// Sleep again: for code with a single background loop (a heartbeat), it
// returns once the loop has done whatever woke it and is asleep again.
func (c *Clock) Step(tb testing.TB, d time.Duration) {
	tb.Helper()
	c.Add(d)
	c.WaitSleepers(tb, 1)
}
