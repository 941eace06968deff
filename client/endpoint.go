package client

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// endpoint is one server and its health.
type endpoint struct {
	base string

	mu       sync.Mutex // protects the fields below
	failures int        // in a row
	until    time.Time  // left out until then
	last     error      // the last failure
}

// usable reports whether the endpoint is not backing off at now.
func (e *endpoint) usable(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !now.Before(e.until)
}

// answered records an answer: the endpoint works.
func (e *endpoint) answered() {
	e.mu.Lock()
	e.failures, e.until = 0, time.Time{}
	e.mu.Unlock()
}

// failed records a failure and leaves the endpoint out for a back-off
// that doubles with each failure in a row. The jitter (half to all of the
// back-off) keeps clients that saw the same outage from coming back in
// step.
func (e *endpoint) failed(err *Error, now time.Time, lo, hi time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failures++
	d := hi
	if shift := e.failures - 1; shift < 32 && lo<<shift < hi {
		d = lo << shift
	}
	d = d/2 + rand.N(d/2+1)
	if err.RetryAfter > d {
		d = min(err.RetryAfter, hi)
	}
	e.until, e.last = now.Add(d), err
}

// lastError is the endpoint's last failure, for an unavailableError.
func (e *endpoint) lastError(now time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil {
		return nil
	}
	if wait := e.until.Sub(now); wait > 0 {
		return fmt.Errorf("%w (left out for %v)", e.last, wait.Round(time.Millisecond))
	}
	return e.last
}

// retryIn is how long until some endpoint's back-off ends: when a failed
// background load should try again. At least BackoffMin.
func (c *Client) retryIn() time.Duration {
	now := c.now()
	d := c.cfg.BackoffMax
	for _, e := range c.eps {
		e.mu.Lock()
		d = min(d, e.until.Sub(now))
		e.mu.Unlock()
	}
	return max(d, c.cfg.BackoffMin)
}
