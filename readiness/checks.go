package readiness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leafid/leaf/snowflake"
)

// The checks' errors are shown in /readyz, which anyone who reaches the
// port may read: they say what is wrong in words that name no host. The
// errors with the details are in the log.

// Checks are the checks of the stores: "schema", then "store" and
// "durability", or one "store:NAME" and one "durability:NAME" per store
// of a set.
func (s *Stores) Checks() []Check {
	out := []Check{{Name: "schema", Func: s.schemaCheck, ShowReason: true}}
	for _, w := range s.all {
		out = append(out, Check{Name: named("store", w), Func: s.storeCheck(w), ShowReason: true})
	}
	for _, w := range s.all {
		out = append(out, Check{Name: named("durability", w), Func: s.durabilityCheck(w), ShowReason: true})
	}
	return out
}

// named is a check's name for the store w.
func named(check string, w *Store) string {
	if w.Name == "" {
		return check
	}
	return check + ":" + w.Name
}

// schemaCheck fails while a store lacks a migration this version needs
// (see Watch): only this instance runs with --migrate=false.
func (s *Stores) schemaCheck(context.Context) error {
	if err := s.schemaErr.Load(); err != nil {
		return *err
	}
	return nil
}

// storeCheck degrades readiness while the store does not answer, and
// while a store that did not answer at the start has not been migrated
// (or checked) since it answers.
func (s *Stores) storeCheck(w *Store) func(context.Context) error {
	return func(context.Context) error {
		h := w.Store.Health()
		switch {
		case !h.Up:
			return fmt.Errorf("%w: the database has not answered since %s", ErrDegraded, h.Since.UTC().Format(time.RFC3339))
		case w.late.Load() && s.opts.Migrate:
			return fmt.Errorf("%w: the database answers again and is being migrated", ErrDegraded)
		case w.late.Load():
			return fmt.Errorf("%w: the database answers again and its schema is being checked", ErrDegraded)
		}
		return nil
	}
}

// durabilityCheck degrades readiness, never fails it, while the store's
// settings say it can forget a commit: every instance shares the store,
// so taking them out of a load balancer would only add an outage. With
// RequireDurable it degrades too while the settings are not read. The
// reason names nodes by their place in the list, never by address.
func (s *Stores) durabilityCheck(w *Store) func(context.Context) error {
	return func(context.Context) error {
		d, ok := w.Store.Durability()
		refused := ""
		if s.opts.RequireDurable {
			refused = "; --require-durable: no range is taken from it"
		}
		switch {
		case ok && d.Forgets():
			return fmt.Errorf("%w: the database can forget commits it acknowledged: %s%s", ErrDegraded, d.Reason(), refused)
		case refused != "" && (!ok || !d.Known()):
			return fmt.Errorf("%w: the database's settings have not been read yet%s until they say it is durable", ErrDegraded, refused)
		}
		return nil
	}
}

// Snowflake is the check of the snowflake generator whose Ready is ready.
// It fails for a lease held by another or a clock behind; a lease that
// lapsed because renewals failed (the store did not answer), or that
// waits out a store gone back in time, is shared by every instance and
// only degrades.
func Snowflake(ready func() error) Check {
	return Check{Name: "snowflake", ShowReason: true, Func: func(context.Context) error {
		err := ready()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, snowflake.ErrLeaseRegressed), errors.Is(err, snowflake.ErrLeaseUnrenewed):
			return fmt.Errorf("%w: %s", ErrDegraded, snowflake.Reason(err))
		case snowflake.Reason(err) != "":
			return errors.New(snowflake.Reason(err))
		case errors.Is(err, snowflake.ErrClosed):
			return errors.New("shutting down")
		}
		return errors.New("cannot issue snowflake ids (the log says why)")
	}}
}
