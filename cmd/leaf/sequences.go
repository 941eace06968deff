package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/store"
)

const sequenceUsage = `Usage:
  leaf sequence add SPACE [flags]   create a sequence space
  leaf sequence list [flags]        list the sequence spaces

Run 'leaf sequence add -h' or 'leaf sequence list -h' for their flags.
`

func sequenceAdd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var ns service.NewSpace
	sf, rest, err := commandLine("sequence add", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.Var(givenInt{&ns.Step, "a whole number"}, "step", fmt.Sprintf("how far a section's max_seq is raised at a time (`N` in %d..%d; default %d)", sequence.MinStep, sequence.MaxStep, sequence.DefaultStep))
		fs.Var(givenInt{&ns.Sections, "a whole number"}, "sections", fmt.Sprintf("number of sections, fixed for good (`N` in 1..%d; default %d)", sequence.MaxSections, sequence.DefaultSections))
	})
	if err != nil {
		return err
	}
	switch {
	case len(rest) == 0:
		return fmt.Errorf("%w: sequence add SPACE: the space is missing", errUsage)
	case len(rest) > 1:
		return fmt.Errorf("%w: sequence add takes one SPACE, got %d arguments: %s", errUsage, len(rest), quoteAll(rest))
	}
	ns.Name = rest[0]
	// The rule of the admin API, checked before the store is opened: a bad
	// command line creates no database file and applies no migration.
	if _, err := ns.Space(); err != nil {
		return fmt.Errorf("%w: space %s: %w", errUsage, quote(ns.Name), ruleError(err))
	}
	st, where, done, err := sequenceStore(ctx, sf, stderr, true)
	if err != nil {
		return err
	}
	defer done()
	created, err := service.New(service.Config{Spaces: st}).CreateSpace(ctx, ns)
	switch {
	case errors.Is(err, sequence.ErrSpaceExists):
		if old, rerr := st.Space(ctx, ns.Name); rerr == nil {
			return fmt.Errorf("%s: space %s exists with step %d and %d sections; its section count never changes", where, printable(ns.Name), old.Step, old.Sections)
		}
		return fmt.Errorf("%s: %w", where, err)
	case err != nil:
		return fmt.Errorf("%s: %w", where, err)
	}
	fmt.Fprintf(stdout, "created sequence space %s in %s: step %d, %d sections\n", printable(created.Name), where, created.Step, created.Sections)
	return nil
}

func sequenceList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sf, rest, err := commandLine("sequence list", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: sequence list takes no arguments, got %s", errUsage, quoteAll(rest))
	}
	st, where, done, err := sequenceStore(ctx, sf, stderr, false)
	if err != nil {
		return err
	}
	defer done()
	spaces, err := st.Spaces(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s  %12s  %8s\n", "SPACE", "STEP", "SECTIONS")
	for _, sp := range spaces {
		fmt.Fprintf(&b, "%-24s  %12d  %8d\n", printable(sp.Name), sp.Step, sp.Sections)
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}

// sequenceStore opens the store where the sequences live: the store, or
// the home store of the set of --store; migrated first when migrate is
// set, else only read (no file made, no migration). done closes it.
func sequenceStore(ctx context.Context, sf *storeFlags, stderr io.Writer, migrate bool) (st *store.Store, where string, done func(), err error) {
	o := openStores(ctx, sf, !migrate)
	if migrate {
		if err := o.migrate(ctx, stderr); err != nil {
			o.close()
			return nil, "", nil, err
		}
	}
	set, err := o.openSet(ctx)
	if err != nil {
		o.close()
		return nil, "", nil, err
	}
	if st, where, err = o.home(set); err != nil {
		set.Close()
		o.close()
		return nil, "", nil, err
	}
	return st, where, func() { set.Close(); o.close() }, nil
}
