// Command leaf serves unique, time-ordered ids over HTTP: segment mode
// (ranges taken from a leaf_alloc table, after Meituan's Leaf) and snowflake
// mode (64-bit ids with worker ids leased from the same database).
//
// Usage:
//
//	leaf serve    [flags]   run the service
//	leaf migrate  [flags]   apply pending migrations and exit
//	leaf tag add NAME [--step N] [--max-id M] [--description D] [flags]
//	leaf tag list [flags]
//	leaf sequence add SPACE [--step N] [--sections N] [flags]
//	leaf sequence list [flags]
//	leaf store init|show [flags]
//	leaf store add NAME=DSN [flags]
//	leaf store retire NAME [--force] [flags]
//	leaf version
//	leaf help [COMMAND]
//
// Flags may come before or after the arguments. Every flag of serve, and
// the store flags of the other commands, has an environment variable
// (LEAF_ plus the flag's name in capitals); a flag on the command line wins
// over its variable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/leafid/leaf/app"
)

// version is the project's version (the repository's VERSION file), set at
// build time with -ldflags "-X main.version=..." by make build, make run
// and the Dockerfile; "dev" in a build without it.
var version = "dev"

// errUsage marks an error in the command line: exit status 2.
var errUsage = app.ErrUsage

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr and returns the exit status: 0 for none
// or a help asked for, 2 for a usage error, 1 for any other failure.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "leaf:", err)
	if !errors.Is(err, errUsage) {
		return 1
	}
	var h helpHint
	if errors.As(err, &h) {
		fmt.Fprintf(stderr, "Run '%s -h' for its usage.\n", h.command)
	}
	return 2
}

// helpHint is a usage error of a command, whose -h tells more.
type helpHint struct {
	error
	command string
}

func (h helpHint) Unwrap() error { return h.error }

// run executes one command line. getenv supplies the environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: no command", errUsage)
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, rest, getenv, stderr)
	case "migrate":
		err = migrate(ctx, rest, getenv, stdout, stderr)
	case "tag", "sequence", "store":
		if cmd, err = groups[cmd].run(ctx, cmd, rest, getenv, stdout, stderr); cmd == "" {
			return err
		}
	case "version", "--version", "-version":
		if len(rest) > 0 {
			return fmt.Errorf("%w: version takes no arguments, got %s", errUsage, quoteAll(rest))
		}
		fmt.Fprintln(stdout, "leaf", version)
		return nil
	case "help", "-h", "--help", "-help":
		switch {
		case len(rest) == 0:
			fmt.Fprint(stdout, usage)
			return nil
		case rest[0] == "help" || rest[0] == "version":
			return run(ctx, rest[:1], getenv, stdout, stderr)
		}
		// leaf help tag add is leaf tag add -h; leaf help tag, leaf tag -h.
		return run(ctx, append(rest[:len(rest):len(rest)], "-h"), getenv, stdout, stderr)
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: unknown command %s", errUsage, quote(cmd))
	}
	if errors.Is(err, errUsage) {
		return helpHint{err, "leaf " + cmd}
	}
	return err
}

// command is a subcommand's entry: it parses args (its flags and
// arguments) and runs.
type command func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// group is a command made of subcommands: its usage, and its subcommands
// in the order the usage lists them.
type group struct {
	usage string
	subs  []subcommand
}

type subcommand struct {
	name string
	run  command
}

// groups are the commands made of subcommands.
var groups = map[string]group{
	"tag":      {tagUsage, []subcommand{{"add", tagAdd}, {"list", tagList}}},
	"sequence": {sequenceUsage, []subcommand{{"add", sequenceAdd}, {"list", sequenceList}}},
	"store": {storeUsage, []subcommand{
		{"init", storeInit}, {"show", storeShow}, {"add", storeAdd}, {"retire", storeRetire},
	}},
}

// run runs the subcommand of g, the command name, that rest begins with.
// It returns the command line a usage error names ("tag add"), or "" when
// the error is g's own (no subcommand, an unknown one; g's usage is
// printed) or the help of g was asked for.
func (g group) run(ctx context.Context, name string, rest []string, getenv func(string) string, stdout, stderr io.Writer) (string, error) {
	names := make([]string, len(g.subs))
	for i, s := range g.subs {
		names[i] = s.name
	}
	if len(rest) == 0 {
		fmt.Fprint(stderr, g.usage)
		last := len(names) - 1
		return "", fmt.Errorf("%w: %s needs a subcommand: %s or %s", errUsage, name, strings.Join(names[:last], ", "), names[last])
	}
	for _, s := range g.subs {
		if s.name == rest[0] {
			return name + " " + s.name, s.run(ctx, rest[1:], getenv, stdout, stderr)
		}
	}
	switch rest[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, g.usage)
		return "", nil
	}
	fmt.Fprint(stderr, g.usage)
	return "", fmt.Errorf("%w: unknown %s subcommand %s (%s)", errUsage, name, quote(rest[0]), strings.Join(names, ", "))
}
