package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandardLibraryOnly: importing the client pulls in nothing of the
// server's dependencies, nor anything else outside the standard library.
// (Test files may import the server: their imports do not reach users.)
func TestStandardLibraryOnly(t *testing.T) {
	// go test puts its own go command first in the PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	const self = "github.com/leafid/leaf/client"
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", self).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg != self {
			t.Errorf("%s depends on %s, which is not in the standard library", self, pkg)
		}
	}
}
