package grpcapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus/testutil"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
)

// TestConnectClients: connect's client over each protocol it speaks
// (Connect with protobuf and with JSON, gRPC-Web over HTTP/1.1, gRPC over
// unencrypted HTTP/2) takes ids from one allocator: each protocol's ids
// follow the last one's.
func TestConnectClients(t *testing.T) {
	f := newFixture(t, nil)
	var last int64
	for _, name := range []string{"connect+proto", "connect+json", "grpc-web", "grpc"} {
		c := f.idClients(t)[name]
		res, err := c.GetSegmentId(t.Context(), connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "orders"}))
		if err != nil || res.Msg.GetId() != last+1 {
			t.Fatalf("%s: GetSegmentId = %v, %v; want %d", name, res, err, last+1)
		}
		batch, err := c.BatchSegmentIds(t.Context(), connect.NewRequest(&leafv1.BatchSegmentIdsRequest{Tag: "orders", Count: 10}))
		if err != nil || len(batch.Msg.GetIds()) != 10 || batch.Msg.GetIds()[0] != last+2 {
			t.Fatalf("%s: BatchSegmentIds = %v, %v", name, batch, err)
		}
		last = batch.Msg.GetIds()[9]
		if _, err := c.GetSnowflakeId(t.Context(), connect.NewRequest(&leafv1.GetSnowflakeIdRequest{})); err != nil {
			t.Fatalf("%s: GetSnowflakeId: %v", name, err)
		}
	}
}

// TestConnectJSONByHand: the Connect protocol is plain HTTP: a POST of
// JSON, which curl can send, with ids as strings as in the HTTP API.
func TestConnectJSONByHand(t *testing.T) {
	f := newFixture(t, nil)
	resp, err := http.Post(f.url()+"/leaf.v1.IdService/BatchSegmentIds", "application/json", strings.NewReader(`{"tag":"orders","count":2}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// protojson adds spaces at random (by the build) so that its output is
	// not compared byte by byte: compare it compacted.
	var compact bytes.Buffer
	if resp.StatusCode != 200 || json.Compact(&compact, body) != nil || compact.String() != `{"tag":"orders","ids":["1","2"]}` {
		t.Fatalf("POST = %d %s", resp.StatusCode, body)
	}
	resp, err = http.Post(f.url()+"/leaf.v1.IdService/GetSegmentId", "application/json", strings.NewReader(`{"tag":"nope"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), `"code":"not_found"`) || !strings.Contains(string(body), "UNKNOWN_TAG") {
		t.Fatalf("POST unknown tag = %d %s", resp.StatusCode, body)
	}
}

// TestOtherPathsGoToHTTP: every path outside gRPC's prefixes reaches the
// HTTP API, over HTTP/1.1 and over unencrypted HTTP/2.
func TestOtherPathsGoToHTTP(t *testing.T) {
	f := newFixture(t, nil)
	for name, c := range map[string]*http.Client{"HTTP/1.1": http.DefaultClient, "HTTP/2.0": h2c(t)} {
		for _, path := range []string{"/api/segment/get/orders", "/leaf.v2.X/Y", "/grpc.other.v1.X/Y", "/g", "/healthz", "/"} {
			resp, err := c.Get(f.url() + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != httpStandIn+" "+name {
				t.Errorf("%s %s = %q; want the HTTP API", name, path, body)
			}
		}
	}
}

// TestAdminCalls: the admin service with the token, as the HTTP admin API.
func TestAdminCalls(t *testing.T) {
	f := newFixture(t, nil)
	c := leafv1connect.NewAdminServiceClient(http.DefaultClient, f.url())
	created, err := c.CreateTag(t.Context(), withToken(&leafv1.CreateTagRequest{Tag: "users", Description: "user ids"}, adminToken))
	if err != nil || created.Msg.GetTag().GetStep() != 1000 || created.Msg.GetTag().GetMaxId() != 1 || created.Msg.GetTag().GetDescription() != "user ids" {
		t.Fatalf("CreateTag = %v, %v", created, err)
	}
	got, err := c.GetTag(t.Context(), withToken(&leafv1.GetTagRequest{Tag: "users"}, adminToken))
	if err != nil || got.Msg.GetTag().GetTag() != "users" {
		t.Fatalf("GetTag = %v, %v", got, err)
	}
	up, err := c.UpdateTag(t.Context(), withToken(&leafv1.UpdateTagRequest{Tag: "users", Step: new(int64(5000)), MaxId: new(int64(100))}, adminToken))
	if err != nil || up.Msg.GetTag().GetStep() != 5000 || up.Msg.GetTag().GetMaxId() != 100 {
		t.Fatalf("UpdateTag = %v, %v", up, err)
	}
	if _, err := c.UpdateTag(t.Context(), withToken(&leafv1.UpdateTagRequest{Tag: "users", MaxId: new(int64(50))}, adminToken)); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("lowering max_id: %v; want invalid_argument", err)
	}
	list, err := c.ListTags(t.Context(), withToken(&leafv1.ListTagsRequest{}, adminToken))
	if err != nil || len(list.Msg.GetTags()) != 4 {
		t.Fatalf("ListTags = %v, %v", list, err)
	}
	ids := leafv1connect.NewIdServiceClient(http.DefaultClient, f.url())
	if _, err := ids.GetSegmentId(t.Context(), connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "orders"})); err != nil {
		t.Fatal(err)
	}
	segs, err := c.ListSegments(t.Context(), withToken(&leafv1.ListSegmentsRequest{}, adminToken))
	if err != nil || len(segs.Msg.GetBuffers()) == 0 {
		t.Fatalf("ListSegments = %v, %v", segs, err)
	}
	b := segs.Msg.GetBuffers()[0]
	if b.GetTag() != "orders" || b.GetFirst().GetStart() != 1 || b.GetIssued() != 1 {
		t.Errorf("buffer = %v", b)
	}
}

// TestUniqueUnderRace: concurrent gRPC calls of every segment and
// snowflake procedure never get an id twice (run under -race).
func TestUniqueUnderRace(t *testing.T) {
	f := newFixture(t, nil)
	cc := f.grpcConn(t)
	const workers, calls = 8, 200
	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			var got []string
			for i := range calls {
				switch (w + i) % 4 {
				case 0:
					var res leafv1.GetSegmentIdResponse
					if err := cc.Invoke(ctx, "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "orders"}, &res); err != nil {
						errs <- err
						return
					}
					got = append(got, fmt.Sprint("s", res.GetId()))
				case 1:
					var res leafv1.BatchSegmentIdsResponse
					if err := cc.Invoke(ctx, "/leaf.v1.IdService/BatchSegmentIds", &leafv1.BatchSegmentIdsRequest{Tag: "orders", Count: 7}, &res); err != nil {
						errs <- err
						return
					}
					for _, id := range res.GetIds() {
						got = append(got, fmt.Sprint("s", id))
					}
				case 2:
					var res leafv1.GetSegmentRangeResponse
					if err := cc.Invoke(ctx, "/leaf.v1.IdService/GetSegmentRange", &leafv1.GetSegmentRangeRequest{Tag: "orders", Count: 5}, &res); err != nil {
						errs <- err
						return
					}
					for id := res.GetStart(); id < res.GetStart()+int64(res.GetCount()); id++ {
						got = append(got, fmt.Sprint("s", id))
					}
				case 3:
					var res leafv1.BatchSnowflakeIdsResponse
					if err := cc.Invoke(ctx, "/leaf.v1.IdService/BatchSnowflakeIds", &leafv1.BatchSnowflakeIdsRequest{Count: 3}, &res); err != nil {
						errs <- err
						return
					}
					for _, id := range res.GetIds() {
						got = append(got, fmt.Sprint("f", id))
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range got {
				seen[id]++
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	dups := 0
	for id, n := range seen {
		if n > 1 {
			dups++
			t.Errorf("id %s issued %d times", id, n)
		}
	}
	if len(seen) < workers*calls || dups > 0 {
		t.Fatalf("%d distinct ids, %d duplicated", len(seen), dups)
	}
}

// TestCallMetrics: calls are counted by procedure and gRPC code, a call
// refused for its token too.
func TestCallMetrics(t *testing.T) {
	f := newFixture(t, nil)
	cc := f.grpcConn(t)
	for range 3 {
		_ = cc.Invoke(t.Context(), "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "orders"}, new(leafv1.GetSegmentIdResponse))
	}
	_ = cc.Invoke(t.Context(), "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "nope"}, new(leafv1.GetSegmentIdResponse))
	_ = cc.Invoke(t.Context(), "/leaf.v1.AdminService/ListTags", &leafv1.ListTagsRequest{}, new(leafv1.ListTagsResponse))
	for _, tc := range []struct {
		procedure, code string
		want            float64
	}{
		{"/leaf.v1.IdService/GetSegmentId", "ok", 3},
		{"/leaf.v1.IdService/GetSegmentId", "not_found", 1},
		{"/leaf.v1.AdminService/ListTags", "unauthenticated", 1},
	} {
		got := counter(t, f, tc.procedure, tc.code)
		if got != tc.want {
			t.Errorf("leaf_rpc_requests_total{procedure=%q,code=%q} = %v, want %v", tc.procedure, tc.code, got, tc.want)
		}
	}
	n, err := testutil.GatherAndCount(f.reg, "leaf_rpc_request_duration_seconds")
	if err != nil || n != 3 {
		t.Errorf("leaf_rpc_request_duration_seconds: %d series, %v; want 3", n, err)
	}
}

// counter is the value of leaf_rpc_requests_total for one procedure and
// code.
func counter(t *testing.T, f *fixture, procedure, code string) float64 {
	t.Helper()
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "leaf_rpc_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["procedure"] == procedure && labels["code"] == code {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
