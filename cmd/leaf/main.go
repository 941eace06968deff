// Command leaf serves unique, time-ordered ids over HTTP: segment mode
// (ranges taken from a leaf_alloc table, after Meituan's Leaf) and snowflake
// mode (64-bit ids with worker ids leased from the same database).
//
// Usage:
//
//	leaf serve    [flags]   run the service
//	leaf migrate  [flags]   apply pending migrations and exit
//	leaf tag add NAME [--step N] [--max-id M] [--description D]
//	leaf tag list [flags]
//	leaf version
//
// Every flag has an environment variable (LEAF_ plus the flag's name in
// capitals); a flag on the command line wins over its variable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// errUsage marks an error in the command line: exit status 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "leaf:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

const usage = `leaf: unique, time-ordered ids over HTTP

Usage:
  leaf serve    [flags]   run the service (migrates first unless --migrate=false)
  leaf migrate  [flags]   apply pending migrations and exit
  leaf tag add NAME [--step N] [--max-id M] [--description D] [flags]
  leaf tag list [flags]
  leaf version

Run 'leaf COMMAND -h' for a command's flags.
`

// run executes one command line. getenv supplies the environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: no command", errUsage)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stderr)
	case "migrate":
		return migrate(ctx, rest, getenv, stdout, stderr)
	case "tag":
		if len(rest) == 0 {
			return fmt.Errorf("%w: tag needs a subcommand: add or list", errUsage)
		}
		switch rest[0] {
		case "add":
			return tagAdd(ctx, rest[1:], getenv, stdout, stderr)
		case "list":
			return tagList(ctx, rest[1:], getenv, stdout, stderr)
		}
		return fmt.Errorf("%w: unknown tag subcommand %q (add, list)", errUsage, rest[0])
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "leaf", version)
		return nil
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}
