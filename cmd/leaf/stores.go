package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// openedStores are the stores of a one-shot command (leaf store, tag,
// sequence, migrate), opened as leaf serve opens them (app.OpenStores);
// a store that opened but does not answer has its reason in Errs too.
type openedStores struct{ *app.Opened }

// openStores opens the stores of c. With readOnly, an SQLite file that
// does not exist is not created: it is a store that did not open.
func openStores(ctx context.Context, c app.StoreConfig, readOnly bool) *openedStores {
	o := &openedStores{app.OpenStores(ctx, c, app.OpenOptions{ReadOnly: readOnly})}
	for i, st := range o.Stores {
		if st != nil && !st.Health().Up {
			o.Errs[i] = fmt.Errorf("store %q: %w", o.Entries[i].Name, st.Health().Err)
		}
	}
	return o
}

// where names the stores for a person: the one store, or the stores of a
// set by their names.
func (o *openedStores) where() string {
	if o.Entries[0].Name == storeset.Lone {
		return o.Entries[0].Where(o.Stores[0])
	}
	names := make([]string, len(o.Entries))
	for i, e := range o.Entries {
		names[i] = e.Name
	}
	return "stores " + strings.Join(names, ", ")
}

// migrate applies the pending migrations to every store that answers,
// saying on w what it applied, and with upToDate which store had none to
// apply. It stops at the first failure, or with all goes on to the
// others and returns every failure, a store's that did not answer too.
func (o *openedStores) migrate(ctx context.Context, w io.Writer, upToDate, all bool) error {
	var errs []error
	for i, st := range o.Stores {
		if o.Errs[i] != nil {
			errs = append(errs, o.Errs[i])
			continue
		}
		where := o.Entries[i].Where(st)
		applied, err := st.Migrate(ctx)
		for _, m := range applied {
			fmt.Fprintf(w, "applied %s (version %d) to %s\n", m.Name, m.Version, where)
		}
		switch {
		case err != nil && !all:
			return fmt.Errorf("%s: %w", where, err)
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		case len(applied) == 0 && upToDate:
			fmt.Fprintf(w, "no pending migration: %s is up to date\n", where)
		}
	}
	if !all {
		return nil
	}
	return errors.Join(errs...)
}

// records reads what every store that opened says of itself; errs says
// why a store did not answer.
func (o *openedStores) records(ctx context.Context) (recs []storeset.Record, errs []error) {
	recs, errs = make([]storeset.Record, len(o.Entries)), make([]error, len(o.Entries))
	for i, st := range o.Stores {
		if o.Errs[i] != nil {
			errs[i] = o.Errs[i]
			continue
		}
		if recs[i], errs[i] = st.Record(ctx); errs[i] != nil {
			errs[i] = fmt.Errorf("store %q: %w", o.Entries[i].Name, errs[i])
		}
	}
	return recs, errs
}

// home is the home store of set among those that opened, and where it
// is, for the commands that make what lives there alone: the one store,
// or the home store of a set.
func (o *openedStores) home(set *storeset.Stores) (*store.Store, string, error) {
	name, i := set.HomeName(), o.Home(set)
	switch {
	case i < 0:
		return nil, "", fmt.Errorf("the set's home store %q is not given (--store)", name)
	case o.Stores[i] == nil:
		return nil, "", fmt.Errorf("the set's home store %q did not open: %w", name, o.Errs[i])
	}
	if err := o.Stores[i].Ping(context.Background()); err != nil {
		return nil, "", fmt.Errorf("the set's home store %q does not answer: %w", name, err)
	}
	where := o.Entries[i].Where(o.Stores[i])
	if set.Several() {
		where += " (the home store of the set)"
	}
	return o.Stores[i], where, nil
}

// setAndHome serves the stores o opened as a set, or the one store
// alone, after migrating them when migrate is set, and finds the set's
// home store when home is set or there is one store: where the
// sequences, and the ordered, formatted and opaque tags live.
func (o *openedStores) setAndHome(ctx context.Context, stderr io.Writer, migrate, home bool) (set *storeset.Stores, st *store.Store, where string, err error) {
	if migrate {
		if err = o.migrate(ctx, stderr, false, false); err != nil {
			return nil, nil, "", err
		}
	}
	if set, err = o.OpenSet(ctx, nil, storeset.Options{}); err != nil {
		return nil, nil, "", err
	}
	where = o.where()
	if home || !set.Several() {
		if st, where, err = o.home(set); err != nil {
			set.Close()
		}
	}
	return set, st, where, err
}

// migrateCmd is `leaf migrate`.
type migrateCmd struct {
	storeFlags `embed:""`
}

func (migrateCmd) Help() string {
	return "Applies the pending migrations to the store, or to each store of --store,\nsays which, and exits."
}

// Run migrates every store as far as it can be: one that does not open
// or fails leaves the others of a set migrated.
func (c *migrateCmd) Run(r *runner) error {
	cfg, err := c.config(r.p)
	if err != nil {
		return err
	}
	o := openStores(r.ctx, cfg, false)
	defer o.Close()
	return o.migrate(r.ctx, r.stdout, true, true)
}
