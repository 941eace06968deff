package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
)

// openStore parses the store flags of a one-shot command, opens the store
// and applies pending migrations; extra registers the command's own flags.
func openStore(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer, extra func(*flag.FlagSet)) (*store.Store, *flag.FlagSet, error) {
	var sf storeFlags
	fs := flag.NewFlagSet("leaf "+name, flag.ContinueOnError)
	sf.register(fs)
	if extra != nil {
		extra(fs)
	}
	if err := parse(fs, args, getenv, stderr); err != nil {
		return nil, nil, err
	}
	if err := sf.validate(); err != nil {
		return nil, nil, err
	}
	st, err := sf.open(ctx, store.Options{})
	if err != nil {
		return nil, nil, err
	}
	// Migrations only create what is missing, so every command may run
	// them: 'leaf tag add' works on a fresh database too.
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, fs, nil
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	st, fs, err := openStore(ctx, "migrate", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: migrate takes no arguments", errUsage)
	}
	fmt.Fprintf(stdout, "%s database is up to date\n", st.Dialect())
	return nil
}

func tagAdd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// The name comes first (leaf tag add NAME --step N); flag parsing stops
	// at the first non-flag, so take it out before parsing.
	var name string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	t := segment.Tag{Step: segment.DefaultStep, MaxID: 1}
	st, fs, err := openStore(ctx, "tag add", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.Int64Var(&t.Step, "step", segment.DefaultStep, "ids taken per load (1..1000000)")
		fs.Int64Var(&t.MaxID, "max-id", 1, "first id to hand out (at least 1)")
		fs.StringVar(&t.Description, "description", "", "free text")
	})
	if err != nil {
		return err
	}
	defer st.Close()
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
	}
	if name == "" {
		return fmt.Errorf("%w: tag add NAME: the name is missing", errUsage)
	}
	t.Name = name
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	created, err := st.CreateTag(ctx, t)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created %s: next id %d, step %d\n", created.Name, created.MaxID, created.Step)
	return nil
}

func tagList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	st, _, err := openStore(ctx, "tag list", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	tags, err := st.Tags(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TAG\tMAX_ID\tSTEP\tUPDATED\tDESCRIPTION")
	for _, t := range tags {
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\n", t.Name, t.MaxID, t.Step, t.UpdateTime.UTC().Format(time.RFC3339), t.Description)
	}
	return w.Flush()
}
