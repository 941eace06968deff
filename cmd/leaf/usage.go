package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

const usage = `leaf: unique, time-ordered ids over HTTP

Usage:
  leaf serve    [flags]   run the service (migrates first unless --migrate=false)
  leaf migrate  [flags]   apply pending migrations and exit
  leaf tag add NAME [--step N] [--max-id M] [--description D] [--format F --reset R --time-zone Z | --opaque 63|53] [flags]
                          create a tag
  leaf tag list [flags]   list the tags
  leaf sequence add SPACE [--step N] [--sections N] [flags]
                          create a space of per-key sequences
  leaf sequence list [flags]
                          list the sequence spaces
  leaf store init|show --store NAME=DSN ...
                          make a set of several stores, or show it
  leaf store add NAME=DSN --store NAME=DSN ...
                          add a store to the set
  leaf store retire NAME [--force] --store NAME=DSN ...
                          take a store out of the set
  leaf version            print the version
  leaf help [COMMAND]     this text, or a command's flags

Flags may come before or after the arguments. Run 'leaf COMMAND -h' for a
command's flags.
`

const tagUsage = `Usage:
  leaf tag add NAME [flags]   create a tag
  leaf tag list [flags]       list the tags

Run 'leaf tag add -h' or 'leaf tag list -h' for their flags.
`

const storeUsage = `Usage:
  leaf store init --store NAME=DSN ...            make the stores one set
  leaf store show --store NAME=DSN ...            show the set and each store
  leaf store add NAME=DSN --store NAME=DSN ...    add a store to the set
  leaf store retire NAME --store NAME=DSN ...     take a store out of the set

Each is given every store of the set with --store (or LEAF_STORES), as
leaf serve is. Run 'leaf store init -h' and the like for their flags.
`

// synopses are the first lines of each command's -h.
var synopses = map[string]string{
	"leaf serve":         "Usage: leaf serve [flags]\n\nRuns the service; applies pending migrations first unless --migrate=false.\nEvery flag has an environment variable, shown with it; a flag wins over its variable.",
	"leaf migrate":       "Usage: leaf migrate [flags]\n\nApplies the pending migrations to the store, or to each store of --store,\nsays which, and exits.",
	"leaf tag add":       "Usage: leaf tag add NAME [flags]\n\nCreates the tag NAME in the store, or in every store of --store (applying\npending migrations first).\nFlags may come before or after NAME; put -- before a NAME that begins with '-'.",
	"leaf tag list":      "Usage: leaf tag list [flags]\n\nLists the tags of the store, or of every store of --store that answers, each\nonce, with max_id, step, last update and description.\nControl characters in names and descriptions are shown escaped (\\x1b, \\u202e, \\\\).",
	"leaf sequence add":  "Usage: leaf sequence add SPACE [flags]\n\nCreates the space of per-key sequences SPACE in the store (applying pending\nmigrations first), with its sections. The section count never changes.",
	"leaf sequence list": "Usage: leaf sequence list [flags]\n\nLists the sequence spaces of the store with their step and section count.",
	"leaf store init":    "Usage: leaf store init --store NAME=DSN --store NAME=DSN ... [flags]\n\nMakes the stores given one set, version 1, after applying pending migrations\nto each; the order of --store is the order of their classes. Every store\nmust answer and belong to no set. Prints the set.",
	"leaf store show":    "Usage: leaf store show --store NAME=DSN ... [flags]\n\nPrints the newest set the stores record, each store's version and state,\nand the stores that did not answer. Only reads: applies no migration and\ncreates no SQLite file.",
	"leaf store add":     "Usage: leaf store add NAME=DSN --store NAME=DSN ... [flags]\n\nAdds the store NAME to the set given with --store (every store of it), as\nthe last class; its DSN comes as NAME=DSN, or as one more --store NAME=DSN\nwith NAME alone (needed to give its nodes with --store-addrs). Applies pending\nmigrations first. Instances serving keep serving; restart them with the\nnew store in their --store afterwards.",
	"leaf store retire":  "Usage: leaf store retire NAME [--force] --store NAME=DSN ... [flags]\n\nTakes the store NAME out of the set given with --store (every store of it,\nNAME too). Every store must answer; with --force NAME may not, and must then\nnever be given to an instance again. Applies pending migrations first.",
}

// printUsage writes the synopsis of fs's command and its flags.
func printUsage(fs *flag.FlagSet) {
	w := fs.Output()
	if s, ok := synopses[fs.Name()]; ok {
		fmt.Fprintf(w, "%s\n\nFlags:\n", s)
	} else {
		fmt.Fprintf(w, "Usage of %s:\n", fs.Name())
	}
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		if arg == "value" { // a flag.Value of this package, unnamed in its usage
			arg = argName(f)
		}
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "0" && d != "0s" && d != "false" {
			if isText(f) {
				d = strconv.Quote(d)
			}
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

// argName names the argument of f by the type of value it holds, as
// flag.UnquoteUsage names those of the flag package's own values.
func argName(f *flag.Flag) string {
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "duration"
		case int64:
			return "int"
		}
	}
	return "value"
}

// isText reports whether f holds text, whose default is shown quoted:
// every flag but those holding a number, a duration or true/false, which
// say so with flag.Getter.
func isText(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return true
	}
	switch g.Get().(type) {
	case bool, int, int64, uint, uint64, float64, time.Duration:
		return false
	}
	return true
}
