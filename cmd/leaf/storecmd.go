package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
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
	if err := o.allOpen(); err != nil {
		return err
	}
	if err := o.migrate(ctx, stderr); err != nil {
		return err
	}
	if err := o.onlyHomeHasOne(ctx); err != nil {
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
	if err := o.allOpen(); err != nil {
		return err
	}
	if err := o.migrate(ctx, stderr); err != nil {
		return err
	}
	set, err := currentSet(ctx, o, name)
	if err != nil {
		return err
	}
	if _, member := set.Member(name); member && settled(ctx, o, set) {
		return fmt.Errorf("store %q is in the set already (version %d)", name, set.Version)
	}
	if _, member := set.Member(name); !member {
		if err := o.holdsNone(ctx, name); err != nil {
			return err
		}
	}
	if err := copyTags(ctx, o, set, name, stderr); err != nil {
		return err
	}
	names := set.Names()
	if !slices.Contains(names, name) {
		names = append(names, name)
	}
	next, err := storeset.Change(ctx, o.named(), names, false)
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
	set, err := currentSet(ctx, o, "")
	if err != nil {
		return err
	}
	if _, member := set.Member(name); !member {
		return fmt.Errorf("store %q is not in the set (version %d: %s)", name, set.Version, strings.Join(set.Names(), ", "))
	}
	names := slices.DeleteFunc(set.Names(), func(n string) bool { return n == name })
	if len(names) == 0 {
		return fmt.Errorf("store %q is the last of the set: a set keeps at least one store", name)
	}
	next, err := storeset.Change(ctx, o.named(), names, force)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "retired %s\n%s", name, next.Describe())
	if i := sf.stores.index(name); o.errs[i] != nil {
		fmt.Fprintf(stderr, "store %q did not answer and keeps its old record: never give it to an instance again\n", name)
	}
	return nil
}

// currentSet is the set the stores record now, checked against the
// configuration: every --store is a member, but adding, the store added.
// A store given that is not in the set would be marked retired by the
// change, whatever set it belongs to.
func currentSet(ctx context.Context, o *openedStores, adding string) (storeset.Set, error) {
	recs, errs := o.records(ctx)
	set, ok, err := storeset.Newest(recs, errs, true)
	if err != nil {
		return storeset.Set{}, err
	}
	if !ok {
		return storeset.Set{}, fmt.Errorf("%w: no store given belongs to a set: make one with `leaf store init`", storeset.ErrMismatch)
	}
	for _, e := range o.entries {
		if _, member := set.Member(e.Name); !member && e.Name != adding {
			return storeset.Set{}, fmt.Errorf("%w: store %q is given but not in the set (version %d: %s); leave it out",
				storeset.ErrMismatch, e.Name, set.Version, strings.Join(set.Names(), ", "))
		}
	}
	return set, nil
}

// settled reports whether every member of set that answers records it,
// active: no change of the set is left half way.
func settled(ctx context.Context, o *openedStores, set storeset.Set) bool {
	recs, errs := o.records(ctx)
	for i, e := range o.entries {
		if _, member := set.Member(e.Name); member && (errs[i] != nil || recs[i].Version != set.Version || recs[i].State != storeset.Active) {
			return false
		}
	}
	return true
}

// copyTags creates in the store added the plain tags the members of set
// have, with their steps and descriptions, so that it serves them once the
// change gives it its class; it says on w which it created. A row's
// max_id is copied too, though the class's floor lies above it anyway.
func copyTags(ctx context.Context, o *openedStores, set storeset.Set, added string, w io.Writer) error {
	var (
		to   *store.Store
		have = map[string]bool{}
		rows []segment.Tag
	)
	for i, e := range o.entries {
		if e.Name == added {
			to = o.stores[i]
		}
	}
	tags, err := to.Tags(ctx)
	if err != nil {
		return fmt.Errorf("store %q: %w", added, err)
	}
	for _, t := range tags {
		have[t.Name] = true
	}
	for _, m := range set.Members {
		i := o.entries.index(m.Name)
		tags, err := o.stores[i].Tags(ctx)
		if err != nil {
			return fmt.Errorf("store %q: %w", m.Name, err)
		}
		names := make([]string, len(tags))
		for k, t := range tags {
			names[k] = t.Name
		}
		kinds, err := o.stores[i].Classify(ctx, names)
		if err != nil {
			return fmt.Errorf("store %q: %w", m.Name, err)
		}
		for _, t := range tags {
			if kinds[t.Name] != segment.Plain {
				continue // it lives in the home store alone (storeset's home.go)
			}
			if !have[t.Name] {
				have[t.Name] = true
				rows = append(rows, t)
			}
		}
	}
	where := o.entries[o.entries.index(added)].Where(to)
	for _, t := range rows {
		created, err := to.CreateTag(ctx, segment.Tag{Name: t.Name, MaxID: t.MaxID, Step: t.Step, Description: t.Description})
		if err != nil && !errors.Is(err, segment.ErrTagExists) {
			return fmt.Errorf("copy tag %s to %s: %w", printable(t.Name), where, err)
		}
		if err == nil {
			fmt.Fprintf(w, "created %s in %s: step %d\n", printable(created.Name), where, created.Step)
		}
	}
	return nil
}

// onlyHomeHasOne refuses to make a set in which a store other than the
// first, the home, holds what lives in the home store alone (holdsNone).
func (o *openedStores) onlyHomeHasOne(ctx context.Context) error {
	for _, e := range o.entries[1:] {
		if err := o.holdsNone(ctx, e.Name); err != nil {
			return err
		}
	}
	return nil
}

// holdsNone refuses a store, not the home of its set, that holds what
// lives in the home store alone: sequence spaces, ordered tags, formatted
// and opaque tags. Their rows would be numbered in that store's class, and
// their settings missed.
func (o *openedStores) holdsNone(ctx context.Context, name string) error {
	n, err := o.stores[o.entries.index(name)].HomeRows(ctx)
	if err != nil {
		return fmt.Errorf("store %q: %w", name, err)
	}
	if n > 0 {
		return fmt.Errorf("%w: store %q holds sequence spaces, ordered tags or formatted or opaque tags (%d), which live in the home store of a set alone: only the home (the first store of leaf store init) may hold them",
			storeset.ErrMismatch, name, n)
	}
	return nil
}
