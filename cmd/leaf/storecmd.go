package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/storeset"
)

// leaf store: make and change the set of stores that serve one number
// space (package storeset). Each command is given every store of the set
// with --store.

// storeConfig is the set of a leaf store command, which needs --store.
func (f *storeFlags) storeConfig(p *parser, command string) (app.StoreConfig, error) {
	c, err := f.config(p)
	if err == nil && !f.several() {
		err = fmt.Errorf("%w: %s needs the stores, each as --store NAME=DSN (or in LEAF_STORES)", errUsage, command)
	}
	return c, err
}

// storeInitCmd is `leaf store init`.
type storeInitCmd struct {
	storeFlags `embed:""`
}

func (storeInitCmd) Help() string {
	return "Makes the stores given one set, version 1, after applying pending migrations\n" +
		"to each; the order of --store is the order of their classes. Every store\n" +
		"must answer and belong to no set. Prints the set."
}

func (c *storeInitCmd) Run(r *runner) error {
	cfg, err := c.storeConfig(r.p, "store init")
	if err != nil {
		return err
	}
	o := openStores(r.ctx, cfg, false)
	defer o.Close()
	if err := o.Err(); err != nil {
		return err
	}
	if err := o.migrate(r.ctx, r.stderr, false, false); err != nil {
		return err
	}
	set, err := storeset.Init(r.ctx, o.Named(nil))
	if err != nil {
		return err
	}
	fmt.Fprint(r.stdout, set.Describe())
	return nil
}

// storeShowCmd is `leaf store show`.
type storeShowCmd struct {
	storeFlags `embed:""`
}

func (storeShowCmd) Help() string {
	return "Prints the newest set the stores record, each store's version and state,\n" +
		"and the stores that did not answer. Only reads: applies no migration and\n" +
		"creates no SQLite file."
}

// storeShow prints the newest set the stores record and where each store
// stands. It only reads: it neither migrates nor creates an SQLite file.
func (c *storeShowCmd) Run(r *runner) error {
	cfg, err := c.storeConfig(r.p, "store show")
	if err != nil {
		return err
	}
	ctx, stdout := r.ctx, r.stdout
	o := openStores(ctx, cfg, true)
	defer o.Close()
	recs, errs := o.records(ctx)
	set, ok, err := storeset.Newest(recs, errs, false)
	if err != nil {
		return err
	}
	var b strings.Builder
	if ok {
		b.WriteString(set.Describe())
	} else {
		b.WriteString("no set: the stores that answered belong to no set yet; make one with `leaf store init`\n")
	}
	b.WriteString("stores:\n")
	answered := 0
	for i, e := range o.Entries {
		rec := recs[i]
		switch {
		case errs[i] != nil:
			fmt.Fprintf(&b, "  %s: did not answer\n", e.Name)
			continue
		case rec.State == storeset.Unjoined:
			fmt.Fprintf(&b, "  %s: belongs to no set (store id %s)\n", e.Name, rec.StoreID)
		default:
			fmt.Fprintf(&b, "  %s: version %d, %s (store id %s)\n", e.Name, rec.Version, rec.State, rec.StoreID)
		}
		answered++
	}
	if ok {
		for _, name := range set.Names() {
			if index(o.Entries, name) < 0 {
				fmt.Fprintf(&b, "  %s: in the set, not given\n", name)
			}
		}
	}
	if answered < len(o.Entries) {
		b.WriteString("did not answer:\n")
		for i, e := range o.Entries {
			if errs[i] != nil {
				fmt.Fprintf(&b, "  %s: %s\n", e.Name, printable(errs[i].Error()))
			}
		}
	}
	fmt.Fprint(stdout, b.String())
	if answered == 0 {
		return fmt.Errorf("no store answered")
	}
	return nil
}

// storeAddCmd is `leaf store add`: NAME=DSN, or NAME with the store
// given as one more --store.
type storeAddCmd struct {
	storeFlags `embed:""`
	Store      string `arg:"" name:"name=dsn" help:"the store added"`
}

func (storeAddCmd) Help() string {
	return "Adds the store NAME to the set given with --store (every store of it), as\n" +
		"the last class; its DSN comes as NAME=DSN, or as one more --store NAME=DSN\n" +
		"with NAME alone (needed to give its nodes with --store-addrs). Applies pending\n" +
		"migrations first. Instances serving keep serving; restart them with the\n" +
		"new store in their --store afterwards."
}

func (c *storeAddCmd) Run(r *runner) error {
	name := c.Store
	if strings.Contains(name, "=") {
		e, err := parseStoreEntry(name)
		var ref refusal
		if errors.As(err, &ref) {
			return fmt.Errorf("%w: store add %s: %s", errUsage, ref.shown, ref.why)
		}
		c.Stores, name = append(c.Stores, name), e.Name
	}
	cfg, err := c.storeConfig(r.p, "store add")
	if err != nil {
		return err
	}
	i := index(cfg.Set, name)
	if i < 0 {
		return fmt.Errorf("%w: store add %s: give the store as NAME=DSN, or as one more --store %s=DSN", errUsage, printable(name), printable(name))
	}
	o := openStores(r.ctx, cfg, false)
	defer o.Close()
	if err := o.Err(); err != nil {
		return err
	}
	if err := o.migrate(r.ctx, r.stderr, false, false); err != nil {
		return err
	}
	next, copied, err := storeset.Add(r.ctx, o.Named(nil), name)
	where := o.Entries[i].Where(o.Stores[i])
	for _, t := range copied {
		fmt.Fprintf(r.stderr, "created %s in %s: step %d\n", printable(t.Name), where, t.Step)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(r.stdout, "added %s\n%s", name, next.Describe())
	return nil
}

// storeRetireCmd is `leaf store retire`.
type storeRetireCmd struct {
	Name       string `arg:"" name:"name" help:"the store retired"`
	Force      bool   `help:"retire the store even though it does not answer; it must then never be given to an instance again"`
	storeFlags `embed:""`
}

func (storeRetireCmd) Help() string {
	return "Takes the store NAME out of the set given with --store (every store of it,\n" +
		"NAME too). Every store must answer; with --force NAME may not, and must then\n" +
		"never be given to an instance again. Applies pending migrations first."
}

func (c *storeRetireCmd) Run(r *runner) error {
	cfg, err := c.storeConfig(r.p, "store retire")
	if err != nil {
		return err
	}
	name := c.Name
	i := index(cfg.Set, name)
	if i < 0 {
		return fmt.Errorf("%w: store retire %s: no --store is named so; give every store of the set, this one too", errUsage, printable(name))
	}
	o := openStores(r.ctx, cfg, false)
	defer o.Close()
	for j, err := range o.Errs {
		switch {
		case err == nil || c.Force && j == i:
		case j == i:
			return fmt.Errorf("%w (with --force it is retired all the same, and must never be given to an instance again)", err)
		default:
			return err
		}
	}
	if err := o.migrate(r.ctx, r.stderr, false, false); err != nil {
		return err
	}
	next, err := storeset.Retire(r.ctx, o.Named(nil), name, c.Force)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.stdout, "retired %s\n%s", name, next.Describe())
	if o.Errs[i] != nil {
		fmt.Fprintf(r.stderr, "store %q did not answer and keeps its old record: never give it to an instance again\n", name)
	}
	return nil
}
