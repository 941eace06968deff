package main

import (
	"flag"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/leafid/leaf/store"
)

// cliDoc is the page of the command line.
const cliDoc = "../../docs/cli.md"

// TestCLIDocListsTheCommandLine: every flag of serve has its row in
// docs/cli.md's flag table, with its variable, and every command its row
// in the command table.
func TestCLIDocListsTheCommandLine(t *testing.T) {
	b, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var c serveConfig
	c.flags().VisitAll(func(f *flag.Flag) {
		if row := "| `--" + f.Name + "` | `" + variable(f) + "` |"; !strings.Contains(doc, row) {
			t.Errorf("%s's flag table has no row beginning %s", cliDoc, row)
		}
	})
	if want := "`0` (" + store.DefaultTimeouts() + ")"; !strings.Contains(doc, want) {
		t.Errorf("%s's row of --store-timeout does not say %s", cliDoc, want)
	}
	for _, name := range slices.Sorted(maps.Keys(synopses)) {
		if row := "| `" + name; !strings.Contains(doc, row) {
			t.Errorf("%s's command table has no row beginning %s", cliDoc, row)
		}
	}
}
