package grpcapi

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/leafid/leaf/leafapi"
	"github.com/prometheus/client_golang/prometheus"
)

// callMetrics are the call counts and latencies, by procedure and gRPC
// code: the counterpart of the HTTP API's leaf_http_requests_total and
// leaf_http_request_duration_seconds, whose buckets they share.
//
// As there, the series of each label set are looked up once and kept in a
// map replaced whole when a label set is new, so a call costs one map read.
// Procedures and codes are few.
type callMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	series atomic.Pointer[map[callKey]callSeries]
	mu     sync.Mutex // serialises the replacement of series
}

type callKey struct{ procedure, code string }

type callSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

var callLabels = []string{"procedure", "code"}

func newCallMetrics(reg prometheus.Registerer) *callMetrics {
	m := &callMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leaf_rpc_requests_total",
			Help: "gRPC, gRPC-Web and Connect calls by procedure and gRPC code.",
		}, callLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "leaf_rpc_request_duration_seconds",
			Help:    "gRPC, gRPC-Web and Connect call latency by procedure and gRPC code.",
			Buckets: leafapi.LatencyBuckets,
		}, callLabels),
	}
	m.requests = leafapi.Register(reg, m.requests)
	m.duration = leafapi.Register(reg, m.duration)
	m.series.Store(&map[callKey]callSeries{})
	return m
}

func (m *callMetrics) observe(procedure string, err error, took time.Duration) {
	code := "ok"
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	k := callKey{procedure: procedure, code: code}
	p, ok := (*m.series.Load())[k]
	if !ok {
		p = m.add(k)
	}
	p.requests.Inc()
	p.duration.Observe(took.Seconds())
}

func (m *callMetrics) add(k callKey) callSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.series.Load()
	if p, ok := old[k]; ok {
		return p
	}
	p := callSeries{
		requests: m.requests.WithLabelValues(k.procedure, k.code),
		duration: m.duration.WithLabelValues(k.procedure, k.code),
	}
	next := maps.Clone(old)
	next[k] = p
	m.series.Store(&next)
	return p
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
