package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// Readiness: only this instance's own problems fail it; an outage of the
// store, which every instance shares, degrades it (httpapi.ErrDegraded).

func (a *Server) lifecycleCheck(context.Context) error {
	if a.stopping.Load() {
		return errors.New("shutting down")
	}
	return nil
}

// watchStores does in the background what the start could not: it
// migrates each store that did not answer at the start (late) once it
// answers, or with --migrate=false checks then that it has the tables and
// columns this version uses. With --migrate=false it also checks every
// store that answers at the start: while one lacks a migration, /readyz
// fails naming what is missing, and the check runs again every few
// seconds, so that a `leaf migrate` run elsewhere makes the instance
// ready.
func (a *Server) watchStores(ctx context.Context) {
	var late, lacking []openStore
	var first error
	for _, s := range a.stores {
		if s.late.Load() {
			late = append(late, s)
			continue
		}
		if a.cfg.Migrate {
			continue
		}
		err := s.st.CheckSchema(ctx)
		switch {
		case err == nil:
		case errors.As(err, new(*segment.NotMigratedError)):
			err = s.errorf(err)
			a.log.Error("the database lacks migrations and --migrate=false: run `leaf migrate`", append(s.attrs(), "err", err)...)
			lacking = append(lacking, s)
			if first == nil {
				first = err
			}
		case s.name != "":
			// A store of a set that stopped answering since it opened:
			// checked once it answers again.
			s.late.Store(true)
			late = append(late, s)
		}
		// The one store not answering is the store check's to report.
	}
	if len(late)+len(lacking) == 0 {
		return
	}
	if first != nil {
		a.schemaErr.Store(&first)
	}
	wctx, stop := context.WithCancel(context.Background())
	a.watchStop = stop
	a.watchWG.Go(func() { a.catchUp(wctx, late, lacking) })
}

// catchUp is watchStores' loop: it ends when ctx does, or when every late
// store has been migrated (or checked) and none lacks a migration.
func (a *Server) catchUp(ctx context.Context, late, lacking []openStore) {
	t := time.NewTicker(lateCheck)
	defer t.Stop()
	c := &catchingUp{
		late:       late,
		lacking:    lacking,
		hadLacking: len(lacking) > 0,
		failures:   newLimiter(logEvery),
		next:       map[string]time.Time{},
		rechecked:  time.Now(),
	}
	for len(c.late)+len(c.lacking) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !a.tryLate(ctx, c) {
			return
		}
		if len(c.lacking) > 0 && time.Since(c.rechecked) >= schemaRecheck {
			c.rechecked = time.Now()
			a.recheckLacking(ctx, c)
		}
	}
	if c.hadLacking {
		a.schemaErr.Store(nil)
		a.log.Info("the database is migrated now")
	}
}

// catchingUp is the state of catchUp's loop.
type catchingUp struct {
	late       []openStore // not migrated (or checked) yet
	lacking    []openStore // found lacking a migration
	hadLacking bool        // some store lacked one: say when none does
	failures   *limiter
	next       map[string]time.Time // when to try a late store again after a failure
	rechecked  time.Time            // the last check of the lacking stores
}

// tryLate migrates (or checks) each late store that answers now and is
// not waiting after a failure; a store found lacking a migration moves to
// c.lacking. False when ctx ended meanwhile.
func (a *Server) tryLate(ctx context.Context, c *catchingUp) bool {
	still := c.late[:0]
	for _, s := range c.late {
		if !s.st.Health().Up || time.Now().Before(c.next[s.name]) {
			still = append(still, s)
			continue
		}
		lacks, err := a.catchUpStore(ctx, s)
		switch {
		case ctx.Err() != nil:
			return false
		case lacks:
			c.lacking = append(c.lacking, s)
			c.hadLacking = true
			a.schemaErr.Store(&err)
		case err != nil:
			c.next[s.name] = time.Now().Add(schemaRecheck)
			if ok, dropped := c.failures.allow(s.name); ok {
				a.log.Warn("a store that answers again could not be migrated; trying again", append(s.attrs(), "err", err, "failures_not_logged", dropped)...)
			}
			still = append(still, s)
		default:
			s.late.Store(false)
		}
	}
	c.late = still
	return true
}

// recheckLacking checks the schema of each store that lacked a migration,
// keeping those that still lack one, and the first's error for the
// readiness check.
func (a *Server) recheckLacking(ctx context.Context, c *catchingUp) {
	left := c.lacking[:0]
	var missing error
	for _, s := range c.lacking {
		cctx, cancel := context.WithTimeout(ctx, s.st.Timeout())
		err := s.st.CheckSchema(cctx)
		cancel()
		if err == nil {
			s.late.Store(false)
			continue
		}
		left = append(left, s)
		if missing == nil && errors.As(err, new(*segment.NotMigratedError)) {
			missing = s.errorf(err)
		}
	}
	c.lacking = left
	if missing != nil {
		a.schemaErr.Store(&missing)
	}
}

// catchUpStore migrates a late store that answers now, or with
// --migrate=false checks its schema; lacks reports a store that lacks a
// migration this version needs, err saying what.
func (a *Server) catchUpStore(ctx context.Context, s openStore) (lacks bool, err error) {
	log := a.log.With(s.attrs()...)
	if !a.cfg.Migrate {
		cctx, cancel := context.WithTimeout(ctx, s.st.Timeout())
		defer cancel()
		err := s.st.CheckSchema(cctx)
		if errors.As(err, new(*segment.NotMigratedError)) {
			err = s.errorf(err)
			log.Error("the database lacks migrations and --migrate=false: run `leaf migrate`", "err", err)
			return true, err
		}
		if err == nil {
			log.Info("store answering: its schema is the one this version needs")
		}
		return false, err
	}
	applied, err := s.st.Migrate(ctx)
	logMigrations(log, applied)
	if err != nil {
		return false, s.errorf(err)
	}
	log.Info("store answering: migrated")
	return false, nil
}

// schemaRecheck is how often a database found without its migrations is
// checked again, and a late store whose migration failed is tried again.
const schemaRecheck = 2 * time.Second

// lateCheck is how often the stores that did not answer at the start are
// looked at: a look reads their health, in memory; the migration runs
// once one answers.
const lateCheck = 250 * time.Millisecond

func (a *Server) schemaCheck(context.Context) error {
	if err := a.schemaErr.Load(); err != nil {
		return *err
	}
	return nil
}

// storesUp reports whether every store answers.
func (a *Server) storesUp() bool {
	for _, s := range a.stores {
		if !s.st.Health().Up {
			return false
		}
	}
	return true
}

// storeHealth is the stores' health as /status shows it: up while every
// store answers, since the last came back; else down since the first went
// down, with why each is down; the calls failed of them all.
func (a *Server) storeHealth() httpapi.StoreHealth {
	var (
		out  httpapi.StoreHealth
		errs []string
	)
	out.Up = true
	for _, s := range a.stores {
		h := s.st.Health()
		switch {
		case h.Up && out.Up:
			if h.Since.After(out.Since) {
				out.Since = h.Since
			}
		case !h.Up:
			if out.Up || h.Since.Before(out.Since) {
				out.Since = h.Since
			}
			out.Up = false
			if h.Err != nil {
				errs = append(errs, s.errorf(h.Err).Error())
			}
		}
		out.Failed += h.Failed
	}
	out.Err = strings.Join(errs, "; ")
	return out
}

// The checks' errors are shown in /readyz, which anyone who reaches the
// port may read: they say what is wrong in words that name no host. The
// errors with the details are in the log.

// storeChecks are the checks of the stores: "store", or one "store:NAME"
// per store of a set.
func (a *Server) storeChecks() []httpapi.Check {
	var out []httpapi.Check
	for _, s := range a.stores {
		name := "store"
		if s.name != "" {
			name += ":" + s.name
		}
		out = append(out, httpapi.Check{Name: name, Func: a.storeCheck(s), ShowReason: true})
	}
	return out
}

// storeCheck degrades readiness while s does not answer, and while a store
// that did not answer at the start has not been migrated (or checked)
// since it answers.
func (a *Server) storeCheck(s openStore) func(context.Context) error {
	return func(context.Context) error {
		h := s.st.Health()
		switch {
		case !h.Up:
			return fmt.Errorf("%w: the database has not answered since %s", httpapi.ErrDegraded, h.Since.UTC().Format(time.RFC3339))
		case s.late.Load() && a.cfg.Migrate:
			return fmt.Errorf("%w: the database answers again and is being migrated", httpapi.ErrDegraded)
		case s.late.Load():
			return fmt.Errorf("%w: the database answers again and its schema is being checked", httpapi.ErrDegraded)
		}
		return nil
	}
}

// snowflakeCheck fails for a lease held by another or a clock behind; a
// lease that lapsed because renewals failed (the store did not answer), or
// that waits out a store gone back in time, is shared by every instance and
// only degrades.
func (a *Server) snowflakeCheck(context.Context) error {
	err := a.gen.Ready()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, snowflake.ErrLeaseRegressed), errors.Is(err, snowflake.ErrLeaseUnrenewed):
		return fmt.Errorf("%w: %s", httpapi.ErrDegraded, snowflake.Reason(err))
	case snowflake.Reason(err) != "":
		return errors.New(snowflake.Reason(err))
	case errors.Is(err, snowflake.ErrClosed):
		return errors.New("shutting down")
	}
	return errors.New("cannot issue snowflake ids (the log says why)")
}
