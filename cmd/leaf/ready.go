package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// Readiness: only this instance's own problems fail it; an outage of the
// store, which every instance shares, degrades it (httpapi.ErrDegraded).

func (a *app) lifecycleCheck(context.Context) error {
	if a.stopping.Load() {
		return errors.New("shutting down")
	}
	return nil
}

// watchSchema checks, when serve does not migrate, that the database has
// the tables and columns this version uses. While it does not, /readyz
// fails naming what is missing, and the check runs again every few
// seconds, so that a `leaf migrate` run elsewhere makes the instance ready.
func (a *app) watchSchema(ctx context.Context) {
	err := a.store.CheckSchema(ctx)
	if err == nil || !errors.As(err, new(*segment.NotMigratedError)) {
		return // a store that does not answer is the store check's to report
	}
	a.log.Error("the database lacks migrations and --migrate=false: run `leaf migrate`", "err", err)
	a.schemaErr.Store(&err)
	a.schemaDone = make(chan struct{})
	a.schemaWG.Add(1)
	go func() {
		defer a.schemaWG.Done()
		t := time.NewTicker(schemaRecheck)
		defer t.Stop()
		for {
			select {
			case <-a.schemaDone:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), a.store.Timeout())
			err := a.store.CheckSchema(ctx)
			cancel()
			if err == nil {
				a.schemaErr.Store(nil)
				a.log.Info("the database is migrated now")
				return
			}
		}
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

// storeHealth is the store's health as /status shows it.
func (a *app) storeHealth() httpapi.StoreHealth {
	h := a.store.Health()
	out := httpapi.StoreHealth{Up: h.Up, Since: h.Since, Failed: h.Failed}
	if !h.Up && h.Err != nil {
		out.Err = h.Err.Error()
	}
	return out
}

// The checks' errors are shown in /readyz, which anyone who reaches the
// port may read: they say what is wrong in words that name no host. The
// errors with the details are in the log.

func (a *app) storeCheck(context.Context) error {
	if h := a.store.Health(); !h.Up {
		return fmt.Errorf("%w: the database has not answered since %s", httpapi.ErrDegraded, h.Since.UTC().Format(time.RFC3339))
	}
	return nil
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
