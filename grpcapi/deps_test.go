package grpcapi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRooms: the gRPC edge uses the domain and the service, never the HTTP
// edge or a store; and the service uses neither edge.
func TestRooms(t *testing.T) {
	goTool, err := exec.LookPath("go") // go test puts its own go first in the PATH
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	const mod = "github.com/leafid/leaf/"
	for pkg, allowed := range map[string][]string{
		mod + "grpcapi": {"grpcapi", "service", "bizid", "segment", "sequence", "snowflake", "uuidv7", "throttle", "proto/leaf/v1", "proto/leaf/v1/leafv1connect"},
		mod + "service": {"service", "bizid", "segment", "sequence", "snowflake", "uuidv7", "throttle"},
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

// TestEdgesDecideNoKind: neither edge decides what kind a tag is, nor who
// serves it: they import no business ids, and name none of the errors by
// which the allocator and the Sequencer send a request elsewhere. The
// service decides; a new kind of tag touches it and the two codecs. Nor
// do they repeat the service's rules of modes, names and defaults.
func TestEdgesDecideNoKind(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	for _, pkg := range []string{"httpapi", "grpcapi"} {
		out, err := exec.Command(goTool, "list", "-f", `{{join .Imports "\n"}}`, "github.com/leafid/leaf/"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		if strings.Contains(string(out), "github.com/leafid/leaf/bizid") {
			t.Errorf("%s imports bizid", pkg)
		}
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"NotOwnerError", "LookupTags", ".Loaded(", "bizid.Row", ".NextOrdered("} {
				if strings.Contains(string(src), name) {
					t.Errorf("%s names %s: deciding a tag's kind or owner is the service's", f, name)
				}
			}
			// Nor do they repeat a rule of the service: whether a mode is
			// on, whether a name is a tag's, a new tag's defaults.
			for _, name := range []string{"ModeOff(", "ValidateTag(", "DefaultStep", "Tags().Off()", "Parts().Segments == nil", "Parts().Snowflake == nil", "Parts().UUIDs == nil",
				"parts.Sequences == nil", "Parts().Sequences == nil", "SequencesOff()", "sequence.ValidateSpace(", "sequence.ValidateKey("} {
				if strings.Contains(string(src), name) {
					t.Errorf("%s names %s: the rule is the service's; ask it (Service.Off, Service.SegmentCall, Service.SequenceCall, TagAdmin.Named, service.NewTag)", f, name)
				}
			}
		}
	}
}
