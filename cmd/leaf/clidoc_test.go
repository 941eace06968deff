package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

// cliDoc is the page of the command line.
const cliDoc = "../../docs/cli.md"

// TestCLIDocIsTheHelp holds docs/cli.md to the command line kong reads
// and prints its help from: the usage it shows is `leaf -h` as printed;
// its command table has a row for each command and none other; its flag
// table a row for each flag of serve and none other, with the flag's
// variable and its default; and every flag of the other commands is
// named on the page.
func TestCLIDocIsTheHelp(t *testing.T) {
	b, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	help, _, err := runSplit(t, env{}, "-h")
	if err != errHelp {
		t.Fatal(err)
	}
	if !strings.Contains(doc, "```\n$ leaf -h\n"+help+"```\n") {
		t.Errorf("%s does not show leaf -h as it prints:\n%s", cliDoc, help)
	}
	p, err := newParser(env{}.get, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	commands := map[string]bool{}
	for _, row := range regexp.MustCompile("(?m)^\\| `leaf ([^`]*)`").FindAllStringSubmatch(doc, -1) {
		var words []string
		for _, w := range strings.Fields(row[1]) {
			if strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
				break
			}
			words = append(words, w)
		}
		commands[strings.Join(words, " ")] = true
	}
	serve := map[string]*kong.Flag{}
	_ = kong.Visit(p.k.Model.Node, func(v kong.Visitable, next kong.Next) error {
		if n, ok := v.(*kong.Node); ok && n.Type == kong.CommandNode && len(n.Children) == 0 {
			name := strings.TrimPrefix(n.FullPath(), "leaf ")
			if !commands[name] {
				t.Errorf("%s's command table has no row of leaf %s", cliDoc, name)
			}
			delete(commands, name)
			for _, f := range n.Flags {
				if name == "serve" {
					serve[f.Name] = f
				} else if !strings.Contains(doc, "--"+f.Name) {
					t.Errorf("%s does not name leaf %s --%s", cliDoc, name, f.Name)
				}
			}
		}
		return next(nil)
	})
	for name := range commands {
		t.Errorf("%s has a row of leaf %s, which is no command", cliDoc, name)
	}
	checkFlagTable(t, doc, serve)
}

// checkFlagTable checks the rows of the flag table against the flags of
// serve.
func checkFlagTable(t *testing.T, doc string, flags map[string]*kong.Flag) {
	rows := regexp.MustCompile("(?m)^\\| `--([a-z-]+)` \\| `([A-Z_]+)` \\| ([^|]+) \\|").FindAllStringSubmatch(doc, -1)
	for _, row := range rows {
		f, ok := flags[row[1]]
		if !ok {
			t.Errorf("%s's flag table has a row of --%s, which serve does not take", cliDoc, row[1])
			continue
		}
		delete(flags, row[1])
		if v := f.Tag.Get("var"); row[2] != v {
			t.Errorf("--%s: the table says %s, the flag reads %s", row[1], row[2], v)
		}
		if shown := strings.TrimSpace(row[3]); !sameDefault(shown, f.Default) {
			t.Errorf("--%s: the table's default is %s, the flag's %q", row[1], shown, f.Default)
		}
	}
	for name := range flags {
		t.Errorf("%s's flag table has no row of --%s", cliDoc, name)
	}
}

// sameDefault reports whether the table's default cell says def: the
// value, in backquotes or not, with a duration in any of its spellings;
// an empty default is said in words.
func sameDefault(cell, def string) bool {
	value, _, _ := strings.Cut(strings.Trim(cell, "`"), "`")
	switch {
	case def == "" || def == "false" && value == "false":
		return !strings.HasPrefix(cell, "`") || value == "false"
	case value == def:
		return true
	}
	a, err1 := time.ParseDuration(value)
	b, err2 := time.ParseDuration(def)
	return err1 == nil && err2 == nil && a == b
}
