package grpcapi_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
	"github.com/leafid/leaf/service"
)

// grpcCode is the name of the gRPC code of err, as google.golang.org/grpc
// reads it.
func grpcCode(err error) string { return status.Code(err).String() }

// reason is the leaf error code of err, from its ErrorInfo.
func reason(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == "leaf" {
			return strings.ToLower(info.GetReason())
		}
	}
	return ""
}

// TestErrorMapping: each failure reaches a gRPC client with the gRPC code
// of its service code, and the leaf code itself in an ErrorInfo detail.
func TestErrorMapping(t *testing.T) {
	f := newFixture(t, nil)
	cc := f.grpcConn(t)
	for _, tc := range []struct {
		name    string
		method  string
		req     any
		token   string
		code    string // service code
		grpc    string // gRPC code, by name
		message string // a part of the message
	}{
		{"unknown tag", "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "nope"}, "", service.UnknownTag, "NotFound", `"nope" does not exist`},
		{"empty tag", "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{}, "", service.InvalidTag, "InvalidArgument", "empty"},
		{"tag too long", "/leaf.v1.IdService/BatchSegmentIds", &leafv1.BatchSegmentIdsRequest{Tag: strings.Repeat("x", 129), Count: 1}, "", service.InvalidTag, "InvalidArgument", "128"},
		{"count 0", "/leaf.v1.IdService/BatchSegmentIds", &leafv1.BatchSegmentIdsRequest{Tag: "orders"}, "", service.InvalidCount, "InvalidArgument", "1 to 10000"},
		{"count over the batch limit", "/leaf.v1.IdService/BatchSnowflakeIds", &leafv1.BatchSnowflakeIdsRequest{Count: service.MaxCount + 1}, "", service.InvalidCount, "InvalidArgument", "1 to 10000"},
		{"negative count", "/leaf.v1.IdService/BatchUuids", &leafv1.BatchUuidsRequest{Count: -1}, "", service.InvalidCount, "InvalidArgument", ""},
		{"range over the limit", "/leaf.v1.IdService/GetSegmentRange", &leafv1.GetSegmentRangeRequest{Tag: "orders", Count: service.MaxRangeCount + 1}, "", service.InvalidCount, "InvalidArgument", "1 to 1000000"},
		{"negative id", "/leaf.v1.IdService/DecodeSnowflakeId", &leafv1.DecodeSnowflakeIdRequest{Id: -1}, "", service.InvalidID, "InvalidArgument", ""},
		{"interval backwards", "/leaf.v1.IdService/GetSnowflakeBounds", &leafv1.GetSnowflakeBoundsRequest{From: timestamppb.New(time.Unix(2e9, 0)), To: timestamppb.New(time.Unix(1e9, 0))}, "", service.InvalidRequest, "InvalidArgument", "before it begins"},
		{"interval without an end", "/leaf.v1.IdService/GetUuidBounds", &leafv1.GetUuidBoundsRequest{From: timestamppb.New(time.Unix(1e9, 0))}, "", service.InvalidRequest, "InvalidArgument", "to is required"},
		{"bad uuid", "/leaf.v1.IdService/DecodeUuid", &leafv1.DecodeUuidRequest{Uuid: "x"}, "", service.InvalidID, "InvalidArgument", ""},
		{"exhausted tag", "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "spent"}, "", service.TagExhausted, "ResourceExhausted", "last id"},
		{"misconfigured tag", "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "broken"}, "", service.TagMisconfigured, "FailedPrecondition", "step below 1"},
		{"no token", "/leaf.v1.AdminService/ListTags", &leafv1.ListTagsRequest{}, "", service.Unauthorized, "Unauthenticated", "missing bearer token"},
		{"wrong token", "/leaf.v1.AdminService/ListTags", &leafv1.ListTagsRequest{}, "guess", service.Unauthorized, "Unauthenticated", "wrong bearer token"},
		{"tag exists", "/leaf.v1.AdminService/CreateTag", &leafv1.CreateTagRequest{Tag: "orders"}, adminToken, service.TagExists, "AlreadyExists", `"orders" already exists`},
		{"bad step", "/leaf.v1.AdminService/CreateTag", &leafv1.CreateTagRequest{Tag: "new", Step: new(int64(0))}, adminToken, service.InvalidRequest, "InvalidArgument", "step"},
		{"unknown tag, admin", "/leaf.v1.AdminService/GetTag", &leafv1.GetTagRequest{Tag: "nope"}, adminToken, service.UnknownTag, "NotFound", ""},
		{"nothing to update", "/leaf.v1.AdminService/UpdateTag", &leafv1.UpdateTagRequest{Tag: "orders"}, adminToken, service.InvalidRequest, "InvalidArgument", "nothing to update"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			if tc.token != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tc.token)
			}
			err := cc.Invoke(ctx, tc.method, tc.req, new(leafv1.GetTagResponse))
			if grpcCode(err) != tc.grpc || reason(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.message) {
				t.Fatalf("err = %v (reason %q); want %s, reason %s, a message with %q", err, reason(err), tc.grpc, tc.code, tc.message)
			}
			if want := service.GRPCCode(tc.code).String(); !strings.EqualFold(strings.ReplaceAll(want, "_", ""), tc.grpc) {
				t.Errorf("service maps %s to %s, the case expects %s", tc.code, want, tc.grpc)
			}
		})
	}
}

// TestUnavailable: a store that does not answer, with nothing in the
// buffers, is Unavailable with a RetryInfo, and a message that names no
// detail of the store.
func TestUnavailable(t *testing.T) {
	f := newFixture(t, nil)
	f.store.SetFail(errors.New("dial tcp 10.1.2.3:3306: connection refused"))
	err := f.grpcConn(t).Invoke(t.Context(), "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: "orders"}, new(leafv1.GetSegmentIdResponse))
	if grpcCode(err) != "Unavailable" || reason(err) != service.Unavailable {
		t.Fatalf("err = %v; want Unavailable", err)
	}
	if strings.Contains(err.Error(), "10.1.2.3") {
		t.Errorf("the error %q names the store's address", err)
	}
	var retry *errdetails.RetryInfo
	for _, d := range status.Convert(err).Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("no RetryInfo in %v", status.Convert(err).Details())
	}
}

// TestModesOff: a mode the server does not serve is Unimplemented, as its
// HTTP routes are 404 not_found; without an admin token the admin
// service is not there at all.
func TestModesOff(t *testing.T) {
	f := newFixture(t, func(c *config) {
		c.svc.Segments, c.svc.Snowflake, c.svc.UUIDs, c.rpc.AdminToken = nil, nil, nil, ""
	})
	cc := f.grpcConn(t)
	for method, req := range map[string]any{
		"/leaf.v1.IdService/GetSegmentId":    &leafv1.GetSegmentIdRequest{Tag: "orders"},
		"/leaf.v1.IdService/GetSnowflakeId":  &leafv1.GetSnowflakeIdRequest{},
		"/leaf.v1.IdService/GetUuid":         &leafv1.GetUuidRequest{},
		"/leaf.v1.AdminService/ListSegments": &leafv1.ListSegmentsRequest{},
	} {
		err := cc.Invoke(t.Context(), method, req, new(leafv1.GetSegmentIdResponse))
		if grpcCode(err) != "Unimplemented" {
			t.Errorf("%s: err = %v; want Unimplemented", method, err)
		}
		if !strings.Contains(method, "Admin") && reason(err) != service.NotFound {
			t.Errorf("%s: reason %q; want not_found", method, reason(err))
		}
	}
	// Decoding a UUID needs no generator.
	var res leafv1.DecodeUuidResponse
	if err := cc.Invoke(t.Context(), "/leaf.v1.IdService/DecodeUuid", &leafv1.DecodeUuidRequest{Uuid: "01890a5d-ac96-774b-bcce-b302099a8057"}, &res); err != nil {
		t.Errorf("DecodeUuid: %v", err)
	}
}

// TestConnectErrorsSameCode: a Connect client sees the same code and
// ErrorInfo as a gRPC client.
func TestConnectErrorsSameCode(t *testing.T) {
	f := newFixture(t, nil)
	for name, c := range f.idClients(t) {
		_, err := c.GetSegmentId(t.Context(), connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "nope"}))
		if connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("%s: err = %v; want not_found", name, err)
			continue
		}
		var ce *connect.Error
		if !errors.As(err, &ce) || len(ce.Details()) == 0 {
			t.Errorf("%s: no details in %v", name, err)
			continue
		}
		v, err := ce.Details()[0].Value()
		if info, ok := v.(*errdetails.ErrorInfo); err != nil || !ok || info.GetReason() != "UNKNOWN_TAG" {
			t.Errorf("%s: detail %v, %v; want ErrorInfo UNKNOWN_TAG", name, v, err)
		}
	}
	admin := leafv1connect.NewAdminServiceClient(http.DefaultClient, f.url())
	if _, err := admin.ListTags(t.Context(), connect.NewRequest(&leafv1.ListTagsRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("ListTags without a token: %v; want unauthenticated", err)
	}
}
