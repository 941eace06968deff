// Command leaf serves unique, time-ordered ids over HTTP and gRPC: segment
// mode (ranges taken from a leaf_alloc table, after Meituan's Leaf),
// snowflake mode (64-bit ids with worker ids leased from the same
// database), per-key sequences and business ids. `leaf serve` runs the
// service; migrate, tag, sequence and store prepare and inspect its
// stores. `leaf -h` lists the commands, `leaf COMMAND -h` a command's flags
// (docs/cli.md). Flags may come before or after the arguments; every flag
// of serve, and the store flags of the other commands, has an environment
// variable (LEAF_ plus the flag's name in capitals), and a flag on the
// command line wins over its variable.
package main

import (
	"context"
	"errors"
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

// errHelp is the help asked for (-h): exit status 0.
var errHelp = errors.New("help asked for")

// cli is the command line: its commands, each a struct of its flags.
type cli struct {
	Serve    serveCmd   `cmd:"" help:"run the service (migrates first unless --migrate=false)"`
	Migrate  migrateCmd `cmd:"" help:"apply pending migrations and exit"`
	Tag      tagCmds    `cmd:"" help:"create and list tags"`
	Sequence seqCmds    `cmd:"" help:"create and list spaces of per-key sequences"`
	Store    storeCmds  `cmd:"" help:"make and change a set of several stores"`
	Version  versionCmd `cmd:"" help:"print the version"`
	Help     struct{}   `cmd:"" help:"this text, or a command's: leaf help COMMAND"`
}

type tagCmds struct {
	Add  tagAddCmd  `cmd:"" help:"create a tag"`
	List tagListCmd `cmd:"" help:"list the tags"`
}

type seqCmds struct {
	Add  seqAddCmd  `cmd:"" help:"create a space of per-key sequences"`
	List seqListCmd `cmd:"" help:"list the sequence spaces"`
}

type storeCmds struct {
	Init   storeInitCmd   `cmd:"" help:"make the stores given one set"`
	Show   storeShowCmd   `cmd:"" help:"show the set and each store"`
	Add    storeAddCmd    `cmd:"" help:"add a store to the set"`
	Retire storeRetireCmd `cmd:"" help:"take a store out of the set"`
}

type versionCmd struct{}

func (versionCmd) Run(r *runner) error {
	_, err := fmt.Fprintln(r.stdout, "leaf", version)
	return err
}

// runner is what a command runs with.
type runner struct {
	ctx            context.Context
	p              *parser
	getenv         func(string) string
	stdout, stderr io.Writer
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr and returns the exit status: 0 for none
// or a help asked for, 2 for a usage error, 1 for any other failure.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, errHelp) {
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
	p, err := newParser(getenv, stdout, stderr)
	if err != nil {
		return err
	}
	if len(args) > 0 && args[0] == "help" { // leaf help tag add is leaf tag add -h
		args = append(args[1:len(args):len(args)], "-h")
	}
	if len(args) > 0 && strings.TrimLeft(args[0], "-") == "version" {
		args[0] = "version"
	}
	words, rest, err := p.command(args)
	if errors.Is(err, errHelp) {
		p.help(words, stdout)
	}
	if err != nil {
		return err
	}
	err = p.run(words, rest, &runner{ctx: ctx, p: p, getenv: getenv, stdout: stdout, stderr: stderr})
	if errors.Is(err, errUsage) {
		return helpHint{err, "leaf " + strings.Join(words, " ")}
	}
	return err
}

// run reads the arguments of the command words (rest) and runs it.
func (p *parser) run(words, rest []string, r *runner) error {
	rest, err := p.checkArgs(words, rest)
	if errors.Is(err, errHelp) {
		p.help(words, r.stdout)
	}
	if err != nil {
		return err
	}
	kctx, err := p.parse(append(words, rest...))
	if err != nil {
		return err
	}
	return kctx.Run(r)
}
