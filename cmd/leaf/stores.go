package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// The stores of --store as a one-shot command (leaf store, leaf tag,
// leaf migrate) opens them.

// openedStores are the one store, or the stores of --store, each open or
// why not.
type openedStores struct {
	entries storesFlag
	// stores are open, or nil where errs says why not; a store that opened
	// but does not answer is there, down, and errs says so too.
	stores []*store.Store
	errs   []error
}

// openStores opens the one store of sf, or every store of its set. A
// database of a set that does not answer opens down, as an instance opens
// it; one that refuses does not open, nor does one store alone that does
// not answer. With readOnly, an SQLite file that does not exist is not
// created: it is a store that did not open.
func openStores(ctx context.Context, sf *storeFlags, readOnly bool) *openedStores {
	entries := storesFlag(sf.config().Entries())
	o := &openedStores{entries: entries, stores: make([]*store.Store, len(entries)), errs: make([]error, len(entries))}
	for i, e := range entries {
		if readOnly && e.IsSQLite() && e.Path != ":memory:" {
			if _, err := os.Stat(e.Path); errors.Is(err, fs.ErrNotExist) {
				o.errs[i] = fmt.Errorf("store %q: sqlite %s does not exist", e.Name, e.Path)
				if e.Name == storeset.Lone {
					o.errs[i] = fmt.Errorf("sqlite %s does not exist (choose the store with --sqlite-path or --mysql-dsn)", e.Path)
				}
				continue
			}
		}
		o.stores[i], o.errs[i] = e.Open(ctx, store.Options{Timeout: sf.storeTimeout, AllowDown: sf.several()})
		if st := o.stores[i]; st != nil && !st.Health().Up {
			o.errs[i] = fmt.Errorf("store %q: %w", e.Name, st.Health().Err)
		}
	}
	return o
}

// where names the stores for a person: the one store, or the stores of a
// set by their names.
func (o *openedStores) where() string {
	if o.entries[0].Name == storeset.Lone {
		return o.entries[0].Where(o.stores[0])
	}
	return "stores " + strings.Join(o.entries.names(), ", ")
}

// close closes the stores that opened.
func (o *openedStores) close() {
	for _, st := range o.stores {
		if st != nil {
			st.Close()
		}
	}
}

// openError is the first reason a store did not open, if any did not.
func (o *openedStores) openError() error {
	for _, err := range o.errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// migrate applies the pending migrations to every store that answers,
// saying on w what it applied.
func (o *openedStores) migrate(ctx context.Context, w io.Writer) error {
	for i, st := range o.stores {
		if o.errs[i] != nil {
			continue
		}
		where := o.entries[i].Where(st)
		applied, err := st.Migrate(ctx)
		printMigrations(w, where, applied)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

// named are the stores as a set takes them, with why each one that did
// not open did not.
func (o *openedStores) named() []storeset.Named {
	out := make([]storeset.Named, len(o.entries))
	for i, e := range o.entries {
		out[i] = storeset.Named{Name: e.Name, Err: o.errs[i]}
		if st := o.stores[i]; st != nil {
			out[i] = storeset.Named{Name: e.Name, Store: st, Up: func() bool { return st.Health().Up }}
		}
	}
	return out
}

// records reads what every store that opened says of itself; errs says
// why a store did not answer.
func (o *openedStores) records(ctx context.Context) (recs []storeset.Record, errs []error) {
	recs, errs = make([]storeset.Record, len(o.entries)), make([]error, len(o.entries))
	for i, st := range o.stores {
		if o.errs[i] != nil {
			errs[i] = o.errs[i]
			continue
		}
		if recs[i], errs[i] = st.Record(ctx); errs[i] != nil {
			errs[i] = fmt.Errorf("store %q: %w", o.entries[i].Name, errs[i])
		}
	}
	return recs, errs
}

// openSet serves the stores as one set, or the one store alone, for the
// tag and sequence commands.
func (o *openedStores) openSet(ctx context.Context) (*storeset.Stores, error) {
	set, err := storeset.Open(ctx, o.named(), storeset.Options{})
	if errors.Is(err, storeset.ErrSetMember) {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	return set, err
}

// home is the home store of set among those that opened, and where it
// is, for the commands that make what lives there alone: the one store,
// or the home store of a set.
func (o *openedStores) home(set *storeset.Stores) (*store.Store, string, error) {
	name := set.HomeName()
	for i, e := range o.entries {
		if e.Name != name {
			continue
		}
		if o.stores[i] == nil {
			return nil, "", fmt.Errorf("the set's home store %q did not open: %w", name, o.errs[i])
		}
		if err := o.stores[i].Ping(context.Background()); err != nil {
			return nil, "", fmt.Errorf("the set's home store %q does not answer: %w", name, err)
		}
		if !set.Several() {
			return o.stores[i], e.Where(o.stores[i]), nil
		}
		return o.stores[i], e.Where(o.stores[i]) + " (the home store of the set)", nil
	}
	return nil, "", fmt.Errorf("the set's home store %q is not given (--store)", name)
}
