package main

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/leafid/leaf/internal/testkit"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
)

// TestServeGRPC: `leaf serve` answers gRPC on the port of the HTTP API,
// from the same allocator: ids taken over HTTP and over gRPC follow one
// another; the admin token is the same; the health service reports ready;
// /metrics counts the calls.
func TestServeGRPC(t *testing.T) {
	e := env{"LEAF_SQLITE_PATH": filepath.Join(t.TempDir(), "leaf.db"), "LEAF_ADMIN_TOKEN": "t0ken-secret-of-the-test"}
	a := startApp(t, e, "--snowflake-worker-id", "3")
	cc, err := grpc.NewClient(strings.TrimPrefix(a.base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	admin := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer t0ken-secret-of-the-test")
	var created leafv1.CreateTagResponse
	if err := cc.Invoke(admin, "/leaf.v1.AdminService/CreateTag", &leafv1.CreateTagRequest{Tag: "orders", Step: new(int64(10))}, &created); err != nil {
		t.Fatalf("CreateTag: %v", err)
	}
	for i := int64(1); i <= 6; i++ {
		var got int64
		if i%2 == 1 {
			var res leafv1.GetSegmentIdResponse
			if err := cc.Invoke(t.Context(), "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "orders"}, &res); err != nil {
				t.Fatalf("GetSegmentId: %v", err)
			}
			got = res.GetId()
		} else {
			code, body := testkit.MustGet(t, a.base+"/api/segment/get/orders")
			if code != 200 {
				t.Fatalf("GET = %d %s", code, body)
			}
			got, _ = strconv.ParseInt(body, 10, 64)
		}
		if got != i {
			t.Fatalf("id %d = %d", i, got)
		}
	}
	var sf leafv1.DecodeSnowflakeIdResponse
	var id leafv1.GetSnowflakeIdResponse
	if err := cc.Invoke(t.Context(), "/leaf.v1.IdService/GetSnowflakeId", &leafv1.GetSnowflakeIdRequest{}, &id); err != nil {
		t.Fatal(err)
	}
	if err := cc.Invoke(t.Context(), "/leaf.v1.IdService/DecodeSnowflakeId", &leafv1.DecodeSnowflakeIdRequest{Id: id.GetId()}, &sf); err != nil || sf.GetWorkerId() != 3 {
		t.Fatalf("DecodeSnowflakeId = %v, %v", &sf, err)
	}
	// A formatted tag created over gRPC is served at once, by the HTTP API
	// (its ids are texts).
	format := "T-{seq}"
	var tickets leafv1.CreateTagResponse
	if err := cc.Invoke(admin, "/leaf.v1.AdminService/CreateTag", &leafv1.CreateTagRequest{Tag: "tickets", Format: &format}, &tickets); err != nil ||
		tickets.GetTag().GetFormat() != format || tickets.GetTag().GetReset_() != "never" {
		t.Fatalf("CreateTag of a formatted tag = %v, %v", &tickets, err)
	}
	if code, body := testkit.MustGet(t, a.base+"/api/segment/get/tickets"); code != 200 || body != "T-1" {
		t.Fatalf("GET of the formatted tag = %d %s", code, body)
	}
	if err := cc.Invoke(t.Context(), "/leaf.v1.AdminService/ListTags", &leafv1.ListTagsRequest{}, new(leafv1.ListTagsResponse)); err == nil {
		t.Fatal("ListTags without the token succeeded")
	}

	res, err := healthpb.NewHealthClient(cc).Check(t.Context(), &healthpb.HealthCheckRequest{Service: "leaf.v1.IdService"})
	if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", res, err)
	}
	watch, err := healthpb.NewHealthClient(cc).Watch(t.Context(), &healthpb.HealthCheckRequest{Service: "leaf.v1.IdService"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health Watch = %v, %v", st, err)
	}

	_, body := testkit.MustGet(t, a.base+"/metrics")
	for _, want := range []string{
		`leaf_rpc_requests_total{code="ok",procedure="/leaf.v1.IdService/GetSegmentId"} 3`,
		`leaf_rpc_requests_total{code="unauthenticated",procedure="/leaf.v1.AdminService/ListTags"} 1`,
		`leaf_ids_issued_total{mode="segment",tag="orders"} 6`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Stopping ends the Watch stream, after NOT_SERVING: the shutdown does
	// not wait for the client to leave.
	if err := a.stop(); err != nil {
		t.Fatalf("stop with a health Watch open: %v", err)
	}
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health Watch when stopping = %v, %v", st, err)
	}
	if _, err := watch.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("health Watch after stopping: %v, want its end", err)
	}
}

// TestServeTLS: with --tls-cert and --tls-key the port serves HTTPS, over
// HTTP/1.1 and HTTP/2, and gRPC over TLS; the two flags go together.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t)
	certFile, keyFile, _ := ca.Issue(t, "leaf")
	pool := ca.Pool
	e := env{"LEAF_SQLITE_PATH": filepath.Join(dir, "leaf.db"), "LEAF_TLS_CERT": certFile}
	if _, err := newApp([]string{"--snowflake-worker-id", "1"}, e.get, io.Discard); !errors.Is(err, errUsage) {
		t.Fatalf("--tls-cert without --tls-key: %v; want a usage error", err)
	}
	e["LEAF_TLS_KEY"] = keyFile
	a := startApp(t, e, "--snowflake-worker-id", "1")
	addr := strings.TrimPrefix(a.base, "http://")

	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
		resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/api/snowflake/get")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if want := map[bool]int{false: 1, true: 2}[h2]; resp.StatusCode != 200 || resp.ProtoMajor != want {
			t.Errorf("GET over HTTPS = %d %s %q; want 200 over HTTP/%d", resp.StatusCode, resp.Proto, body, want)
		}
	}

	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	var res leafv1.GetSnowflakeIdResponse
	if err := cc.Invoke(t.Context(), "/leaf.v1.IdService/GetSnowflakeId", &leafv1.GetSnowflakeIdRequest{}, &res); err != nil || res.GetId() <= 0 {
		t.Fatalf("GetSnowflakeId over TLS = %v, %v", &res, err)
	}
}
