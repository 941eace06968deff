package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// Opened are the stores of a StoreConfig, each open or why not: what
// leaf serve opens, and every command that works on the stores, through
// OpenStores.
type Opened struct {
	Entries []StoreEntry
	// Stores are open, or nil where Errs says why not. A store of a set
	// that opened but does not answer is there, down.
	Stores []*store.Store
	Errs   []error
}

// OpenOptions are how OpenStores opens each store.
type OpenOptions struct {
	// ReadOnly leaves an SQLite file that does not exist uncreated: the
	// store does not open.
	ReadOnly bool
	// Options are those of a store; nil: the config's timeout alone.
	Options func(e StoreEntry) store.Options
}

// OpenStores opens every store of c (its Entries). A database of a set
// that does not answer opens down, as an instance serves it until it
// answers; one that refuses does not open, nor does one store alone that
// does not answer.
func OpenStores(ctx context.Context, c StoreConfig, o OpenOptions) *Opened {
	entries := c.Entries()
	out := &Opened{Entries: entries, Stores: make([]*store.Store, len(entries)), Errs: make([]error, len(entries))}
	for i, e := range entries {
		if o.ReadOnly && e.IsSQLite() && e.Path != ":memory:" {
			if _, err := os.Stat(e.Path); errors.Is(err, fs.ErrNotExist) {
				out.Errs[i] = fmt.Errorf("store %q: sqlite %s does not exist", e.Name, e.Path)
				if e.Name == storeset.Lone {
					out.Errs[i] = fmt.Errorf("sqlite %s does not exist (choose the store with --sqlite-path or --mysql-dsn)", e.Path)
				}
				continue
			}
		}
		opts := store.Options{Timeout: c.Timeout}
		if o.Options != nil {
			opts = o.Options(e)
		}
		opts.AllowDown = c.Several()
		out.Stores[i], out.Errs[i] = e.Open(ctx, opts)
	}
	return out
}

// Err is the first reason a store did not open, if one did not.
func (o *Opened) Err() error {
	for _, err := range o.Errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Close closes the stores that opened.
func (o *Opened) Close() {
	for _, st := range o.Stores {
		if st != nil {
			st.Close()
		}
	}
}

// Named are the stores as a set takes them: each that opened, up while
// up(i) says it answers (its health when up is nil), and each other with
// why it did not open.
func (o *Opened) Named(up func(i int) bool) []storeset.Named {
	out := make([]storeset.Named, len(o.Entries))
	for i, e := range o.Entries {
		st := o.Stores[i]
		switch {
		case st == nil:
			out[i] = storeset.Named{Name: e.Name, Err: o.Errs[i]}
		case up != nil:
			out[i] = storeset.Named{Name: e.Name, Store: st, Up: func() bool { return up(i) }}
		default:
			out[i] = storeset.Named{Name: e.Name, Store: st, Up: func() bool { return st.Health().Up }}
		}
	}
	return out
}

// OpenSet serves the stores as one set, or the one store alone
// (storeset.Open), up as Named says; a store of a set given alone is a
// mistake of the command line.
func (o *Opened) OpenSet(ctx context.Context, up func(i int) bool, opts storeset.Options) (*storeset.Stores, error) {
	set, err := storeset.Open(ctx, o.Named(up), opts)
	if errors.Is(err, storeset.ErrSetMember) {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return set, err
}

// Home is the place among the entries of the set's home store, where
// what has one counter lives (storeset's home.go): the one store, or the
// home store of a set; -1 when it is not given.
func (o *Opened) Home(set *storeset.Stores) int {
	for i, e := range o.Entries {
		if e.Name == set.HomeName() {
			return i
		}
	}
	return -1
}
