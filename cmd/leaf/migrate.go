package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/leafid/leaf/migrations"
	"github.com/leafid/leaf/store"
)

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sf, rest, err := commandLine("migrate", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: migrate takes no arguments, got %q", errUsage, rest)
	}
	// Every store is migrated as far as it can be: one that does not open
	// or fails leaves the others of a set migrated.
	var errs []error
	for _, e := range sf.config().Entries() {
		st, err := e.Open(ctx, store.Options{Timeout: sf.storeTimeout})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		where := e.Where(st)
		applied, err := st.Migrate(ctx)
		st.Close()
		printMigrations(stdout, where, applied)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		case len(applied) == 0:
			fmt.Fprintf(stdout, "no pending migration: %s is up to date\n", where)
		}
	}
	return errors.Join(errs...)
}

// printMigrations writes what Store.Migrate applied to where.
func printMigrations(w io.Writer, where string, applied []migrations.Applied) {
	for _, m := range applied {
		fmt.Fprintf(w, "applied %s (version %d) to %s\n", m.Name, m.Version, where)
	}
}
