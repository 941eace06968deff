package grpcapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// grpcurl runs grpcurl, pinned as a tool in go.mod, against the fixture:
// args before "--" are flags, the ones after follow the address.
func grpcurl(t *testing.T, f *fixture, args ...string) (string, error) {
	t.Helper()
	goTool, err := exec.LookPath("go") // go test puts its own go first in the PATH
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no go command to run grpcurl with")
		}
		t.Skip("no go command to run grpcurl with")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the first run builds it
	defer cancel()
	flags, rest, _ := cut(args, "--")
	full := append([]string{"tool", "grpcurl", "-plaintext"}, flags...)
	full = append(append(full, f.addr), rest...)
	out, err := exec.CommandContext(ctx, goTool, full...).CombinedOutput()
	return string(out), err
}

// cut splits s around the first sep.
func cut(s []string, sep string) (before, after []string, found bool) {
	if i := slices.Index(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, nil, false
}

// TestGrpcurl: grpcurl finds the services by reflection, describes them,
// calls them with JSON, and checks health as a probe would.
func TestGrpcurl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grpcurl")
	}
	f := newFixture(t, nil)

	out, err := grpcurl(t, f, "--", "list")
	if err != nil {
		t.Fatalf("grpcurl list: %v\n%s", err, out)
	}
	for _, svc := range []string{"leaf.v1.IdService", "leaf.v1.SequenceService", "leaf.v1.AdminService", "grpc.health.v1.Health"} {
		if !strings.Contains(out, svc+"\n") {
			t.Errorf("grpcurl list does not show %s:\n%s", svc, out)
		}
	}

	out, err = grpcurl(t, f, "--", "describe", "leaf.v1.IdService.GetSegmentRange")
	if err != nil || !strings.Contains(out, "rpc GetSegmentRange ( .leaf.v1.GetSegmentRangeRequest ) returns ( .leaf.v1.GetSegmentRangeResponse )") {
		t.Errorf("grpcurl describe: %v\n%s", err, out)
	}

	out, err = grpcurl(t, f, "-d", `{"tag":"orders","count":3}`, "--", "leaf.v1.IdService/BatchSegmentIds")
	var batch struct {
		Tag string   `json:"tag"`
		IDs []string `json:"ids"`
	}
	if err != nil || json.Unmarshal([]byte(out), &batch) != nil || batch.Tag != "orders" || strings.Join(batch.IDs, ",") != "1,2,3" {
		t.Errorf("grpcurl BatchSegmentIds: %v\n%s", err, out)
	}

	out, err = grpcurl(t, f, "-d", `{"tag":"nope"}`, "--", "leaf.v1.IdService/GetSegmentId")
	if err == nil || !strings.Contains(out, "Code: NotFound") || !strings.Contains(out, `biz tag "nope" does not exist`) {
		t.Errorf("grpcurl GetSegmentId of an unknown tag: %v\n%s", err, out)
	}

	out, err = grpcurl(t, f, "-H", "authorization: Bearer "+adminToken, "--", "leaf.v1.AdminService/ListTags")
	if err != nil || !strings.Contains(out, `"tag": "orders"`) {
		t.Errorf("grpcurl ListTags with the token: %v\n%s", err, out)
	}

	out, err = grpcurl(t, f, "-d", `{"service":"leaf.v1.IdService"}`, "--", "grpc.health.v1.Health/Check")
	if err != nil || !strings.Contains(out, `"status": "SERVING"`) {
		t.Errorf("grpcurl health check: %v\n%s", err, out)
	}
}

// TestGRPCHealthProbe: grpc-health-probe, the probe Kubernetes ran before
// it had gRPC probes of its own (pinned as a tool in go.mod), reports the
// process and its readiness by its exit status.
func TestGRPCHealthProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grpc-health-probe")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no go command to run grpc-health-probe with")
		}
		t.Skip("no go command to run grpc-health-probe with")
	}
	f := newFixture(t, nil)
	probe := func(service string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the first run builds it
		defer cancel()
		out, err := exec.CommandContext(ctx, goTool, "tool", "grpc-health-probe", "-addr", f.addr, "-service", service).CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatalf("grpc-health-probe: %v\n%s", err, out)
		}
		return 0, string(out)
	}
	for _, svc := range []string{"", "leaf.v1.IdService"} {
		if code, out := probe(svc); code != 0 || !strings.Contains(out, "SERVING") {
			t.Errorf("probe of %q = exit %d %s; want 0, SERVING", svc, code, out)
		}
	}
	f.notReady.Store(true)
	// grpc-health-probe exits 4 for a service that is not serving.
	if code, out := probe("leaf.v1.IdService"); code != 4 || !strings.Contains(out, "NOT_SERVING") {
		t.Errorf("probe of a service not ready = exit %d %s; want 4, NOT_SERVING", code, out)
	}
	if code, _ := probe(""); code != 0 {
		t.Errorf("probe of the process while not ready = exit %d; want 0", code)
	}
}
