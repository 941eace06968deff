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

// TestREADMEDocumentsTheCommandLine: every flag of serve has its row in
// the README's flag table, with its variable, and every command its row in
// the command table.
func TestREADMEDocumentsTheCommandLine(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	var c serveConfig
	c.flags().VisitAll(func(f *flag.Flag) {
		if row := "| `--" + f.Name + "` | `" + variable(f) + "` |"; !strings.Contains(readme, row) {
			t.Errorf("the README's flag table has no row beginning %s", row)
		}
	})
	if want := "`0` (" + store.DefaultTimeouts() + ")"; !strings.Contains(readme, want) {
		t.Errorf("the README's row of --store-timeout does not say %s", want)
	}
	for _, name := range slices.Sorted(maps.Keys(synopses)) {
		if row := "| `" + name; !strings.Contains(readme, row) {
			t.Errorf("the README's command table has no row beginning %s", row)
		}
	}
}
