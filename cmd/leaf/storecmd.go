package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/leafid/leaf/storeset"
)

// leaf store: make and change the set of stores that serve one number
// space (package storeset). Each command is given every store of the set
// with --store.

// storeCommandLine parses the command line of a leaf store command, which
// needs --store.
func storeCommandLine(name string, args []string, getenv func(string) string, stderr io.Writer, own func(*flag.FlagSet)) (*storeFlags, []string, error) {
	sf, rest, err := commandLine(name, args, getenv, stderr, own)
	if err != nil {
		return nil, nil, err
	}
	if !sf.several() {
		return nil, nil, fmt.Errorf("%w: %s needs the stores, each as --store NAME=DSN (or in LEAF_STORES)", errUsage, name)
	}
	return sf, rest, nil
}

func storeInit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sf, rest, err := storeCommandLine("store init", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: store init takes no arguments, got %s", errUsage, quoteAll(rest))
	}
	o := openStores(ctx, sf, false)
	defer o.close()
	if err := o.openError(); err != nil {
		return err
	}
	if err := o.migrate(ctx, stderr); err != nil {
		return err
	}
	set, err := storeset.Init(ctx, o.named())
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, set.Describe())
	return nil
}

// storeShow prints the newest set the stores record and where each store
// stands. It only reads: it neither migrates nor creates an SQLite file.
func storeShow(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sf, rest, err := storeCommandLine("store show", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: store show takes no arguments, got %s", errUsage, quoteAll(rest))
	}
	o := openStores(ctx, sf, true)
	defer o.close()
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
	for i, e := range o.entries {
		r := recs[i]
		switch {
		case errs[i] != nil:
			fmt.Fprintf(&b, "  %s: did not answer\n", e.Name)
			continue
		case r.State == storeset.Unjoined:
			fmt.Fprintf(&b, "  %s: belongs to no set (store id %s)\n", e.Name, r.StoreID)
		default:
			fmt.Fprintf(&b, "  %s: version %d, %s (store id %s)\n", e.Name, r.Version, r.State, r.StoreID)
		}
		answered++
	}
	if ok {
		for _, name := range set.Names() {
			if sf.stores.index(name) < 0 {
				fmt.Fprintf(&b, "  %s: in the set, not given\n", name)
			}
		}
	}
	if answered < len(o.entries) {
		b.WriteString("did not answer:\n")
		for i, e := range o.entries {
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

// storeAdd adds a store to the set: leaf store add NAME=DSN, or NAME with
// the store given as one more --store.
func storeAdd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sf, rest, err := storeCommandLine("store add", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fmt.Errorf("%w: store add takes one NAME=DSN (or a NAME given with --store), got %d arguments", errUsage, len(rest))
	}
	name := rest[0]
	if strings.Contains(name, "=") {
		if err := sf.stores.Set(name); err != nil {
			return badFlag(&flag.Flag{Value: &sf.stores}, "store add ", name, err)
		}
		name = sf.stores[len(sf.stores)-1].Name
	} else if sf.stores.index(name) < 0 {
		return fmt.Errorf("%w: store add %s: give the store as NAME=DSN, or as one more --store %s=DSN", errUsage, printable(name), printable(name))
	}
	o := openStores(ctx, sf, false)
	defer o.close()
	if err := o.openError(); err != nil {
		return err
	}
	if err := o.migrate(ctx, stderr); err != nil {
		return err
	}
	next, copied, err := storeset.Add(ctx, o.named(), name)
	i := sf.stores.index(name)
	where := sf.stores[i].Where(o.stores[i])
	for _, t := range copied {
		fmt.Fprintf(stderr, "created %s in %s: step %d\n", printable(t.Name), where, t.Step)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added %s\n%s", name, next.Describe())
	return nil
}

// storeRetire takes a store out of the set.
func storeRetire(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var force bool
	sf, rest, err := storeCommandLine("store retire", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&force, "force", false, "retire the store even though it does not answer; it must then never be given to an instance again")
	})
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fmt.Errorf("%w: store retire takes one NAME, got %d arguments", errUsage, len(rest))
	}
	name := rest[0]
	if sf.stores.index(name) < 0 {
		return fmt.Errorf("%w: store retire %s: no --store is named so; give every store of the set, this one too", errUsage, printable(name))
	}
	o := openStores(ctx, sf, false)
	defer o.close()
	for i, err := range o.errs {
		if err != nil && !(force && o.entries[i].Name == name) {
			if o.entries[i].Name == name {
				return fmt.Errorf("%w (with --force it is retired all the same, and must never be given to an instance again)", err)
			}
			return err
		}
	}
	if err := o.migrate(ctx, stderr); err != nil {
		return err
	}
	next, err := storeset.Retire(ctx, o.named(), name, force)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "retired %s\n%s", name, next.Describe())
	if i := sf.stores.index(name); o.errs[i] != nil {
		fmt.Fprintf(stderr, "store %q did not answer and keeps its old record: never give it to an instance again\n", name)
	}
	return nil
}
