package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
)

// Readiness: only this instance's own problems fail it; an outage of the
// store, which every instance shares, degrades it (httpapi.ErrDegraded).

func (a *app) lifecycleCheck(context.Context) error {
	if a.stopping.Load() {
		return errors.New("shutting down")
	}
	return nil
}

// watchSchema checks, when serve does not migrate, that every database has
// the tables and columns this version uses. While one does not, /readyz
// fails naming what is missing, and the check runs again every few
// seconds, so that a `leaf migrate` run elsewhere makes the instance ready.
func (a *app) watchSchema(ctx context.Context) {
	var lacking []openStore
	var first error
	for _, s := range a.stores {
		err := s.st.CheckSchema(ctx)
		if err == nil || !errors.As(err, new(*segment.NotMigratedError)) {
			continue // a store that does not answer is the store check's to report
		}
		err = s.errorf(err)
		a.log.Error("the database lacks migrations and --migrate=false: run `leaf migrate`", append(s.attrs(), "err", err)...)
		lacking = append(lacking, s)
		if first == nil {
			first = err
		}
	}
	if len(lacking) == 0 {
		return
	}
	a.schemaErr.Store(&first)
	a.schemaDone = make(chan struct{})
	a.schemaWG.Add(1)
	go func() {
		defer a.schemaWG.Done()
		t := time.NewTicker(schemaRecheck)
		defer t.Stop()
		for len(lacking) > 0 {
			select {
			case <-a.schemaDone:
				return
			case <-t.C:
			}
			still := lacking[:0]
			var missing error
			for _, s := range lacking {
				ctx, cancel := context.WithTimeout(context.Background(), s.st.Timeout())
				err := s.st.CheckSchema(ctx)
				cancel()
				if err == nil {
					continue
				}
				still = append(still, s)
				if missing == nil && errors.As(err, new(*segment.NotMigratedError)) {
					missing = s.errorf(err)
				}
			}
			lacking = still
			if missing != nil {
				a.schemaErr.Store(&missing)
			}
		}
		a.schemaErr.Store(nil)
		a.log.Info("the database is migrated now")
	}()
}

// schemaRecheck is how often a database found without its migrations is
// checked again.
const schemaRecheck = 2 * time.Second

func (a *app) schemaCheck(context.Context) error {
	if err := a.schemaErr.Load(); err != nil {
		return *err
	}
	return nil
}

// storesUp reports whether every store answers.
func (a *app) storesUp() bool {
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
func (a *app) storeHealth() httpapi.StoreHealth {
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
func (a *app) storeChecks() []httpapi.Check {
	var out []httpapi.Check
	for _, s := range a.stores {
		name := "store"
		if s.name != "" {
			name += ":" + s.name
		}
		out = append(out, httpapi.Check{Name: name, Func: storeCheck(s.st), ShowReason: true})
	}
	return out
}

// storeCheck degrades readiness while st does not answer.
func storeCheck(st *store.Store) func(context.Context) error {
	return func(context.Context) error {
		if h := st.Health(); !h.Up {
			return fmt.Errorf("%w: the database has not answered since %s", httpapi.ErrDegraded, h.Since.UTC().Format(time.RFC3339))
		}
		return nil
	}
}

// snowflakeCheck fails for a lease held by another or a clock behind; a
// lease that lapsed because renewals failed (the store did not answer), or
// that waits out a store gone back in time, is shared by every instance and
// only degrades.
func (a *app) snowflakeCheck(context.Context) error {
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
