package grpcapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/grpcapi"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

// adminServer is one server of both APIs, the real HTTP API and gRPC on
// one port, over the same tags, as leaf serve wires them.
type adminServer struct {
	url  string
	rows *segmenttest.Ordered
}

// adminSettings choose what an adminServer serves.
type adminSettings struct {
	biz     bool     // formatted and opaque tags
	keys    []string // opaque keys
	ordered bool     // ordered tags
}

func newAdminServer(t *testing.T, set adminSettings) *adminServer {
	t.Helper()
	rows := segmenttest.NewOrdered(segmenttest.New(segment.Tag{Name: "orders", MaxID: 1, Step: 1000}, segment.Tag{Name: "ticks", MaxID: 1, Step: 1000}), "ticks")
	biz := bizidtest.New(rows.MemStore)
	kinds := service.NewRegistry(biz, nil, nil)
	alloc := segment.New(rows.MemStore, segment.Options{RefreshInterval: -1})
	t.Cleanup(func() { _ = alloc.Close() })
	s := &adminServer{rows: rows}
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	svc := service.Config{Segments: alloc, Kinds: kinds, Tags: rows, Metrics: reg, Logger: log}
	if set.biz {
		var keys [][]byte
		for _, k := range set.keys {
			keys = append(keys, []byte(k))
		}
		is, err := bizid.New(bizid.Options{Store: biz, IDs: alloc, Keys: keys,
			IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) }})
		if err != nil {
			t.Fatal(err)
		}
		svc.Kinds, svc.Biz, svc.BizTags = service.NewRegistry(biz, is, alloc), is, biz
	}
	if set.ordered {
		svc.Ordered = rows
	}
	one := service.New(svc)
	api := httpapi.Config{Service: one, AdminToken: adminToken, Registry: reg, Logger: log}
	rpc := grpcapi.Config{Service: one, AdminToken: adminToken, Registry: reg, Logger: log}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: grpcapi.New(rpc, httpapi.New(api)), Protocols: grpcapi.ServerProtocols(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	s.url = "http://" + ln.Addr().String()
	return s
}

// grpcConn is a google.golang.org/grpc connection to the server.
func (s *adminServer) grpcConn(t *testing.T) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(strings.TrimPrefix(s.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// asJSON is a request message as the HTTP admin API's body: the same
// members by the same names (numbers of 64 bits as strings, which it
// takes too). Without tag when the tag is in the path.
func asJSON(t *testing.T, m proto.Message, withTag bool) []byte {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if withTag {
		return b
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	delete(body, "tag")
	b, _ = json.Marshal(body)
	return b
}

// httpAdmin sends an admin request to the HTTP API and returns its status
// and body.
func httpAdmin(t *testing.T, method, url string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestAdminTagRulesAsHTTP: CreateTag and UpdateTag refuse what POST and
// PATCH /api/admin/tags refuse, with the same code and message: each
// request goes to both APIs of one server, over google.golang.org/grpc
// and HTTP.
func TestAdminTagRulesAsHTTP(t *testing.T) {
	str := func(s string) *string { return &s }
	servers := map[string]*adminServer{
		"":          newAdminServer(t, adminSettings{biz: true, keys: []string{opaqueKey}, ordered: true}),
		"no key":    newAdminServer(t, adminSettings{biz: true, ordered: true}),
		"no biz":    newAdminServer(t, adminSettings{ordered: true}),
		"unordered": newAdminServer(t, adminSettings{biz: true, keys: []string{opaqueKey}}),
	}
	for _, tc := range []struct {
		name   string
		server string
		create *leafv1.CreateTagRequest
		update *leafv1.UpdateTagRequest
		code   string
		grpc   string
		says   string
	}{
		{name: "no seq", create: &leafv1.CreateTagRequest{Tag: "a", Format: str("ORD-{date:20060102}"), Reset_: str("day")},
			code: "invalid_format", grpc: "InvalidArgument", says: "no {seq}"},
		{name: "daily reset showing months", create: &leafv1.CreateTagRequest{Tag: "a", Format: str("ORD-{date:200601}-{seq}"), Reset_: str("day")},
			code: "invalid_format", grpc: "InvalidArgument", says: "same date"},
		{name: "unknown reset", create: &leafv1.CreateTagRequest{Tag: "a", Format: str("{seq}"), Reset_: str("hour")},
			code: "invalid_format", grpc: "InvalidArgument", says: "reset"},
		{name: "unknown zone", create: &leafv1.CreateTagRequest{Tag: "a", Format: str("{date:20060102}-{seq}"), Reset_: str("day"), TimeZone: str("Mars/Olympus")},
			code: "invalid_format", grpc: "InvalidArgument", says: "time zone"},
		{name: "zone without format", create: &leafv1.CreateTagRequest{Tag: "a", TimeZone: str("UTC")},
			code: "invalid_format", grpc: "InvalidArgument", says: "need a format"},
		{name: "opaque width", create: &leafv1.CreateTagRequest{Tag: "a", Opaque: new(int32(32))},
			code: "invalid_request", grpc: "InvalidArgument", says: "63 or 53"},
		{name: "max_id beyond the opaque bits", create: &leafv1.CreateTagRequest{Tag: "a", Opaque: new(int32(53)), MaxId: new(int64(1 << 53))},
			code: "invalid_format", grpc: "InvalidArgument", says: "53 bits"},
		{name: "bad step", create: &leafv1.CreateTagRequest{Tag: "a", Format: str("A-{seq}"), Step: new(int64(0))},
			code: "invalid_request", grpc: "InvalidArgument", says: "step"},
		{name: "bad tag", create: &leafv1.CreateTagRequest{Tag: "", Format: str("A-{seq}")},
			code: "invalid_tag", grpc: "InvalidArgument"},
		{name: "tag exists", create: &leafv1.CreateTagRequest{Tag: "orders", Format: str("A-{seq}")},
			code: "tag_exists", grpc: "AlreadyExists", says: `"orders"`},
		{name: "ordered and formatted without sequences", server: "unordered", create: &leafv1.CreateTagRequest{Tag: "o", Ordered: true, Format: str("O-{seq}")},
			code: "invalid_request", grpc: "InvalidArgument", says: "sequences on"},
		{name: "capped without sequences", server: "unordered", create: &leafv1.CreateTagRequest{Tag: "o", Format: str("O-{seq:3!}")},
			code: "invalid_request", grpc: "InvalidArgument", says: "one owner at a time"},
		{name: "ordered and opaque", create: &leafv1.CreateTagRequest{Tag: "o", Ordered: true, Opaque: new(int32(63))},
			code: "invalid_format", grpc: "InvalidArgument", says: "opaque tag is not ordered"},
		{name: "ordered and a zone", create: &leafv1.CreateTagRequest{Tag: "o", Ordered: true, TimeZone: str("UTC")},
			code: "invalid_format", grpc: "InvalidArgument", says: "need a format"},
		{name: "an empty format", create: &leafv1.CreateTagRequest{Tag: "o", Format: str("")},
			code: "invalid_format", grpc: "InvalidArgument", says: "empty"},
		{name: "opaque without a key", server: "no key", create: &leafv1.CreateTagRequest{Tag: "a", Opaque: new(int32(63))},
			code: "invalid_format", grpc: "InvalidArgument", says: "--opaque-key"},
		{name: "settings without business ids", server: "no biz", create: &leafv1.CreateTagRequest{Tag: "a", Format: str("X{seq}")},
			code: "invalid_request", grpc: "InvalidArgument", says: "not enabled"},
		{name: "ordered without sequences", server: "unordered", create: &leafv1.CreateTagRequest{Tag: "a", Ordered: true},
			code: "invalid_request", grpc: "InvalidArgument", says: "sequences on"},

		{name: "a format of digits only", update: &leafv1.UpdateTagRequest{Tag: "orders", Format: str("{date:20060102}{seq:4}"), Reset_: str("day")},
			code: "format_fixed", grpc: "FailedPrecondition"},
		{name: "nothing to update", update: &leafv1.UpdateTagRequest{Tag: "orders"},
			code: "invalid_request", grpc: "InvalidArgument", says: "nothing to update"},
		{name: "unknown tag", update: &leafv1.UpdateTagRequest{Tag: "nope", Format: str("X{seq}")},
			code: "unknown_tag", grpc: "NotFound", says: `"nope"`},
		{name: "update opaque width", update: &leafv1.UpdateTagRequest{Tag: "orders", Opaque: new(int32(7))},
			code: "invalid_request", grpc: "InvalidArgument", says: "63 or 53"},
		{name: "ordered given a format", update: &leafv1.UpdateTagRequest{Tag: "ticks", Format: str("O-{seq}")},
			code: "format_fixed", grpc: "FailedPrecondition", says: "ordered"},
		{name: "ordered made opaque", update: &leafv1.UpdateTagRequest{Tag: "ticks", Opaque: new(int32(63)), Step: new(int64(10))},
			code: "format_fixed", grpc: "FailedPrecondition", says: "ordered"},
		{name: "update without business ids", server: "no biz", update: &leafv1.UpdateTagRequest{Tag: "orders", Format: str("X{seq}")},
			code: "invalid_request", grpc: "InvalidArgument", says: "not enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := servers[tc.server]
			ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+adminToken)
			var (
				grpcErr  error
				httpCode int
				httpBody []byte
			)
			if tc.create != nil {
				grpcErr = s.grpcConn(t).Invoke(ctx, "/leaf.v1.AdminService/CreateTag", tc.create, new(leafv1.CreateTagResponse))
				httpCode, httpBody = httpAdmin(t, http.MethodPost, s.url+"/api/admin/tags", asJSON(t, tc.create, true))
			} else {
				grpcErr = s.grpcConn(t).Invoke(ctx, "/leaf.v1.AdminService/UpdateTag", tc.update, new(leafv1.UpdateTagResponse))
				httpCode, httpBody = httpAdmin(t, http.MethodPatch, s.url+"/api/admin/tags/"+tc.update.GetTag(), asJSON(t, tc.update, false))
			}
			if grpcCode(grpcErr) != tc.grpc || reason(grpcErr) != tc.code || !strings.Contains(status.Convert(grpcErr).Message(), tc.says) {
				t.Errorf("gRPC: %v (reason %q); want %s %s saying %q", grpcErr, reason(grpcErr), tc.grpc, tc.code, tc.says)
			}
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(httpBody, &e); err != nil || httpCode < 400 {
				t.Fatalf("HTTP: %d %s", httpCode, httpBody)
			}
			if e.Error.Code != reason(grpcErr) || e.Error.Message != status.Convert(grpcErr).Message() {
				t.Errorf("HTTP answers %s %q, gRPC %s %q", e.Error.Code, e.Error.Message, reason(grpcErr), status.Convert(grpcErr).Message())
			}
		})
	}
}

// TestAdminTagSettings: over a Connect client and google.golang.org/grpc's,
// CreateTag makes formatted, opaque and ordered tags, UpdateTag gives a
// plain tag a format and a formatted one a new zone, and every call shows
// the tag's settings as the HTTP admin API shows them.
func TestAdminTagSettings(t *testing.T) {
	s := newAdminServer(t, adminSettings{biz: true, keys: []string{opaqueKey}, ordered: true})
	c := leafv1connect.NewAdminServiceClient(http.DefaultClient, s.url, connect.WithProtoJSON())
	ids := leafv1connect.NewIdServiceClient(http.DefaultClient, s.url)
	ctx := t.Context()
	str := func(s string) *string { return &s }

	fmtTag, err := c.CreateTag(ctx, withToken(&leafv1.CreateTagRequest{Tag: "ord", Step: new(int64(100)),
		Format: str("ORD-{date:20060102}-{seq:6}"), Reset_: str("day"), TimeZone: str("Asia/Shanghai")}, adminToken))
	if err != nil {
		t.Fatal(err)
	}
	if m := fmtTag.Msg.GetTag(); m.GetFormat() != "ORD-{date:20060102}-{seq:6}" || m.GetReset_() != "day" || m.GetTimeZone() != "Asia/Shanghai" ||
		m.GetStep() != 100 || m.GetOpaque() != 0 || m.GetOrdered() {
		t.Fatalf("formatted tag = %v", m)
	}
	// Served as formatted at once: its texts are not int64 ids.
	if _, err := ids.GetSegmentId(ctx, connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "ord"})); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("GetSegmentId of the formatted tag: %v", err)
	}

	// A format without reset resets never, in UTC.
	never, err := c.CreateTag(ctx, withToken(&leafv1.CreateTagRequest{Tag: "tix", Format: str("T-{seq}")}, adminToken))
	if err != nil || never.Msg.GetTag().GetReset_() != "never" || never.Msg.GetTag().GetTimeZone() != "UTC" {
		t.Fatalf("formatted tag with defaults = %v, %v", never, err)
	}

	opq, err := c.CreateTag(ctx, withToken(&leafv1.CreateTagRequest{Tag: "users", Opaque: new(int32(53))}, adminToken))
	if err != nil {
		t.Fatal(err)
	}
	if m := opq.Msg.GetTag(); m.GetOpaque() != 53 || m.GetKeyId() != bizid.TagKeyID(bizid.KeyID([]byte(opaqueKey))) || m.GetFormat() != "" || m.GetReset_() != "" {
		t.Fatalf("opaque tag = %v", m)
	}
	id, err := ids.GetSegmentId(ctx, connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "users"}))
	if err != nil || id.Msg.GetId() == 1 {
		t.Fatalf("the opaque tag's first id = %v, %v; want its number 1 scrambled", id, err)
	}

	// google.golang.org/grpc's client, the token in the metadata.
	cc := s.grpcConn(t)
	gctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+adminToken)
	ordered := new(leafv1.CreateTagResponse)
	if err := cc.Invoke(gctx, "/leaf.v1.AdminService/CreateTag", &leafv1.CreateTagRequest{Tag: "seq", Ordered: true}, ordered); err != nil {
		t.Fatal(err)
	}
	if m := ordered.GetTag(); !m.GetOrdered() || m.GetFormat() != "" || m.GetOpaque() != 0 {
		t.Fatalf("ordered tag = %v", m)
	}
	if ok, _ := s.rows.Ordered(ctx, "seq"); !ok {
		t.Fatal("the ordered tag was not created ordered")
	}

	// UpdateTag: a plain tag takes a format with a letter, a formatted one
	// a new zone; members not given keep their values.
	up := new(leafv1.UpdateTagResponse)
	if err := cc.Invoke(gctx, "/leaf.v1.AdminService/UpdateTag", &leafv1.UpdateTagRequest{Tag: "orders", Format: str("O-{date:20060102}-{seq}"), Reset_: str("day")}, up); err != nil {
		t.Fatal(err)
	}
	if m := up.GetTag(); m.GetFormat() != "O-{date:20060102}-{seq}" || m.GetReset_() != "day" || m.GetTimeZone() != "UTC" {
		t.Fatalf("plain tag given a format = %v", m)
	}
	zone, err := c.UpdateTag(ctx, withToken(&leafv1.UpdateTagRequest{Tag: "orders", TimeZone: str("Asia/Shanghai"), Description: str("orders")}, adminToken))
	if m := zone.Msg.GetTag(); err != nil || m.GetTimeZone() != "Asia/Shanghai" || m.GetFormat() != "O-{date:20060102}-{seq}" || m.GetReset_() != "day" || m.GetDescription() != "orders" {
		t.Fatalf("new zone = %v, %v", zone, err)
	}
	if _, err := c.UpdateTag(ctx, withToken(&leafv1.UpdateTagRequest{Tag: "orders", Reset_: str("month")}, adminToken)); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("a new reset: %v", err)
	}
	if _, err := c.CreateTag(ctx, withToken(&leafv1.CreateTagRequest{Tag: "x", Format: str("X-{seq}")}, "")); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("without the token: %v", err)
	}

	// GetTag and ListTags show what GET /api/admin/tags/{tag} shows.
	list, err := c.ListTags(ctx, withToken(&leafv1.ListTagsRequest{}, adminToken))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*leafv1.Tag{}
	for _, tag := range list.Msg.GetTags() {
		listed[tag.GetTag()] = tag
	}
	for _, name := range []string{"ord", "tix", "users", "orders", "ticks"} {
		got, err := c.GetTag(ctx, withToken(&leafv1.GetTagRequest{Tag: name}, adminToken))
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got.Msg.GetTag(), listed[name]) {
			t.Errorf("GetTag %s = %v, ListTags %v", name, got.Msg.GetTag(), listed[name])
		}
		code, body := httpAdmin(t, http.MethodGet, s.url+"/api/admin/tags/"+name, nil)
		var h map[string]any
		if err := json.Unmarshal(body, &h); err != nil || code != http.StatusOK {
			t.Fatalf("HTTP GET %s: %d %s", name, code, body)
		}
		m := got.Msg.GetTag()
		for member, want := range map[string]any{"format": m.GetFormat(), "reset": m.GetReset_(), "time_zone": m.GetTimeZone(),
			"opaque": float64(m.GetOpaque()), "key_id": m.GetKeyId(), "pruned_before": m.GetPrunedBefore(), "description": m.GetDescription()} {
			got, ok := h[member]
			if !ok { // omitted when empty
				got = map[bool]any{true: float64(0), false: ""}[member == "opaque"]
			}
			if got != want {
				t.Errorf("%s: HTTP shows %s %v, gRPC %v", name, member, got, want)
			}
		}
	}
}

// connectReason is the leaf error code of a connect client's error, from
// its ErrorInfo.
func connectReason(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok && info.GetDomain() == "leaf" {
				return strings.ToLower(info.GetReason())
			}
		}
	}
	return ""
}

// TestAdminRevealId: RevealId answers what GET
// /api/admin/tags/{tag}/reveal/{id} answers, over google.golang.org/grpc's
// client and a Connect one, and refuses what the route refuses with the
// same code and message.
func TestAdminRevealId(t *testing.T) {
	s := newAdminServer(t, adminSettings{biz: true, keys: []string{opaqueKey}, ordered: true})
	off := newAdminServer(t, adminSettings{ordered: true})
	ctx := t.Context()
	c := leafv1connect.NewAdminServiceClient(http.DefaultClient, s.url, connect.WithProtoJSON())
	cc := s.grpcConn(t)
	gctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+adminToken)
	if _, err := c.CreateTag(ctx, withToken(&leafv1.CreateTagRequest{Tag: "users", Opaque: new(int32(53))}, adminToken)); err != nil {
		t.Fatal(err)
	}
	got, err := leafv1connect.NewIdServiceClient(http.DefaultClient, s.url).BatchSegmentIds(ctx,
		connect.NewRequest(&leafv1.BatchSegmentIdsRequest{Tag: "users", Count: 3}))
	if err != nil {
		t.Fatal(err)
	}
	numbers := map[int64]bool{}
	for _, id := range got.Msg.GetIds() {
		byConnect, err := c.RevealId(ctx, withToken(&leafv1.RevealIdRequest{Tag: "users", Id: id}, adminToken))
		if err != nil {
			t.Fatal(err)
		}
		byGRPC := new(leafv1.RevealIdResponse)
		if err := cc.Invoke(gctx, "/leaf.v1.AdminService/RevealId", &leafv1.RevealIdRequest{Tag: "users", Id: id}, byGRPC); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(byConnect.Msg, byGRPC) || byGRPC.GetTag() != "users" || byGRPC.GetId() != id {
			t.Fatalf("reveal of %d: Connect %v, gRPC %v", id, byConnect.Msg, byGRPC)
		}
		code, body := httpAdmin(t, http.MethodGet, s.url+"/api/admin/tags/users/reveal/"+strconv.FormatInt(id, 10), nil)
		want := fmt.Sprintf(`{"tag":"users","id":"%d","number":"%d"}`, id, byGRPC.GetNumber())
		if code != http.StatusOK || string(body) != want {
			t.Fatalf("HTTP reveal of %d: %d %s, want %s", id, code, body, want)
		}
		numbers[byGRPC.GetNumber()] = true
	}
	if !numbers[1] || !numbers[2] || !numbers[3] {
		t.Fatalf("the first batch revealed %v, want the numbers 1, 2 and 3", numbers)
	}
	// An id is the tag's only when its number lies below the row's
	// max_id: handed out in a range. One bit flipped makes an id of the
	// domain whose number no range held.
	row, err := s.rows.Tag(ctx, "users")
	if err != nil {
		t.Fatal(err)
	}
	cipher, err := bizid.NewTagCipher([]byte(opaqueKey), 53, "users")
	if err != nil {
		t.Fatal(err)
	}
	atMax, err := cipher.Encode(row.MaxID)
	if err != nil {
		t.Fatal(err)
	}
	lastHanded, err := cipher.Encode(row.MaxID - 1)
	if err != nil {
		t.Fatal(err)
	}
	forged := got.Msg.GetIds()[0] ^ 1<<40
	if r, err := c.RevealId(ctx, withToken(&leafv1.RevealIdRequest{Tag: "users", Id: lastHanded}, adminToken)); err != nil || r.Msg.GetNumber() != row.MaxID-1 {
		t.Fatalf("reveal of the last number of the range: %v, %v", r, err)
	}

	for _, tc := range []struct {
		name   string
		server *adminServer
		tag    string
		id     int64
		token  string
		code   string
		grpc   string
		says   string
		// otherMessage: the route refuses the id in its own words, as a
		// path that is not a number.
		otherMessage bool
	}{
		{name: "unknown tag", tag: "nope", id: 5, code: "unknown_tag", grpc: "NotFound", says: `"nope" does not exist`},
		{name: "plain tag", tag: "orders", id: 5, code: "invalid_request", grpc: "InvalidArgument", says: `"orders" is not opaque`},
		{name: "ordered tag", tag: "ticks", id: 5, code: "invalid_request", grpc: "InvalidArgument", says: "not opaque"},
		{name: "id beyond the bits", tag: "users", id: 1 << 53, code: "invalid_id", grpc: "InvalidArgument", says: "outside 1..9007199254740991"},
		{name: "id zero", tag: "users", id: 0, code: "invalid_id", grpc: "InvalidArgument", says: "outside"},
		{name: "forged id", tag: "users", id: forged, code: "invalid_id", grpc: "InvalidArgument", says: `was never issued by biz tag "users"`},
		{name: "id of the number at max_id", tag: "users", id: atMax, code: "invalid_id", grpc: "InvalidArgument", says: `was never issued by biz tag "users"`},
		{name: "negative id", tag: "users", id: -5, code: "invalid_id", grpc: "InvalidArgument", says: "non-negative", otherMessage: true},
		{name: "negative id of a plain tag", tag: "orders", id: -5, code: "invalid_id", grpc: "InvalidArgument", says: "non-negative", otherMessage: true},
		{name: "bad tag", tag: strings.Repeat("t", 129), id: 5, code: "invalid_tag", grpc: "InvalidArgument"},
		{name: "no token", tag: "users", id: 5, token: "-", code: "unauthorized", grpc: "Unauthenticated"},
		{name: "wrong token", tag: "users", id: 5, token: "not-" + adminToken, code: "unauthorized", grpc: "Unauthenticated"},
		{name: "business ids off", server: off, tag: "orders", id: 5, code: "invalid_request", grpc: "InvalidArgument", says: "not enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := s
			if tc.server != nil {
				srv = tc.server
			}
			token := tc.token
			switch token {
			case "":
				token = adminToken
			case "-":
				token = ""
			}
			req := &leafv1.RevealIdRequest{Tag: tc.tag, Id: tc.id}
			gctx := ctx
			if token != "" {
				gctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
			}
			grpcErr := srv.grpcConn(t).Invoke(gctx, "/leaf.v1.AdminService/RevealId", req, new(leafv1.RevealIdResponse))
			msg := status.Convert(grpcErr).Message()
			if grpcCode(grpcErr) != tc.grpc || reason(grpcErr) != tc.code || !strings.Contains(msg, tc.says) {
				t.Errorf("gRPC: %v (reason %q); want %s %s saying %q", grpcErr, reason(grpcErr), tc.grpc, tc.code, tc.says)
			}
			_, connectErr := leafv1connect.NewAdminServiceClient(http.DefaultClient, srv.url).RevealId(ctx, withToken(req, token))
			var ce *connect.Error
			if !errors.As(connectErr, &ce) || camel(ce.Code().String()) != tc.grpc || connectReason(connectErr) != tc.code || ce.Message() != msg {
				t.Errorf("Connect: %v (reason %q); want %s %s %q", connectErr, connectReason(connectErr), tc.grpc, tc.code, msg)
			}

			hreq, err := http.NewRequest(http.MethodGet, srv.url+"/api/admin/tags/"+url.PathEscape(tc.tag)+"/reveal/"+strconv.FormatInt(tc.id, 10), nil)
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				hreq.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(hreq)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode < 400 {
				t.Fatalf("HTTP: %d %v", resp.StatusCode, err)
			}
			if e.Error.Code != tc.code || !tc.otherMessage && e.Error.Message != msg {
				t.Errorf("HTTP answers %s %q, gRPC %s %q", e.Error.Code, e.Error.Message, tc.code, msg)
			}
		})
	}
}
