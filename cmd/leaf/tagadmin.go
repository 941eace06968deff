package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/storeset"
)

// openedAdmin is the service's tag administration over the store, or the set
// of stores, of a command line: leaf tag add creates a tag through the
// same call, by the same rules, as leaf serve's admin API.
type openedAdmin struct {
	*service.TagAdmin
	where  string
	set    *storeset.Stores
	stores *openedStores
	close  func()
}

// openTagAdmin opens the store, or the stores of --store, migrating each.
// A tag of the home store alone (home) needs only the home store of a set
// to answer; a plain tag needs every store, each numbering it in its own
// class.
func openTagAdmin(ctx context.Context, c app.StoreConfig, home bool, keys [][]byte, stderr io.Writer) (*openedAdmin, error) {
	o := openStores(ctx, c, false)
	if err := o.Err(); err != nil && !home {
		o.Close()
		return nil, err
	}
	set, st, where, err := o.setAndHome(ctx, stderr, true, home)
	if err != nil {
		o.Close()
		return nil, err
	}
	is, err := bizid.New(bizid.Options{Store: st, Keys: keys})
	if err != nil {
		set.Close()
		o.Close()
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	rows, settings := set.Rows(st)
	return &openedAdmin{
		TagAdmin: &service.TagAdmin{Rows: rows, Settings: settings, Kinds: service.NewRegistry(set, is, nil), Ordered: createdOnly{}},
		where:    where,
		set:      set,
		stores:   o,
		close:    func() { set.Close(); o.Close() },
	}, nil
}

// createdOnly is where leaf tag add tells of the ordered tags it creates:
// nowhere, the instances learn of them from the store when first asked.
type createdOnly struct{}

func (createdOnly) AddedOrdered(context.Context, string) {}

// createdLine says what was created where.
func createdLine(v service.TagView, where string) string {
	name := printable(v.Name)
	switch {
	case v.Opaque != 0:
		return fmt.Sprintf("created %s in %s: opaque over %d bits, key id %s, step %d", name, where, v.Opaque, v.KeyID, v.Step)
	case v.Format != "":
		what := fmt.Sprintf("format %s, reset %s, time zone %s", v.Format, v.Reset, cmp.Or(v.TimeZone, "UTC"))
		if v.Ordered {
			what += ", ordered (served by one owner at a time)"
		}
		return fmt.Sprintf("created %s in %s: %s, step %d", name, where, what, v.Step)
	case v.Ordered:
		return fmt.Sprintf("created ordered tag %s in %s: next id %d, step %d", name, where, v.MaxID, v.Step)
	}
	return fmt.Sprintf("created %s in %s: next id %d, step %d", name, where, v.MaxID, v.Step)
}

// createdInEvery says that a plain tag was created in every store of the
// set, or which stores lack its row: the set creates it in every store
// that answers.
func (t *openedAdmin) createdInEvery(ctx context.Context, v service.TagView, stdout io.Writer) error {
	var missing []string
	for i, st := range t.stores.Stores {
		if _, err := st.Tag(ctx, v.Name); err != nil {
			missing = append(missing, fmt.Sprintf("%s (%v)", t.stores.Entries[i].Name, err))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("created %s, but not in the stores %s: create it there with the same step once they answer", printable(v.Name), strings.Join(missing, "; "))
	}
	fmt.Fprintf(stdout, "created %s in %s: step %d\n", printable(v.Name), t.where, v.Step)
	return nil
}
