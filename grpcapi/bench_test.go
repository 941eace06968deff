package grpcapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/leafid/leaf/grpcapi"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
)

// constantID answers GetSegmentId with a constant: connect-go's own cost.
type constantID struct {
	leafv1connect.UnimplementedIdServiceHandler
}

func (constantID) GetSegmentId(context.Context, *connect.Request[leafv1.GetSegmentIdRequest]) (*connect.Response[leafv1.GetSegmentIdResponse], error) {
	return connect.NewResponse(&leafv1.GetSegmentIdResponse{Id: 1234567890123}), nil
}

// benchUnary serves one Connect unary call (protobuf, HTTP/1.1 framing)
// per op, in-process, without a network: the handler's cost alone.
func benchUnary(b *testing.B, h http.Handler) {
	body, err := proto.Marshal(&leafv1.GetSegmentIdRequest{Tag: "orders"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/leaf.v1.IdService/GetSegmentId", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/proto")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkGetSegmentId: the service's handler, with the real allocator,
// the metrics interceptor and the routing in front of the HTTP API.
func BenchmarkGetSegmentId(b *testing.B) {
	f := newFixture(b, nil)
	benchUnary(b, grpcapi.New(f.cfg, http.NotFoundHandler()))
}

// BenchmarkConstantHandler: a bare connect-go handler returning a
// constant, the baseline of the benchmark above.
func BenchmarkConstantHandler(b *testing.B) {
	mux := http.NewServeMux()
	mux.Handle(leafv1connect.NewIdServiceHandler(constantID{}))
	benchUnary(b, mux)
}
