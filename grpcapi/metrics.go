package grpcapi

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/service"
)

// callMetrics are the call counts and latencies, by procedure and gRPC
// code: the counterpart of the HTTP API's leaf_http_requests_total and
// leaf_http_request_duration_seconds, counted the same way
// (service.RequestMetrics). Procedures and codes are few.
type callMetrics struct {
	m *service.RequestMetrics[callKey]
}

type callKey struct{ procedure, code string }

func newCallMetrics(reg prometheus.Registerer) *callMetrics {
	return &callMetrics{m: service.NewRequestMetrics(reg, service.MetricNames{
		Requests:     "leaf_rpc_requests_total",
		RequestsHelp: "gRPC, gRPC-Web and Connect calls by procedure and gRPC code.",
		Duration:     "leaf_rpc_request_duration_seconds",
		DurationHelp: "gRPC, gRPC-Web and Connect call latency by procedure and gRPC code.",
	}, []string{"procedure", "code"}, func(k callKey) []string { return []string{k.procedure, k.code} })}
}

func (m *callMetrics) observe(procedure string, err error, took time.Duration) {
	code := "ok"
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	m.m.Observe(callKey{procedure: procedure, code: code}, took)
}

// The metrics are the outermost interceptor: a call refused for its token
// is counted too.

func (m *callMetrics) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		res, err := next(ctx, req)
		m.observe(req.Spec().Procedure, err, time.Since(start))
		return res, err
	}
}

func (m *callMetrics) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler counts the streaming calls (health's Watch,
// reflection) with the time until the stream ended.
func (m *callMetrics) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		start := time.Now()
		err := next(ctx, conn)
		m.observe(conn.Spec().Procedure, err, time.Since(start))
		return err
	}
}
