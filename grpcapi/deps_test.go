package grpcapi_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRooms: the gRPC edge uses the domain and what the edges share, never
// the HTTP edge or a store; and what the edges share uses neither edge.
func TestRooms(t *testing.T) {
	goTool, err := exec.LookPath("go") // go test puts its own go first in the PATH
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	const mod = "github.com/leafid/leaf/"
	for pkg, allowed := range map[string][]string{
		mod + "grpcapi": {"grpcapi", "leafapi", "bizid", "segment", "sequence", "snowflake", "uuidv7", "proto/leaf/v1", "proto/leaf/v1/leafv1connect"},
		mod + "leafapi": {"leafapi", "bizid", "segment", "sequence", "snowflake"},
	} {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			room, ok := strings.CutPrefix(dep, mod)
			if !ok {
				continue
			}
			found := false
			for _, a := range allowed {
				found = found || room == a
			}
			if !found {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
