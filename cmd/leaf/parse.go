package main

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
)

// The command line is read by kong: the commands and their flags are the
// structs of cli, each flag with its help, default and placeholder, and
// the flags that have an environment variable with its name (var:"…").
// kong's own env tag reads the process's environment; the variables are
// read instead by a resolver through getenv, so that a test gives its
// own, and a flag on the command line still wins. What kong leaves to its
// caller is here: one pass over the arguments before kong reads them
// (checkArgs) for what kong would refuse in other words or not at all,
// the mappers whose refusals name the flag or variable and the value,
// and the rules of single values checked once all are read (check).

// parser is kong's parser of one command line, and what it learned.
type parser struct {
	k       *kong.Kong
	root    cli
	getenv  func(string) string
	fromEnv map[string]string // a flag's name → its variable and '=', or ': ' for a list, for the flags set from one
	given   map[string]bool   // the flags set on the command line or from a variable
}

func newParser(getenv func(string) string, stdout, stderr io.Writer) (*parser, error) {
	p := &parser{getenv: getenv, fromEnv: map[string]string{}, given: map[string]bool{}}
	k, err := kong.New(&p.root,
		kong.Name("leaf"),
		kong.Description("leaf: unique, time-ordered ids over HTTP"),
		kong.Writers(stdout, stderr),
		kong.Exit(func(int) {}),
		vars(),
		kong.WithHyphenPrefixedParameters(true),
		kong.ConfigureHelp(kong.HelpOptions{Compact: false}),
		kong.ValueFormatter(helpText),
		kong.Resolvers(kong.ResolverFunc(p.resolve)),
		kong.TypeMapper(reflect.TypeFor[time.Duration](), p.mapper("want a duration such as 500ms, 2s or 1m",
			func(s string) (any, error) { return time.ParseDuration(s) })),
		kong.KindMapper(reflect.Int64, p.mapper("want a whole number", func(s string) (any, error) { return strconv.ParseInt(s, 0, 64) })),
		kong.KindMapper(reflect.Int, p.mapper("want a whole number", func(s string) (any, error) { return strconv.Atoi(s) })),
		kong.KindMapper(reflect.Float64, p.mapper("want a number", func(s string) (any, error) { return strconv.ParseFloat(s, 64) })),
		// As given, bytes that are not UTF-8 too: kong's own passes text
		// through JSON, which replaces them.
		kong.KindMapper(reflect.String, p.mapper("", func(s string) (any, error) { return s, nil })),
		kong.KindMapper(reflect.Bool, boolMapper{p.mapper("want true or false", func(s string) (any, error) { return strconv.ParseBool(s) })}),
	)
	p.k = k
	return p, err
}

// vars are the values the help and defaults of the flags name.
func vars() kong.Vars {
	return kong.Vars{
		"epoch": strconv.FormatInt(snowflake.DefaultEpochMs, 10), "layout": layoutText(snowflake.DefaultLayout()),
		"units": snowflake.UnitChoices(), "orders": snowflake.OrderChoices(),
		"snowflake_lease": snowflake.DefaultLeaseTTL.String(), "snowflake_lease_bounds": fmt.Sprintf("%v..%v", minSnowflakeLease, maxSnowflakeLease),
		"tag_refresh": segment.DefaultRefreshInterval.String(), "ride_through": segment.DefaultRideThrough.String(),
		"failover_jump": strconv.Itoa(segment.DefaultFailoverJump), "max_named_tags": strconv.Itoa(metrics.MaxNamedTags), "top_tags": strconv.Itoa(metrics.TopTags),
		"min_key_len": strconv.Itoa(bizid.MinKeyLen), "period_grace": bizid.DefaultGrace.String(),
		"sequence_lease": sequence.DefaultLease.String(), "sequence_keys": strconv.Itoa(sequence.DefaultMaxKeys),
		"forward_timeout": service.DefaultForwardTimeout.String(), "capped_share": strconv.FormatFloat(service.DefaultCappedShare, 'g', -1, 64),
		"write_timeout": app.DefaultWriteTimeout.String(), "max_conns": strconv.Itoa(app.DefaultMaxConns), "idle_timeout": app.DefaultIdleTimeout.String(),
		"max_watches": strconv.Itoa(app.DefaultMaxWatches), "range_max": strconv.Itoa(service.DefaultRangeMax), "max_range": strconv.Itoa(service.MaxRangeCount),
		"store_timeouts": store.DefaultTimeouts(),
		"tag_steps":      fmt.Sprintf("%d..%d", segment.MinStep, segment.MaxStep), "default_step": strconv.Itoa(segment.DefaultStep),
		"max_description": strconv.Itoa(segment.MaxDescriptionLen),
		"seq_steps":       fmt.Sprintf("%d..%d", sequence.MinStep, sequence.MaxStep), "seq_step": strconv.Itoa(sequence.DefaultStep),
		"max_sections": strconv.Itoa(sequence.MaxSections), "sections": strconv.Itoa(sequence.DefaultSections),
	}
}

// helpText is a flag's help with its variable and its default, text
// quoted: "listen address (env LEAF_ADDR) (default ":8080")".
func helpText(v *kong.Value) string {
	s := v.Help
	if name := v.Tag.Get("var"); name != "" {
		s += " (env " + name + ")"
	}
	if d := v.Default; v.HasDefault && d != "" && d != "0" && d != "0s" && d != "false" {
		if v.Target.Kind() == reflect.String {
			d = strconv.Quote(d)
		}
		s += " (default " + d + ")"
	}
	return s
}

// resolve gives a flag not on the command line the value of its
// variable, if it has one and it is set. A list's variable holds its
// items separated by white space.
func (p *parser) resolve(_ *kong.Context, _ *kong.Path, f *kong.Flag) (any, error) {
	name := f.Tag.Get("var")
	v := ""
	if name != "" {
		v = p.getenv(name)
	}
	if v == "" {
		return nil, nil
	}
	p.fromEnv[f.Name] = name + "="
	if f.Target.Kind() == reflect.Slice {
		p.fromEnv[f.Name] = name + ": "
		var items []any
		for _, item := range strings.Fields(v) {
			items = append(items, item)
		}
		return items, nil
	}
	return v, nil
}

// refusal is a value refused: the flag's, shown as read or quoted as
// given, and why.
type refusal struct{ flag, shown, why string }

func (r refusal) Error() string { return r.shown + ": " + r.why }

// source names where the value of flag came from, before the value: its
// variable (NAME= or, for a list, NAME: ) or the command line (--flag ).
func (p *parser) source(flag string) string {
	if s, ok := p.fromEnv[flag]; ok {
		return s
	}
	return "--" + flag + " "
}

// refused is the usage error of r.
func (p *parser) refused(r refusal) error {
	return fmt.Errorf("%w: %s%s: %s", errUsage, p.source(r.flag), r.shown, r.why)
}

// rule is what a flag's value must be, checked once every flag is read:
// shown is the value as the message shows it.
type rule struct {
	flag  string
	ok    bool
	shown any
	why   string
}

// check is the usage error of the first rule broken, if any.
func (p *parser) check(rules ...rule) error {
	for _, r := range rules {
		if !r.ok {
			return p.refused(refusal{r.flag, fmt.Sprint(r.shown), r.why})
		}
	}
	return nil
}

// mapper reads a flag's value with parse; a value it cannot read is
// refused quoted, with want ("want a whole number"), or "out of range".
func (p *parser) mapper(want string, parse func(string) (any, error)) kong.MapperFunc {
	return func(ctx *kong.DecodeContext, target reflect.Value) error {
		t, err := ctx.Scan.PopValue("value")
		if err != nil {
			return err
		}
		v, err := parse(t.String())
		switch {
		case errors.Is(err, strconv.ErrRange):
			return refusal{ctx.Value.Name, strconv.Quote(t.String()), "out of range"}
		case err != nil:
			return refusal{ctx.Value.Name, strconv.Quote(t.String()), want}
		}
		target.Set(reflect.ValueOf(v).Convert(target.Type()))
		return nil
	}
}

// boolMapper reads a true/false flag: given alone it is true, else its
// value after '=' (--migrate=false).
type boolMapper struct{ read kong.MapperFunc }

func (boolMapper) IsBool() bool { return true }

func (m boolMapper) Decode(ctx *kong.DecodeContext, target reflect.Value) error {
	if ctx.Scan.Peek().Type != kong.FlagValueToken {
		target.SetBool(true)
		return nil
	}
	return m.read(ctx, target)
}

// parse reads args (without the command's words, which select it) into
// p.root, after checkArgs.
func (p *parser) parse(args []string) (*kong.Context, error) {
	ctx, err := p.k.Parse(args)
	var r refusal
	switch {
	case errors.As(err, &r):
		return nil, p.refused(r)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	for _, path := range ctx.Path {
		if path.Flag != nil {
			p.given[path.Flag.Name] = true
		}
	}
	return ctx, nil
}
