package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// envName is the environment variable of a flag: LEAF_ and the flag's name
// in capitals, dashes as underscores.
func envName(flagName string) string {
	return "LEAF_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse parses args into fs after setting every flag from its environment
// variable, so that a flag on the command line wins over the variable.
// -h prints the flags and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) error {
	return parseFlags(fs, args, getenv, stderr, func(string) bool { return true })
}

// parseFlags is parse where only the flags for which withEnv is true read
// their environment variable.
//
// Flags and arguments may come in any order (leaf tag add NAME --step 5 as
// well as leaf tag add --step 5 NAME): the flag package alone would stop at
// the first argument and leave every flag after it unread, silently. After
// "--" everything is an argument. fs.Args() holds the arguments afterwards.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer, withEnv func(string) bool) error {
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(fs) }
	sources := map[string]string{} // flag name -> what set it, for messages

	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if !withEnv(f.Name) {
			return
		}
		name := envName(f.Name)
		f.Usage += fmt.Sprintf(" (env %s)", name)
		v := getenv(name)
		if v == "" || envErr != nil {
			return
		}
		source := name + "="
		if err := fs.Set(f.Name, v); err != nil {
			envErr = fmt.Errorf("%w: %s%q: %s", errUsage, source, v, badValue(f, v, err))
		}
		sources[f.Name] = source
	})

	var positional []string
	var argErr error
	for i := 0; i < len(args) && argErr == nil; i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
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
			argErr = fmt.Errorf("%w: bad flag syntax %q", errUsage, arg)
			break
		}
		f := fs.Lookup(name)
		if f == nil {
			if name == "h" || name == "help" {
				fs.Usage()
				return flag.ErrHelp
			}
			argErr = fmt.Errorf("%w: unknown flag %s", errUsage, printable("--"+name))
			break
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if !hasValue {
				value = "true"
				// --segment false sets --segment and leaves "false" as an
				// argument; say what was meant.
				if i+1 < len(args) {
					if _, err := strconv.ParseBool(args[i+1]); err == nil {
						argErr = fmt.Errorf("%w: --%s %s: a true/false flag takes its value after '=': --%s=%s", errUsage, name, args[i+1], name, args[i+1])
						break
					}
				}
			}
		} else if !hasValue {
			if i+1 == len(args) {
				argErr = fmt.Errorf("%w: --%s needs a value", errUsage, name)
				break
			}
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			argErr = fmt.Errorf("%w: --%s %q: %s", errUsage, name, value, badValue(f, value, err))
			break
		}
		sources[name] = "--" + name + " "
	}
	if argErr != nil {
		return argErr
	}
	if envErr != nil {
		return envErr
	}
	// Hand the arguments to fs, behind "--" so that none is read as a flag.
	if err := fs.Parse(append([]string{"--"}, positional...)); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	for _, name := range slices.Sorted(maps.Keys(flagRules)) {
		rule := flagRules[name]
		f := fs.Lookup(name)
		if f == nil || sources[name] == "" {
			continue
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			continue
		}
		if err := rule(g.Get()); err != nil {
			return fmt.Errorf("%w: %s%s: %v", errUsage, sources[name], f.Value, err)
		}
	}
	return nil
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
