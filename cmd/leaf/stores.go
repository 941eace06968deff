package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
)

// The stores of --store as a one-shot command (leaf store, leaf tag,
// leaf migrate) opens them.

// openedStores are the stores of --store, each open or why not.
type openedStores struct {
	entries storesFlag
	stores  []*store.Store // nil where errs says why
	errs    []error
}

// openStores opens every store of sf. With readOnly, an SQLite file that
// does not exist is not created: it is a store that did not open.
func openStores(ctx context.Context, sf *storeFlags, readOnly bool) *openedStores {
	o := &openedStores{entries: sf.stores, stores: make([]*store.Store, len(sf.stores)), errs: make([]error, len(sf.stores))}
	for i, e := range sf.stores {
		if readOnly && e.IsSQLite() && e.Path != ":memory:" {
			if _, err := os.Stat(e.Path); errors.Is(err, fs.ErrNotExist) {
				o.errs[i] = fmt.Errorf("store %q: sqlite %s does not exist", e.Name, e.Path)
				continue
			}
		}
		o.stores[i], o.errs[i] = e.Open(ctx, store.Options{Timeout: sf.storeTimeout})
	}
	return o
}

// close closes the stores that opened.
func (o *openedStores) close() {
	for _, st := range o.stores {
		if st != nil {
			st.Close()
		}
	}
}

// allOpen is the first reason a store did not open, if any did not.
func (o *openedStores) allOpen() error {
	for _, err := range o.errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// migrate applies the pending migrations to every store that opened,
// saying on w what it applied.
func (o *openedStores) migrate(ctx context.Context, w io.Writer) error {
	for i, st := range o.stores {
		if st == nil {
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

// named are the stores as a set takes them; one that did not open is
// there as a store that does not answer.
func (o *openedStores) named() []storeset.Named {
	out := make([]storeset.Named, len(o.entries))
	for i, e := range o.entries {
		out[i] = storeset.Named{Name: e.Name, Store: unreachable{o.errs[i]}}
		if st := o.stores[i]; st != nil {
			out[i].Store, out[i].Up = st, func() bool { return st.Health().Up }
		}
	}
	return out
}

// records reads what every store that opened says of itself; errs says
// why a store did not answer.
func (o *openedStores) records(ctx context.Context) (recs []storeset.Record, errs []error) {
	recs, errs = make([]storeset.Record, len(o.entries)), make([]error, len(o.entries))
	for i, st := range o.stores {
		if st == nil {
			errs[i] = o.errs[i]
			continue
		}
		if recs[i], errs[i] = st.Record(ctx); errs[i] != nil {
			errs[i] = fmt.Errorf("store %q: %w", o.entries[i].Name, errs[i])
		}
	}
	return recs, errs
}

// openSet opens the set over the stores, for the tag commands.
func (o *openedStores) openSet(ctx context.Context) (*storeset.Stores, error) {
	return storeset.Open(ctx, o.named(), storeset.Options{})
}

// home is the home store of set among those that opened, and where it
// is, for the commands that make what lives there alone.
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
		return o.stores[i], e.Where(o.stores[i]), nil
	}
	return nil, "", fmt.Errorf("the set's home store %q is not given (--store)", name)
}

// unreachable is a store that could not be opened: every call fails as a
// store that does not answer does.
type unreachable struct{ err error }

var _ storeset.Store = unreachable{}

func (u unreachable) fail() error {
	return fmt.Errorf("%w: %w", segment.ErrStoreUnavailable, u.err)
}

func (u unreachable) Allocate(context.Context, string, int64) (segment.Allocation, error) {
	return segment.Allocation{}, u.fail()
}

func (u unreachable) AllocateAbove(context.Context, string, int64, int64) (segment.Allocation, error) {
	return segment.Allocation{}, u.fail()
}

func (u unreachable) Tag(context.Context, string) (segment.Tag, error) {
	return segment.Tag{}, u.fail()
}

func (u unreachable) Tags(context.Context) ([]segment.Tag, error) { return nil, u.fail() }

func (u unreachable) FindTags(context.Context, []string) ([]string, error) { return nil, u.fail() }

func (u unreachable) CreateTag(context.Context, segment.Tag) (segment.Tag, error) {
	return segment.Tag{}, u.fail()
}

func (u unreachable) UpdateTag(context.Context, string, segment.TagUpdate) (segment.Tag, error) {
	return segment.Tag{}, u.fail()
}

func (u unreachable) Record(context.Context) (storeset.Record, error) {
	return storeset.Record{}, u.fail()
}

func (u unreachable) SetRecord(context.Context, storeset.Record, storeset.Record) (bool, error) {
	return false, u.fail()
}

func (u unreachable) AllocateIn(context.Context, string, int64, int64, segment.Class, int64) (segment.Allocation, int64, error) {
	return segment.Allocation{}, 0, u.fail()
}

func (u unreachable) Highest(context.Context) (int64, error) { return 0, u.fail() }

func (u unreachable) Marks(context.Context, string, []string) (map[string]int64, error) {
	return nil, u.fail()
}

func (u unreachable) HighestMark(context.Context, string) (int64, error) { return 0, u.fail() }

func (u unreachable) RecordMarks(context.Context, string, map[string]int64) error { return u.fail() }

func (u unreachable) LowerMarks(context.Context, string, map[string]storeset.MarkBack) error {
	return u.fail()
}

func (u unreachable) HandBack(context.Context, string, int64, int64) (bool, error) {
	return false, u.fail()
}

func (u unreachable) AllocateBatchIn(context.Context, []string, []int64, segment.Class, int64) ([]storeset.ClassResult, error) {
	return nil, u.fail()
}

func (u unreachable) AllocateBatch(context.Context, []string) ([]segment.BatchResult, error) {
	return nil, u.fail()
}
