package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

func tagAdd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	a, sf, err := parseTagAdd(args, getenv, stderr)
	if err != nil {
		return err
	}
	// The rule of the admin API, checked before the store is opened: a bad
	// command line creates no database file and applies no migration.
	_, special, err := service.NewTagSettings(a.t, a.ordered, a.g, a.keyID())
	if err != nil {
		return fmt.Errorf("%w: tag %s: %w", errUsage, quote(a.t.Name), ruleError(err))
	}
	// An ordered, formatted or opaque tag lives in the home store of a set
	// alone; a plain one in every store.
	home := special || a.ordered
	adm, err := openTagAdmin(ctx, sf, home, a.keys, stderr)
	if err != nil {
		return err
	}
	defer adm.close()
	v, err := adm.Create(ctx, service.NewTag{
		Name: a.t.Name, Step: &a.t.Step, MaxID: &a.t.MaxID, Description: a.t.Description,
		Ordered: a.ordered, Settings: a.g,
	})
	if err := createError(adm.where, err); err != nil {
		return err
	}
	if adm.set.Several() && !home {
		return adm.createdInEvery(ctx, v, stdout)
	}
	fmt.Fprintln(stdout, createdLine(v, adm.where))
	return nil
}

// tagAddArgs is what the command line of leaf tag add gives.
type tagAddArgs struct {
	t       segment.Tag
	ordered bool
	g       service.TagSettings // the settings given
	keys    [][]byte            // with --opaque, the fleet's opaque keys, the current first
}

// keyID is the fingerprint of the current opaque key, "" without one.
func (a tagAddArgs) keyID() string {
	if len(a.keys) == 0 {
		return ""
	}
	return bizid.KeyID(a.keys[0])
}

// parseTagAdd reads leaf tag add's command line: the flags, the one NAME,
// and with --opaque the fleet's current key (--opaque-key, or
// LEAF_OPAQUE_KEY).
func parseTagAdd(args []string, getenv func(string) string, stderr io.Writer) (tagAddArgs, *storeFlags, error) {
	a := tagAddArgs{t: segment.Tag{Step: segment.DefaultStep, MaxID: 1}}
	var keys opaqueKeysFlag
	sf, rest, err := commandLine("tag add", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&a.ordered, "ordered", false, "ids strictly increasing across the fleet: served by one owner at a time, others forward (needs sequences on); fixed for good")
		fs.Int64Var(&a.t.Step, "step", segment.DefaultStep, fmt.Sprintf("ids taken per load (%d..%d)", segment.MinStep, segment.MaxStep))
		fs.Int64Var(&a.t.MaxID, "max-id", 1, "first id to hand out (at least 1)")
		fs.StringVar(&a.t.Description, "description", "", fmt.Sprintf("free `text`, at most %d characters", segment.MaxDescriptionLen))
		fs.Var(givenText{&a.g.Format}, "format", "`template` of a formatted tag's ids, as ORD-{date:20060102}-{seq:6}")
		fs.Var(givenText{&a.g.Reset}, "reset", "`period` after which a formatted tag's sequence starts again: day, month, year or never (the default)")
		fs.Var(givenText{&a.g.TimeZone}, "time-zone", "IANA `zone` of a formatted tag's dates and periods (UTC by default)")
		fs.Var(givenInt{&a.g.Opaque, "a whole number of bits (63 or 53)"}, "opaque", "make the tag opaque, its ids scrambled over 63 or 53 `bits`")
		fs.Var(&keys, "opaque-key", "the fleet's opaque `keys`, as leaf serve's; read from LEAF_OPAQUE_KEY when not given")
	})
	if err != nil {
		return a, nil, err
	}
	switch {
	case len(rest) == 0:
		return a, nil, fmt.Errorf("%w: tag add NAME: the name is missing", errUsage)
	case len(rest) > 1:
		return a, nil, fmt.Errorf("%w: tag add takes one NAME, got %d arguments: %s", errUsage, len(rest), quoteAll(rest))
	}
	a.t.Name = rest[0]
	if a.g.Opaque != nil {
		if a.keys, err = opaqueKeys(&keys, getenv); err != nil {
			return a, nil, err
		}
	}
	return a, sf, nil
}

// opaqueKeys are the fleet's opaque keys, of --opaque-key or
// LEAF_OPAQUE_KEY, none when neither gives one.
func opaqueKeys(keys *opaqueKeysFlag, getenv func(string) string) ([][]byte, error) {
	if len(keys.keys) == 0 {
		if v := getenv(envName("opaque-key")); v != "" {
			if err := keys.Set(v); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", errUsage, envName("opaque-key"), err)
			}
		}
	}
	return keys.keys, nil
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

func tagList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sf, rest, err := commandLine("tag list", args, getenv, stderr, nil)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: tag list takes no arguments, got %s", errUsage, quoteAll(rest))
	}
	// Listing only reads: it neither creates a SQLite file (a typo in
	// --sqlite-path would otherwise leave an empty database behind and
	// list nothing) nor applies migrations (to the database of a Java
	// Leaf, say). A set lists the tags of every store that answers, each
	// once, as the first store in the order of --store has it, and says on
	// stderr which stores did not answer.
	o := openStores(ctx, sf, true)
	defer o.close()
	set, err := o.openSet(ctx)
	if err != nil {
		return err
	}
	defer set.Close()
	tags, err := set.Tags(ctx)
	if err != nil {
		// On a database never migrated the store's error says to run
		// leaf migrate.
		return fmt.Errorf("%s: %w", o.where(), err)
	}
	for _, err := range o.errs {
		if err != nil {
			fmt.Fprintf(stderr, "not listed: %s\n", printable(err.Error()))
		}
	}
	return writeTags(stdout, tags)
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
