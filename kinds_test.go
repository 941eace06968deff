package leaf_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kindWords are what deciding a tag's kind reads: a row's kind, the
// ordered flag of its settings, the statement that reads them, or the
// allocator's buffer taken for a plain tag's record.
var kindWords = []string{"bizid.Special", "bizid.NoRow", "bizid.Plain", "Settings.Ordered", "LookupTags(", ".Loaded("}

// kindDeciders are the rooms that may use kindWords: the service, whose
// tag registry owns what kind a tag is (and whose tag administration reads
// a row's settings before changing them); the stores, which write and read
// the rows in one statement, and a set of them, which merges what its
// stores say; and bizid, which defines them.
var kindDeciders = []string{"service/", "store/", "storeset/", "bizid/"}

// TestOneOwnerOfAKind: no other room of the product decides what kind a
// tag is: the edges, the allocator, the sequencer, the command line and
// the server's wiring ask the service.
func TestOneOwnerOfAKind(t *testing.T) {
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch p {
			case "internal", "bench", "generators", "clients", "faults", "containers", "proto", "docs":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		for _, room := range kindDeciders {
			if strings.HasPrefix(filepath.ToSlash(p), room) {
				return nil
			}
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, w := range kindWords {
			if strings.Contains(string(src), w) {
				t.Errorf("%s names %s: what kind a tag is is the tag registry's to say (service/registry.go)", p, w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
