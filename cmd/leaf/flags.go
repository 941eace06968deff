package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The command line is read with the standard flag package. A flag whose
// value has rules of its own is registered with a flag.Value type whose Set
// checks them, so that a bad value is a usage error before anything is
// opened, not a failure halfway through a start. What involves several
// flags is checked once all are read, by the command's validate.

// envName is the environment variable of a flag: LEAF_ and the flag's name
// in capitals, dashes as underscores.
func envName(flagName string) string {
	return "LEAF_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// listFlag is a flag given once per item, as --store a=… --store b=…. Its
// environment variable holds every item, separated by white space, and is
// named in the plural: LEAF_STORES, LEAF_STORE_ADDRS.
type listFlag interface {
	flag.Value
	isList()
}

// variable is the environment variable of f: envName, in the plural for a
// listFlag.
func variable(f *flag.Flag) string {
	name := envName(f.Name)
	if _, ok := f.Value.(listFlag); ok && !strings.HasSuffix(name, "S") {
		name += "S"
	}
	return name
}

// setFromVariable sets f from the value v of its variable: once, or once
// per item of a listFlag.
func setFromVariable(fs *flag.FlagSet, f *flag.Flag, v string) error {
	name := variable(f)
	if _, ok := f.Value.(listFlag); !ok {
		if err := fs.Set(f.Name, v); err != nil {
			return badFlag(f, name+"=", v, err)
		}
		return nil
	}
	for _, item := range strings.Fields(v) {
		if err := fs.Set(f.Name, item); err != nil {
			return badFlag(f, name+": ", item, err)
		}
	}
	return nil
}

// parse parses args into fs; a flag not on the command line takes the
// value of its environment variable, if that is set, so that a flag on the
// command line wins over its variable. -h prints the flags and returns
// flag.ErrHelp. fs.Args() holds the arguments afterwards.
func parse(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) error {
	return parseFlags(fs, args, getenv, stderr, func(*flag.Flag) bool { return true })
}

// parseFlags is parse where only the flags for which withEnv is true read
// their environment variable.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer, withEnv func(*flag.Flag) bool) error {
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(fs) }
	var fromEnv []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if withEnv(f) {
			f.Usage += fmt.Sprintf(" (env %s)", variable(f))
			fromEnv = append(fromEnv, f)
		}
	})

	positional, err := setFlags(fs, args)
	if err != nil {
		return err
	}
	onCommandLine := map[*flag.Flag]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f] = true })
	for _, f := range fromEnv {
		if v := getenv(variable(f)); v != "" && !onCommandLine[f] {
			if err := setFromVariable(fs, f, v); err != nil {
				return err
			}
		}
	}

	// Hand the arguments to fs, behind "--" so that none is read as a flag.
	if err := fs.Parse(append([]string{"--"}, positional...)); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// setFlags sets the flags of args in fs and returns the other arguments.
// Flags and arguments may come in any order (leaf tag add NAME --step 5 as
// well as leaf tag add --step 5 NAME): the flag package alone would stop at
// the first argument and leave every flag after it unread, silently. After
// "--" everything is an argument. A value a flag refuses is reported once
// the rest is read, so that a -h after it still prints the help.
func setFlags(fs *flag.FlagSet, args []string) (positional []string, refused error) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(positional, args[i+1:]...), refused
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		name := strings.TrimPrefix(arg[1:], "-")
		value, hasValue := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, value, hasValue = name[:k], name[k+1:], true
		}
		if name == "" || name[0] == '-' || name[0] == '=' {
			return nil, fmt.Errorf("%w: bad flag syntax %q", errUsage, arg)
		}
		f := fs.Lookup(name)
		if f == nil {
			if name == "h" || name == "help" {
				fs.Usage()
				return nil, flag.ErrHelp
			}
			return nil, fmt.Errorf("%w: unknown flag %s", errUsage, printable("--"+name))
		}
		switch {
		case hasValue:
		case isBool(f):
			value = "true"
			// --segment false sets --segment and leaves "false" as an
			// argument; say what was meant.
			if i+1 < len(args) {
				if _, err := strconv.ParseBool(args[i+1]); err == nil {
					return nil, fmt.Errorf("%w: --%s %s: a true/false flag takes its value after '=': --%s=%s", errUsage, name, args[i+1], name, args[i+1])
				}
			}
		case i+1 == len(args):
			return nil, fmt.Errorf("%w: --%s needs a value", errUsage, name)
		default:
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil && refused == nil {
			refused = badFlag(f, "--"+name+" ", value, err)
		}
	}
	return positional, refused
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// valueError is the error of a flag.Value that read a value and refuses
// it: the value as read, and why.
type valueError struct {
	value string
	err   error
}

func (e valueError) Error() string { return e.value + ": " + e.err.Error() }

// badFlag is the usage error for value, given to f by source ("--addr " or
// "LEAF_ADDR="), which f's Set refused with err. A value refused by a rule
// is shown as read: --snowflake-epoch 0: not accepted (...). One that f's
// type cannot read is quoted as given, with what was wanted: --step "1e3":
// want a whole number.
func badFlag(f *flag.Flag, source, value string, err error) error {
	var refused valueError
	if errors.As(err, &refused) {
		return fmt.Errorf("%w: %s%s: %v", errUsage, source, refused.value, refused.err)
	}
	return fmt.Errorf("%w: %s%q: %s", errUsage, source, value, badValue(f, value, err))
}

// badValue says what is wrong with value for f, in a person's terms
// rather than the flag package's ("parse error").
func badValue(f *flag.Flag, value string, err error) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err.Error()
	}
	switch g.Get().(type) {
	case bool:
		return "want true or false"
	case time.Duration:
		return "want a duration such as 500ms, 2s or 1m"
	case int, int64:
		if _, perr := strconv.ParseInt(value, 0, 64); errors.Is(perr, strconv.ErrRange) {
			return "out of range"
		}
		return "want a whole number"
	}
	return err.Error()
}
