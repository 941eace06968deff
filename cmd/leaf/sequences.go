package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// seqAddCmd is `leaf sequence add`.
type seqAddCmd struct {
	Space      string `arg:"" name:"space" help:"the space's name"`
	Step       *int64 `placeholder:"N" help:"how far a section's max_seq is raised at a time (${seq_steps}; default ${seq_step})"`
	Sections   *int64 `placeholder:"N" help:"number of sections, fixed for good (1..${max_sections}; default ${sections})"`
	storeFlags `embed:""`
}

func (seqAddCmd) Help() string {
	return "Creates the space of per-key sequences SPACE in the store (applying pending\n" +
		"migrations first), with its sections. The section count never changes."
}

func (c *seqAddCmd) Run(r *runner) error {
	stores, err := c.config(r.p)
	if err != nil {
		return err
	}
	ns := service.NewSpace{Name: c.Space, Step: c.Step, Sections: c.Sections}
	// The rule of the admin API, checked before the store is opened: a bad
	// command line creates no database file and applies no migration.
	if _, err := ns.Space(); err != nil {
		return fmt.Errorf("%w: space %s: %w", errUsage, quote(ns.Name), ruleError(err))
	}
	o := openStores(r.ctx, stores, false)
	defer o.Close()
	set, st, where, err := o.setAndHome(r.ctx, r.stderr, true, true)
	if err != nil {
		return err
	}
	defer set.Close()
	created, err := service.New(service.Config{Spaces: st}).CreateSpace(r.ctx, ns)
	switch {
	case errors.Is(err, sequence.ErrSpaceExists):
		if old, rerr := st.Space(r.ctx, ns.Name); rerr == nil {
			return fmt.Errorf("%s: space %s exists with step %d and %d sections; its section count never changes", where, printable(ns.Name), old.Step, old.Sections)
		}
		return fmt.Errorf("%s: %w", where, err)
	case err != nil:
		return fmt.Errorf("%s: %w", where, err)
	}
	fmt.Fprintf(r.stdout, "created sequence space %s in %s: step %d, %d sections\n", printable(created.Name), where, created.Step, created.Sections)
	return nil
}

// seqListCmd is `leaf sequence list`.
type seqListCmd struct {
	storeFlags `embed:""`
}

func (seqListCmd) Help() string {
	return "Lists the sequence spaces of the store with their step and section count."
}

func (c *seqListCmd) Run(r *runner) error {
	stores, err := c.config(r.p)
	if err != nil {
		return err
	}
	o := openStores(r.ctx, stores, true)
	defer o.Close()
	set, st, where, err := o.setAndHome(r.ctx, r.stderr, false, true)
	if err != nil {
		return err
	}
	defer set.Close()
	spaces, err := st.Spaces(r.ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s  %12s  %8s\n", "SPACE", "STEP", "SECTIONS")
	for _, sp := range spaces {
		fmt.Fprintf(&b, "%-24s  %12d  %8d\n", printable(sp.Name), sp.Step, sp.Sections)
	}
	_, err = io.WriteString(r.stdout, b.String())
	return err
}
