package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/storeset"
)

// tagAddCmd is `leaf tag add`. Its own flags have no variables: a
// LEAF_STEP left in a shell would silently change every tag created there.
type tagAddCmd struct {
	Name        string  `arg:"" name:"name" help:"the tag's name"`
	Ordered     bool    `help:"ids strictly increasing across the fleet: served by one owner at a time, others forward (needs sequences on); fixed for good"`
	Step        int64   `default:"${default_step}" placeholder:"N" help:"ids taken per load (${tag_steps})"`
	MaxID       int64   `name:"max-id" default:"1" placeholder:"N" help:"first id to hand out (at least 1)"`
	Description string  `placeholder:"text" help:"free text, at most ${max_description} characters"`
	Format      *string `placeholder:"template" help:"template of a formatted tag's ids, as ORD-{date:20060102}-{seq:6}"`
	Reset       *string `placeholder:"period" help:"period after which a formatted tag's sequence starts again: day, month, year or never (the default)"`
	TimeZone    *string `placeholder:"zone" help:"IANA zone of a formatted tag's dates and periods (UTC by default)"`
	Opaque      *int64  `placeholder:"bits" help:"make the tag opaque, its ids scrambled over 63 or 53 bits"`
	OpaqueKey   string  `placeholder:"keys" help:"the fleet's opaque keys, as leaf serve's; read from LEAF_OPAQUE_KEY when not given"`
	storeFlags  `embed:""`
}

func (tagAddCmd) Help() string {
	return "Creates the tag NAME in the store, or in every store of --store (applying\npending migrations first).\n" +
		"Flags may come before or after NAME; put -- before a NAME that begins with '-'."
}

func (c *tagAddCmd) Run(r *runner) error {
	stores, err := c.config(r.p)
	if err != nil {
		return err
	}
	var keys [][]byte
	if c.Opaque != nil {
		if keys, err = opaqueKeys(r.p, cmp.Or(c.OpaqueKey, r.getenv("LEAF_OPAQUE_KEY"))); err != nil {
			return err
		}
	}
	t := segment.Tag{Name: c.Name, Step: c.Step, MaxID: c.MaxID, Description: c.Description}
	g := service.TagSettings{Format: c.Format, Reset: c.Reset, TimeZone: c.TimeZone, Opaque: c.Opaque}
	keyID := ""
	if len(keys) > 0 {
		keyID = bizid.KeyID(keys[0])
	}
	// The rule of the admin API, checked before the store is opened: a bad
	// command line creates no database file and applies no migration.
	_, special, err := service.NewTagSettings(t, c.Ordered, g, keyID)
	if err != nil {
		return fmt.Errorf("%w: tag %s: %w", errUsage, quote(t.Name), ruleError(err))
	}
	// An ordered, formatted or opaque tag lives in the home store of a set
	// alone; a plain one in every store.
	home := special || c.Ordered
	adm, err := openTagAdmin(r.ctx, stores, home, keys, r.stderr)
	if err != nil {
		return err
	}
	defer adm.close()
	v, err := adm.Create(r.ctx, service.NewTag{
		Name: t.Name, Step: &t.Step, MaxID: &t.MaxID, Description: t.Description,
		Ordered: c.Ordered, Settings: g,
	})
	if err := createError(adm.where, err); err != nil {
		return err
	}
	if adm.set.Several() && !home {
		return adm.createdInEvery(r.ctx, v, r.stdout)
	}
	fmt.Fprintln(r.stdout, createdLine(v, adm.where))
	return nil
}

// ruleError is an error of the tag rules as the command line says it: the
// API's message for an error of its own (without its code), the domain's
// error as it is.
func ruleError(err error) error {
	var e *service.Error
	if errors.As(err, &e) {
		return errors.New(e.Message)
	}
	return err
}

// createError is the error of creating a tag in where: a refusal in the
// admin API's words, which wraps the refusal's own error.
func createError(where string, err error) error {
	if err == nil {
		return nil
	}
	if code, msg := service.Classify(err); code != service.Internal && code != service.Unavailable {
		err = said{msg, err}
	}
	if errors.Is(err, segment.ErrInvalidTag) || errors.Is(err, segment.ErrInvalidDescription) {
		// What only the database could judge (a character its table
		// cannot store) is still a mistake in the command line.
		return fmt.Errorf("%w: %s: %w", errUsage, where, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// said is err as msg says it.
type said struct {
	msg string
	err error
}

func (s said) Error() string { return s.msg }
func (s said) Unwrap() error { return s.err }

// tagListCmd is `leaf tag list`.
type tagListCmd struct {
	storeFlags `embed:""`
}

func (tagListCmd) Help() string {
	return "Lists the tags of the store, or of every store of --store that answers, each\n" +
		"once, with max_id, step, last update and description.\n" +
		"Control characters in names and descriptions are shown escaped (\\x1b, \\u202e, \\\\)."
}

// Run lists the tags. Listing only reads: it neither creates a SQLite file
// (a typo in --sqlite-path would otherwise leave an empty database behind
// and list nothing) nor applies migrations (to the database of a Java
// Leaf, say). A set lists the tags of every store that answers, each
// once, as the first store in the order of --store has it, and says on
// stderr which stores did not answer.
func (c *tagListCmd) Run(r *runner) error {
	stores, err := c.config(r.p)
	if err != nil {
		return err
	}
	o := openStores(r.ctx, stores, true)
	defer o.Close()
	set, err := o.OpenSet(r.ctx, nil, storeset.Options{})
	if err != nil {
		return err
	}
	defer set.Close()
	tags, err := set.Tags(r.ctx)
	if err != nil {
		// On a database never migrated the store's error says to run
		// leaf migrate.
		return fmt.Errorf("%s: %w", o.where(), err)
	}
	for _, err := range o.Errs {
		if err != nil {
			fmt.Fprintf(r.stderr, "not listed: %s\n", printable(err.Error()))
		}
	}
	return writeTags(r.stdout, tags)
}

// writeTags writes tags as a table. Names and descriptions come from the
// database, where anyone (a Java Leaf's admin, a SQL console) may have put
// escape sequences: they are escaped (see printable), and the columns are
// padded by the width a terminal gives them, not by bytes.
func writeTags(w io.Writer, tags []segment.Tag) error {
	rows := [][]string{{"TAG", "MAX_ID", "STEP", "UPDATED", "DESCRIPTION"}}
	for _, t := range tags {
		rows = append(rows, []string{printable(t.Name), fmt.Sprint(t.MaxID), fmt.Sprint(t.Step),
			t.UpdateTime.UTC().Format(time.RFC3339), printable(t.Description)})
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], displayWidth(cell))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, cell := range r {
			if i > 0 {
				line.WriteString(strings.Repeat(" ", widths[i-1]-displayWidth(r[i-1])+2))
			}
			line.WriteString(cell)
		}
		// No trailing blanks (the padding before an empty description).
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
