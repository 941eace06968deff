package grpcapi_test

import (
	"os"
	"strings"
	"testing"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/service"
)

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocsListEveryCall: docs/grpc.md names every call of every service
// of leaf.v1, and the gRPC code of every error code as service maps it.
func TestDocsListEveryCall(t *testing.T) {
	doc := readDoc(t, "../docs/grpc.md")
	services := leafv1.File_leaf_v1_leaf_proto.Services()
	if services.Len() != 3 {
		t.Fatalf("%d services in leaf.v1, want 3", services.Len())
	}
	for i := range services.Len() {
		svc := services.Get(i)
		if !strings.Contains(doc, "`"+string(svc.FullName())+"`") {
			t.Errorf("docs/grpc.md does not name the service %s", svc.FullName())
		}
		for j := range svc.Methods().Len() {
			if m := svc.Methods().Get(j); !strings.Contains(doc, "| `"+string(m.Name())+" {") {
				t.Errorf("docs/grpc.md has no row for %s.%s", svc.FullName(), m.Name())
			}
		}
	}
	_, table, _ := strings.Cut(doc, "\n## Errors\n")
	table, _, _ = strings.Cut(table, "\n## ")
	for _, code := range service.Codes() {
		found := false
		for line := range strings.SplitSeq(table, "\n") {
			if strings.HasPrefix(line, "| ") && strings.Contains(line, "`"+code+"`") {
				found = true
				want := camel(service.GRPCCode(code).String()) // not_found: NotFound
				if !strings.Contains(line, "`"+want+"`") {
					t.Errorf("docs/grpc.md gives %s another gRPC code than %s: %s", code, want, line)
				}
			}
		}
		if !found {
			t.Errorf("docs/grpc.md's table of errors lacks %s", code)
		}
	}
}

// TestMetricsDocumented: docs/observability.md's Metrics section names the
// call metrics.
func TestMetricsDocumented(t *testing.T) {
	f := newFixture(t, nil)
	_ = f.grpcConn(t).Invoke(t.Context(), "/leaf.v1.IdService/GetUuid", &leafv1.GetUuidRequest{}, new(leafv1.GetUuidResponse))
	_, section, _ := strings.Cut(readDoc(t, "../docs/observability.md"), "\n## Metrics\n")
	section, _, _ = strings.Cut(section, "\n## ")
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 2 {
		t.Errorf("%d metrics, want 2", len(mfs))
	}
	for _, mf := range mfs {
		if !strings.Contains(section, "`"+mf.GetName()+"{") {
			t.Errorf("%s is not in the Metrics section of docs/observability.md", mf.GetName())
		}
	}
}

// camel writes connect's name of a code (not_found) as gRPC's (NotFound).
func camel(s string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(s, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
