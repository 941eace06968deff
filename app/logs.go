package app

import (
	"errors"
	"sync"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
)

// logEvery is the least time between two log lines about the same kind of
// repeated failure; the lines in between are counted, not written.
const logEvery = 10 * time.Second

// limiter lets one event per key through every period and counts the rest.
type limiter struct {
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex // protects the maps
	last    map[string]time.Time
	dropped map[string]int
}

func newLimiter(every time.Duration) *limiter {
	return &limiter{every: every, now: time.Now, last: map[string]time.Time{}, dropped: map[string]int{}}
}

// allow reports whether an event of key may be logged now, and how many
// were held back since the last one that was.
func (l *limiter) allow(key string) (ok bool, dropped int) {
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

// forget ends key's run of failures, so the next one is logged at once.
func (l *limiter) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, key)
	delete(l.dropped, key)
}

// healthLogger writes one line when the store named name ("" for the one
// store) stops answering and one when it answers again.
func (a *Server) healthLogger(name string) func(store.Health) {
	log := a.log
	if name != "" {
		log = log.With("store", name)
	}
	return func(h store.Health) {
		if !h.Up {
			log.Warn("store not answering: ids are served from the buffers while they last",
				"err", h.Err)
			return
		}
		log.Info("store answering again", "down_for", h.DownFor.Round(time.Millisecond).String(),
			"failed_calls", h.Failed, "was", h.Err)
	}
}

// loadLimiters hold back repeated lines about the loads of one tag.
type loadLimiters struct {
	failed  *limiter // failures that may pass: one line per logEvery
	fixable *limiter // rows an operator must fix: one line until served again
}

func newLoadLimiters() loadLimiters {
	return loadLimiters{failed: newLimiter(logEvery), fixable: newLimiter(24 * time.Hour)}
}

// logLoad logs failed loads of segments. Tags that do not exist are not
// worth a line.
func (a *Server) logLoad(l loadLimiters, tag string, err error) {
	if err == nil {
		l.failed.forget(tag)
		l.fixable.forget(tag)
		return
	}
	if errors.Is(err, segment.ErrUnknownTag) {
		return
	}
	if errors.Is(err, segment.ErrMisconfigured) || errors.Is(err, segment.ErrExhausted) {
		// Until an operator acts every load fails the same way: one line,
		// and one more only after the tag was served again.
		if ok, _ := l.fixable.allow(tag); ok {
			a.log.Error("segment: the tag's row cannot be served until an operator fixes it", "tag", tag, "err", err)
		}
		return
	}
	if ok, dropped := l.failed.allow(tag); ok {
		a.log.Warn("segment load failed", "tag", tag, "err", err, "failures_not_logged", dropped)
	}
}

// logRegression reports a row found behind what this instance received.
func (a *Server) logRegression(r segment.Regression) {
	attrs := []any{"tag", r.Tag, "highest_max_id_received", r.High, "max_id_found", r.Found}
	if r.Err != nil {
		a.log.Error("segment: the database went back in time and the row could not be moved forward; no id is served from it",
			append(attrs, "err", r.Err)...)
		return
	}
	a.log.Error("segment: the database went back in time; the row was moved forward past every id this instance received",
		append(attrs, "new_max_id", r.MaxID, "failover_jump", a.cfg.FailoverJump)...)
}

// logStale reports a store of the set whose row was found behind the mark
// another store holds of it: restored from a backup, or failed over to a
// copy that missed writes. The range was taken past the mark plus the
// failover jump.
func (a *Server) logStale(storeName, tag string, mark int64) {
	a.log.Error("segment: the store went back in time; the range was taken past the highest max_id another store recorded of it",
		"store", storeName, "tag", tag, "mark", mark, "failover_jump", a.cfg.FailoverJump)
}

// leaseLogger logs the worker lease's troubles: renewal failures at most
// once every logEvery, losses and regressions always, and a new worker id.
func (a *Server) leaseLogger() func(snowflake.LeaseEvent) {
	l := newLimiter(logEvery)
	return func(ev snowflake.LeaseEvent) {
		switch {
		case ev.Err == nil && ev.Acquired:
			a.log.Info("snowflake worker id acquired again", "worker_id", ev.WorkerID)
			l.forget("renew")
		case ev.Err == nil:
			l.forget("renew")
		case errors.Is(ev.Err, snowflake.ErrLeaseRegressed):
			a.log.Error("snowflake: the database went back in time; stopped issuing, acquiring a worker id again",
				"worker_id", ev.WorkerID, "err", ev.Err)
		case errors.Is(ev.Err, snowflake.ErrLeaseLost) && !ev.Acquired:
			a.log.Error("snowflake: the worker lease is held by another; stopped issuing, acquiring a worker id again",
				"worker_id", ev.WorkerID, "err", ev.Err)
		default:
			if ok, dropped := l.allow("renew"); ok {
				a.log.Warn("snowflake worker lease not renewed", "worker_id", ev.WorkerID, "acquire", ev.Acquired,
					"err", ev.Err, "failures_not_logged", dropped)
			}
		}
	}
}
