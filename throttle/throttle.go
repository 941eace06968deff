// Package throttle holds back repeated log lines: one line per key and
// period, and a count of those held back.
package throttle

import (
	"sync"
	"time"
)

// Every is the least time between two log lines about the same kind of
// repeated failure; the lines in between are counted, not written.
const Every = 10 * time.Second

// Limiter lets one event per key through every period and counts the rest.
type Limiter struct {
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex // protects the maps
	last    map[string]time.Time
	dropped map[string]int
}

// New is a limiter that lets one event per key through every period.
func New(every time.Duration) *Limiter {
	return &Limiter{every: every, now: time.Now, last: map[string]time.Time{}, dropped: map[string]int{}}
}

// Allow reports whether an event of key may be logged now, and how many
// were held back since the last one that was.
func (l *Limiter) Allow(key string) (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if last, seen := l.last[key]; seen && now.Sub(last) < l.every {
		l.dropped[key]++
		return false, 0
	}
	dropped = l.dropped[key]
	l.last[key] = now
	delete(l.dropped, key)
	return true, dropped
}

// Forget ends key's run of failures, so the next one is logged at once.
func (l *Limiter) Forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, key)
	delete(l.dropped, key)
}
