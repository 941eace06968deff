package app

import (
	"errors"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/throttle"
)

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
	failed  *throttle.Limiter // failures that may pass: one line per throttle.Every
	fixable *throttle.Limiter // rows an operator must fix: one line until served again
}

func newLoadLimiters() loadLimiters {
	return loadLimiters{failed: throttle.New(throttle.Every), fixable: throttle.New(24 * time.Hour)}
}

// logLoad logs failed loads of segments. Tags that do not exist are not
// worth a line.
func (a *Server) logLoad(l loadLimiters, tag string, err error) {
	if err == nil {
		l.failed.Forget(tag)
		l.fixable.Forget(tag)
		return
	}
	if errors.Is(err, segment.ErrUnknownTag) {
		return
	}
	if errors.Is(err, segment.ErrMisconfigured) || errors.Is(err, segment.ErrExhausted) {
		// Until an operator acts every load fails the same way: one line,
		// and one more only after the tag was served again.
		if ok, _ := l.fixable.Allow(tag); ok {
			a.log.Error("segment: the tag's row cannot be served until an operator fixes it", "tag", tag, "err", err)
		}
		return
	}
	if ok, dropped := l.failed.Allow(tag); ok {
		a.log.Warn("segment load failed", "tag", tag, "err", err, "failures_not_logged", dropped)
	}
}

// logRegression reports a row found behind what this instance received.
func (a *Server) logRegression(r segment.Regression) {
	a.fenceSkipped(r)
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
// once every throttle.Every, losses and regressions always, and a new worker id.
func (a *Server) leaseLogger() func(snowflake.LeaseEvent) {
	l := throttle.New(throttle.Every)
	return func(ev snowflake.LeaseEvent) {
		switch {
		case ev.Err == nil && ev.Acquired:
			a.log.Info("snowflake worker id acquired again", "worker_id", ev.WorkerID)
			l.Forget("renew")
		case ev.Err == nil:
			l.Forget("renew")
		case errors.Is(ev.Err, snowflake.ErrLeaseRegressed):
			a.log.Error("snowflake: the database went back in time; stopped issuing, acquiring a worker id again",
				"worker_id", ev.WorkerID, "err", ev.Err)
		case errors.Is(ev.Err, snowflake.ErrLeaseLost) && !ev.Acquired:
			a.log.Error("snowflake: the worker lease is held by another; stopped issuing, acquiring a worker id again",
				"worker_id", ev.WorkerID, "err", ev.Err)
		default:
			if ok, dropped := l.Allow("renew"); ok {
				a.log.Warn("snowflake worker lease not renewed", "worker_id", ev.WorkerID, "acquire", ev.Acquired,
					"err", ev.Err, "failures_not_logged", dropped)
			}
		}
	}
}
