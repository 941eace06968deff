package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"
)

// command finds the command args select: its words (tag add), and the
// rest of args. A command made of subcommands with none named, or one it
// does not have, is refused with its usage on stderr; -h there prints it.
func (p *parser) command(args []string) (words, rest []string, err error) {
	node := p.k.Model.Node
	for len(args) > 0 {
		child := childNamed(node, args[0])
		if child == nil {
			break
		}
		node, words, args = child, append(words, args[0]), args[1:]
	}
	if len(node.Children) == 0 {
		return words, args, nil
	}
	names := make([]string, 0, len(node.Children))
	for _, c := range node.Children {
		names = append(names, c.Name)
	}
	var what string
	switch {
	case len(args) > 0 && isHelp(args[0]):
		return words, nil, errHelp
	case node.Parent == nil && len(args) == 0:
		what = "no command"
	case node.Parent == nil:
		what = "unknown command " + quote(args[0])
	case len(args) == 0:
		last := len(names) - 1
		what = fmt.Sprintf("%s needs a subcommand: %s or %s", node.Name, strings.Join(names[:last], ", "), names[last])
	default:
		what = fmt.Sprintf("unknown %s subcommand %s (%s)", node.Name, quote(args[0]), strings.Join(names, ", "))
	}
	p.help(words, p.k.Stderr)
	return nil, nil, fmt.Errorf("%w: %s", errUsage, what)
}

func childNamed(node *kong.Node, name string) *kong.Node {
	for _, c := range node.Children {
		if c.Name == name && c.Type == kong.CommandNode {
			return c
		}
	}
	return nil
}

func isHelp(arg string) bool {
	switch arg {
	case "-h", "--help", "-help", "help":
		return true
	}
	return false
}

// help writes the usage of the command words name to w.
func (p *parser) help(words []string, w io.Writer) {
	ctx, err := kong.Trace(p.k, words)
	if err != nil {
		return
	}
	p.k.Stdout = w
	_ = ctx.PrintUsage(false)
}

// checkArgs reads the arguments of the command words name, before kong
// does, for what kong reads otherwise than a person expects or refuses
// in other words: a flag with one dash (-step 5) is one with two; -h
// anywhere asks for the help, even after a value refused; a true/false
// flag followed by true or false (--segment false), a flag without its
// value or of a bad syntax, an unknown flag, and arguments beyond those
// the command takes are refused. It returns args as kong is to read
// them. After "--" everything is an argument.
func (p *parser) checkArgs(words, args []string) ([]string, error) {
	ctx, err := kong.Trace(p.k, words)
	if err != nil {
		return nil, err
	}
	node := ctx.Selected()
	flags := map[string]*kong.Flag{}
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			flags[f.Name] = f
		}
	}
	out := make([]string, 0, len(args))
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			out = append(out, args[i:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			out = append(out, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		f := flags[name]
		switch {
		case name == "" || name[0] == '-':
			return nil, fmt.Errorf("%w: bad flag syntax %s", errUsage, quote(arg))
		case name == "h" || name == "help":
			return nil, errHelp
		case f == nil:
			return nil, fmt.Errorf("%w: unknown flag %s", errUsage, printable("--"+name))
		case hasValue:
			out = append(out, "--"+name+"="+value)
		case f.IsBool():
			if i+1 < len(args) {
				if _, err := strconv.ParseBool(args[i+1]); err == nil {
					return nil, fmt.Errorf("%w: --%s %s: a true/false flag takes its value after '=': --%s=%s", errUsage, name, args[i+1], name, args[i+1])
				}
			}
			out = append(out, "--"+name)
		case i+1 == len(args):
			return nil, fmt.Errorf("%w: --%s needs a value", errUsage, name)
		default:
			out = append(out, "--"+name, args[i+1])
			i++
		}
	}
	return out, arguments(strings.Join(words, " "), node, positional)
}

// arguments checks that a command is given the arguments it takes: none,
// or one.
func arguments(command string, node *kong.Node, given []string) error {
	switch {
	case len(node.Positional) == 0 && len(given) > 0:
		return fmt.Errorf("%w: %s takes no arguments, got %s", errUsage, command, quoteAll(given))
	case len(node.Positional) == 1 && len(given) != 1:
		msg := fmt.Sprintf("%s takes one %s, got %d arguments", command, strings.ToUpper(node.Positional[0].Name), len(given))
		if len(given) > 0 {
			msg += ": " + quoteAll(given)
		}
		return fmt.Errorf("%w: %s", errUsage, msg)
	}
	return nil
}
