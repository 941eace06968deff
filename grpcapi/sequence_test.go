package grpcapi_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/leafid/leaf/grpcapi"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/sequencetest"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// withSequences gives a fixture a Sequencer on an in-memory store with the
// space inbox, the fixture the only member, so the owner of every section.
func withSequences(t testing.TB) func(*config) {
	return func(cfg *config) {
		st := sequencetest.NewMemStore(time.Now)
		if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 100, Sections: 4}); err != nil {
			t.Fatal(err)
		}
		q, err := sequence.New(sequence.Options{Store: st, Addr: "self:1", Lease: time.Hour, Interval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(context.Background()) })
		if err := q.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
		cfg.svc.Sequences, cfg.svc.Spaces = q, st
	}
}

// TestSequenceCalls: Next and Current over Connect (each protocol) and
// over google.golang.org/grpc: numbers of a key strictly increase, a
// batch is consecutive, Current is the last one issued.
func TestSequenceCalls(t *testing.T) {
	f := newFixture(t, withSequences(t))
	clients := map[string]leafv1connect.SequenceServiceClient{
		"connect+proto": leafv1connect.NewSequenceServiceClient(http.DefaultClient, f.url()),
		"connect+json":  leafv1connect.NewSequenceServiceClient(http.DefaultClient, f.url(), connect.WithProtoJSON()),
		"grpc-web":      leafv1connect.NewSequenceServiceClient(http.DefaultClient, f.url(), connect.WithGRPCWeb()),
		"grpc":          leafv1connect.NewSequenceServiceClient(h2c(t), f.url(), connect.WithGRPC()),
	}
	var last int64
	for name, c := range clients {
		one, err := c.Next(t.Context(), connect.NewRequest(&leafv1.NextRequest{Space: "inbox", Key: "会话/1"}))
		if err != nil || len(one.Msg.GetSeqs()) != 1 || one.Msg.GetSeqs()[0] <= last || one.Msg.GetKey() != "会话/1" || one.Msg.GetSpace() != "inbox" {
			t.Fatalf("%s: Next = %v, %v (last %d)", name, one, err, last)
		}
		batch, err := c.Next(t.Context(), connect.NewRequest(&leafv1.NextRequest{Space: "inbox", Key: "会话/1", Count: new(int32(3))}))
		if err != nil || len(batch.Msg.GetSeqs()) != 3 {
			t.Fatalf("%s: Next count 3 = %v, %v", name, batch, err)
		}
		prev := one.Msg.GetSeqs()[0]
		for _, v := range batch.Msg.GetSeqs() {
			if v != prev+1 {
				t.Fatalf("%s: batch %v after %d", name, batch.Msg.GetSeqs(), prev)
			}
			prev = v
		}
		cur, err := c.Current(t.Context(), connect.NewRequest(&leafv1.CurrentRequest{Space: "inbox", Key: "会话/1"}))
		if err != nil || cur.Msg.GetSeq() != prev {
			t.Fatalf("%s: Current = %v, %v; want %d", name, cur, err, prev)
		}
		last = prev
	}

	cc := f.grpcConn(t)
	res, err := invoke[leafv1.NextResponse](t, cc, "/leaf.v1.SequenceService/Next", &leafv1.NextRequest{Space: "inbox", Key: "会话/1", Count: new(int32(2))})
	if err != nil || len(res.GetSeqs()) != 2 || res.GetSeqs()[0] != last+1 {
		t.Fatalf("grpc client: Next = %v, %v (last %d)", res, err, last)
	}
	cur, err := invoke[leafv1.CurrentResponse](t, cc, "/leaf.v1.SequenceService/Current", &leafv1.CurrentRequest{Space: "inbox", Key: "会话/1"})
	if err != nil || cur.GetSeq() != last+2 {
		t.Fatalf("grpc client: Current = %v, %v", cur, err)
	}
}

// TestSequenceErrors: the space and key rules and the unknown space, with
// the codes of the HTTP routes, over the grpc client and a Connect one.
func TestSequenceErrors(t *testing.T) {
	f := newFixture(t, withSequences(t))
	cc := f.grpcConn(t)
	c := leafv1connect.NewSequenceServiceClient(http.DefaultClient, f.url())
	for _, tc := range []struct {
		name    string
		req     *leafv1.NextRequest
		code    string
		grpc    string
		message string
	}{
		{"unknown space", &leafv1.NextRequest{Space: "outbox", Key: "k"}, "unknown_space", "NotFound", "outbox"},
		{"empty key", &leafv1.NextRequest{Space: "inbox"}, "invalid_key", "InvalidArgument", ""},
		{"key too long", &leafv1.NextRequest{Space: "inbox", Key: strings.Repeat("k", 257)}, "invalid_key", "InvalidArgument", "256"},
		{"empty space", &leafv1.NextRequest{Key: "k"}, "invalid_space", "InvalidArgument", ""},
		{"space too long", &leafv1.NextRequest{Space: strings.Repeat("s", 129), Key: "k"}, "invalid_space", "InvalidArgument", "128"},
		{"count 0", &leafv1.NextRequest{Space: "inbox", Key: "k", Count: new(int32(0))}, "invalid_count", "InvalidArgument", "1 to 10000"},
		{"count too big", &leafv1.NextRequest{Space: "inbox", Key: "k", Count: new(int32(10001))}, "invalid_count", "InvalidArgument", "1 to 10000"},
	} {
		_, err := invoke[leafv1.NextResponse](t, cc, "/leaf.v1.SequenceService/Next", tc.req)
		if grpcCode(err) != tc.grpc || reason(err) != tc.code || !strings.Contains(err.Error(), tc.message) {
			t.Errorf("%s: grpc Next: %v (reason %q); want %s %s", tc.name, err, reason(err), tc.grpc, tc.code)
		}
		_, err = c.Next(t.Context(), connect.NewRequest(tc.req))
		if want := map[string]connect.Code{"NotFound": connect.CodeNotFound, "InvalidArgument": connect.CodeInvalidArgument}[tc.grpc]; connect.CodeOf(err) != want {
			t.Errorf("%s: connect Next: %v; want %v", tc.name, err, want)
		}
	}
	_, err := invoke[leafv1.CurrentResponse](t, cc, "/leaf.v1.SequenceService/Current", &leafv1.CurrentRequest{Space: "outbox", Key: "k"})
	if grpcCode(err) != "NotFound" || reason(err) != "unknown_space" {
		t.Errorf("Current of an unknown space: %v", err)
	}
	_, err = invoke[leafv1.CurrentResponse](t, cc, "/leaf.v1.SequenceService/Current", &leafv1.CurrentRequest{Space: "inbox"})
	if grpcCode(err) != "InvalidArgument" || reason(err) != "invalid_key" {
		t.Errorf("Current of an empty key: %v", err)
	}

	// Sequences off: Unimplemented with not_found, as the routes' 404.
	off := newFixture(t, nil)
	_, err = invoke[leafv1.NextResponse](t, off.grpcConn(t), "/leaf.v1.SequenceService/Next", &leafv1.NextRequest{Space: "inbox", Key: "k"})
	if grpcCode(err) != "Unimplemented" || reason(err) != "not_found" {
		t.Errorf("Next with sequences off: %v", err)
	}
	_, err = leafv1connect.NewAdminServiceClient(http.DefaultClient, off.url()).ListSpaces(t.Context(), withToken(&leafv1.ListSpacesRequest{}, adminToken))
	if connect.CodeOf(err) != connect.CodeUnimplemented {
		t.Errorf("ListSpaces with sequences off: %v", err)
	}
}

// TestSpaceAdminCalls: CreateSpace, ListSpaces and GetSpace, as the HTTP
// admin routes of sequences, behind the admin token.
func TestSpaceAdminCalls(t *testing.T) {
	f := newFixture(t, withSequences(t))
	c := leafv1connect.NewAdminServiceClient(http.DefaultClient, f.url())
	created, err := c.CreateSpace(t.Context(), withToken(&leafv1.CreateSpaceRequest{Space: "outbox", Sections: new(int32(8))}, adminToken))
	if err != nil || created.Msg.GetSpace().GetSpace() != "outbox" || created.Msg.GetSpace().GetStep() != sequence.DefaultStep || created.Msg.GetSpace().GetSections() != 8 {
		t.Fatalf("CreateSpace = %v, %v", created, err)
	}
	if _, err := c.CreateSpace(t.Context(), withToken(&leafv1.CreateSpaceRequest{Space: "outbox"}, adminToken)); connect.CodeOf(err) != connect.CodeAlreadyExists {
		t.Errorf("CreateSpace of a space that exists: %v", err)
	}
	if _, err := c.CreateSpace(t.Context(), withToken(&leafv1.CreateSpaceRequest{Space: "x", Sections: new(int32(0))}, adminToken)); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("CreateSpace of 0 sections: %v", err)
	}
	if _, err := c.CreateSpace(t.Context(), withToken(&leafv1.CreateSpaceRequest{Space: "y"}, "")); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("CreateSpace without the token: %v", err)
	}
	list, err := c.ListSpaces(t.Context(), withToken(&leafv1.ListSpacesRequest{}, adminToken))
	if err != nil || len(list.Msg.GetSpaces()) != 2 {
		t.Fatalf("ListSpaces = %v, %v", list, err)
	}
	// google.golang.org/grpc's client, the token in the metadata.
	cc := f.grpcConn(t)
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+adminToken)
	got := new(leafv1.GetSpaceResponse)
	err = cc.Invoke(ctx, "/leaf.v1.AdminService/GetSpace", &leafv1.GetSpaceRequest{Space: "inbox"}, got)
	if err != nil || got.GetSpace().GetSections() != 4 || got.GetSpace().GetStep() != 100 {
		t.Fatalf("GetSpace = %v, %v", got, err)
	}
	err = cc.Invoke(ctx, "/leaf.v1.AdminService/GetSpace", &leafv1.GetSpaceRequest{Space: "nosuch"}, new(leafv1.GetSpaceResponse))
	if grpcCode(err) != "NotFound" || reason(err) != "unknown_space" {
		t.Errorf("GetSpace of an unknown space: %v", err)
	}
}

// instance is one of two servers of both APIs over one sequence store,
// the two APIs' metrics on one registry, as leaf serve has them.
type instance struct {
	url string
	seq *sequence.Sequencer
	reg *prometheus.Registry
	srv *http.Server
}

// twoInstances starts two servers, each its HTTP API and gRPC on one
// port, with Sequencers over one store that share the sections of inbox
// and the ordered tag ticks.
func twoInstances(t *testing.T) []instance {
	t.Helper()
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 100, Sections: 16}); err != nil {
		t.Fatal(err)
	}
	tags := sequencetest.NewOrderedTags(st, 5)
	tags.Create("ticks", true)
	var out []instance
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		q, err := sequence.New(sequence.Options{Store: st, Ordered: tags, Tags: tags, Addr: ln.Addr().String(), Lease: time.Hour, Interval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(context.Background()) })
		log := slog.New(slog.DiscardHandler)
		// The allocator serves no tag: the only one, ticks, is ordered,
		// and its store says so.
		segs := segmenttest.New(segment.Tag{Name: "ticks", MaxID: 1, Step: 5})
		segs.SetNotPlain("ticks")
		alloc := segment.New(segs, segment.Options{RefreshInterval: -1})
		kinds := service.NewRegistry(segs, nil, alloc)
		t.Cleanup(func() { _ = alloc.Close() })
		reg := prometheus.NewRegistry()
		api := httpapi.New(httpapi.Config{Service: service.New(service.Config{Sequences: q, Ordered: q, Segments: alloc, Kinds: kinds, Peer: httpapi.NewPeer(0, nil), Metrics: reg, Logger: log}), Registry: reg, Logger: log})
		h := grpcapi.New(grpcapi.Config{Service: service.New(service.Config{Sequences: q, Ordered: q, Segments: alloc, Kinds: kinds, Peer: httpapi.NewPeer(0, nil), Metrics: reg, Logger: log}), Registry: reg, Logger: log}, api)
		srv := &http.Server{Handler: h, Protocols: grpcapi.ServerProtocols(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		out = append(out, instance{url: "http://" + ln.Addr().String(), seq: q, reg: reg, srv: srv})
	}
	for range 3 {
		for _, in := range out {
			if err := in.seq.Round(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// TestSequenceForwarded: a call to the instance that does not own the
// key's section (or the ordered tag) is answered by the owner, through its
// HTTP API: over both instances, every key's numbers strictly increase,
// and so do the ordered tag's ids.
func TestSequenceForwarded(t *testing.T) {
	ins := twoInstances(t)
	var clients []leafv1connect.SequenceServiceClient
	var ids []leafv1connect.IdServiceClient
	for _, in := range ins {
		clients = append(clients, leafv1connect.NewSequenceServiceClient(h2c(t), in.url, connect.WithGRPC()))
		ids = append(ids, leafv1connect.NewIdServiceClient(http.DefaultClient, in.url))
	}
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k/l", "会话"}
	owned := [2]int{}
	for i, in := range ins {
		owned[i] = in.seq.Stats().SectionsOwned
	}
	if owned[0] == 0 || owned[1] == 0 {
		t.Fatalf("sections owned %v: both instances must own some for calls to be forwarded", owned)
	}
	last := map[string]int64{}
	for round := range 6 {
		for i, key := range keys {
			c := clients[(round+i)%2]
			res, err := c.Next(t.Context(), connect.NewRequest(&leafv1.NextRequest{Space: "inbox", Key: key, Count: new(int32(2))}))
			if err != nil {
				t.Fatalf("Next %q on instance %d: %v", key, (round+i)%2, err)
			}
			for _, v := range res.Msg.GetSeqs() {
				if v <= last[key] {
					t.Fatalf("key %q: %d after %d", key, v, last[key])
				}
				last[key] = v
			}
			cur, err := clients[(round+i+1)%2].Current(t.Context(), connect.NewRequest(&leafv1.CurrentRequest{Space: "inbox", Key: key}))
			if err != nil || cur.Msg.GetSeq() != last[key] {
				t.Fatalf("Current %q = %v, %v; want %d", key, cur, err, last[key])
			}
		}
	}

	var prev int64
	for i := range 20 {
		res, err := ids[i%2].GetSegmentId(t.Context(), connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "ticks"}))
		if err != nil || res.Msg.GetId() <= prev {
			t.Fatalf("ordered tag on instance %d: %v, %v after %d", i%2, res, err, prev)
		}
		prev = res.Msg.GetId()
	}
	batch, err := ids[1].BatchSegmentIds(t.Context(), connect.NewRequest(&leafv1.BatchSegmentIdsRequest{Tag: "ticks", Count: 4}))
	if err != nil || len(batch.Msg.GetIds()) != 4 || batch.Msg.GetIds()[0] != prev+1 {
		t.Fatalf("ordered batch = %v, %v after %d", batch, err, prev)
	}
	for i := range ids {
		if _, err := ids[i].GetSegmentRange(t.Context(), connect.NewRequest(&leafv1.GetSegmentRangeRequest{Tag: "ticks", Count: 3})); connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "ordered") {
			t.Errorf("range of an ordered tag on instance %d: %v", i, err)
		}
	}
}

// forwards reads leaf_sequence_forwards_total{result} of an instance.
func forwards(t *testing.T, in instance, result string) float64 {
	t.Helper()
	mfs, err := in.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "leaf_sequence_forwards_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no leaf_sequence_forwards_total{result=%q}", result)
	return 0
}

// TestForwardsCounted: calls forwarded to the owner over gRPC are counted
// in leaf_sequence_forwards_total on the instance that forwarded them,
// with the HTTP routes' forwards, in the same series: a sequence's Next
// and Current and an ordered tag's ids, over google.golang.org/grpc and
// a Connect client; a forward the owner does not answer is failed.
func TestForwardsCounted(t *testing.T) {
	ins := twoInstances(t)
	ctx := t.Context()
	// from does not own the section of key, to does; tagFrom does not
	// own the ordered tag.
	from, to := ins[0], ins[1]
	key := ""
	for i := 0; key == "" && i < 100; i++ {
		k := "k" + strconv.Itoa(i)
		if _, err := ins[0].seq.Current(ctx, "inbox", k); errors.As(err, new(*sequence.NotOwnerError)) {
			key = k
		}
	}
	if key == "" {
		t.Fatal("instance 0 owns every key")
	}
	tagFrom := ins[0]
	if _, err := tagFrom.seq.NextTag(ctx, "ticks", 1); !errors.As(err, new(*sequence.NotOwnerError)) {
		tagFrom = ins[1]
	}

	cc, err := grpc.NewClient(strings.TrimPrefix(from.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	seqs := leafv1connect.NewSequenceServiceClient(http.DefaultClient, from.url)
	ids := leafv1connect.NewIdServiceClient(h2c(t), tagFrom.url, connect.WithGRPC())

	if got := forwards(t, from, "ok") + forwards(t, to, "ok"); got != 0 {
		t.Fatalf("%v forwards before any call", got)
	}
	if _, err := invoke[leafv1.NextResponse](t, cc, "/leaf.v1.SequenceService/Next", &leafv1.NextRequest{Space: "inbox", Key: key, Count: new(int32(3))}); err != nil {
		t.Fatal(err)
	}
	if _, err := seqs.Current(ctx, connect.NewRequest(&leafv1.CurrentRequest{Space: "inbox", Key: key})); err != nil {
		t.Fatal(err)
	}
	if got := forwards(t, from, "ok"); got != 2 {
		t.Fatalf("after 2 forwarded sequence calls: %v forwards ok", got)
	}
	// The owner answered them itself: it forwarded nothing, refused
	// nothing.
	if got := forwards(t, to, "ok") + forwards(t, to, "refused"); got != 0 {
		t.Fatalf("the owner counted %v forwards", got)
	}

	before := forwards(t, tagFrom, "ok")
	if _, err := ids.GetSegmentId(ctx, connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "ticks"})); err != nil {
		t.Fatal(err)
	}
	if _, err := ids.BatchSegmentIds(ctx, connect.NewRequest(&leafv1.BatchSegmentIdsRequest{Tag: "ticks", Count: 2})); err != nil {
		t.Fatal(err)
	}
	if got := forwards(t, tagFrom, "ok"); got != before+2 {
		t.Fatalf("after 2 forwarded calls of an ordered tag: %v forwards ok, want %v", got, before+2)
	}

	// The HTTP route counts in the same series.
	before = forwards(t, from, "ok")
	resp, err := http.Get(from.url + "/api/sequence/next/inbox/" + key)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := forwards(t, from, "ok"); resp.StatusCode != http.StatusOK || got != before+1 {
		t.Fatalf("after a forwarded HTTP request (%d): %v forwards ok, want %v", resp.StatusCode, got, before+1)
	}

	// The owner gone: the forward fails, and is counted so.
	_ = to.srv.Close()
	_, err = invoke[leafv1.NextResponse](t, cc, "/leaf.v1.SequenceService/Next", &leafv1.NextRequest{Space: "inbox", Key: key})
	if grpcCode(err) != "Unavailable" || reason(err) != "unavailable" {
		t.Fatalf("Next with the owner gone: %v", err)
	}
	if got := forwards(t, from, "failed"); got != 1 {
		t.Fatalf("%v forwards failed, want 1", got)
	}
}
