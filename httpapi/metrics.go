package httpapi

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/leafid/leaf/leafapi"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// httpMetrics are the request counts and latencies, by route pattern,
// method and status.
//
// The series of each label set are looked up once and kept in a map that
// is replaced whole when a label set is new: a request then costs one map
// read, where the vectors' own lookup builds and hashes a label map on
// every call. Route patterns, methods and statuses are few, so the map
// stays small.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	series atomic.Pointer[map[seriesKey]seriesPair]
	mu     sync.Mutex // serialises the replacement of series
}

type seriesKey struct {
	route, method string
	status        int
}

type seriesPair struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

var httpLabels = []string{"route", "method", "status"}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leaf_http_requests_total",
			Help: "HTTP requests by route pattern, method and status.",
		}, httpLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "leaf_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern, method and status.",
			Buckets: leafapi.LatencyBuckets,
		}, httpLabels),
	}
	m.requests = leafapi.Register(reg, m.requests)
	m.duration = leafapi.Register(reg, m.duration)
	m.series.Store(&map[seriesKey]seriesPair{})
	return m
}

func (m *httpMetrics) observe(route, method string, status int, took time.Duration) {
	k := seriesKey{route: route, method: methodLabel(method), status: status}
	p, ok := (*m.series.Load())[k]
	if !ok {
		p = m.add(k)
	}
	p.requests.Inc()
	p.duration.Observe(took.Seconds())
}

// add looks up the series of a new label set and publishes a map with it.
func (m *httpMetrics) add(k seriesKey) seriesPair {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.series.Load()
	if p, ok := old[k]; ok {
		return p
	}
	status := strconv.Itoa(k.status)
	p := seriesPair{
		requests: m.requests.WithLabelValues(k.route, k.method, status),
		duration: m.duration.WithLabelValues(k.route, k.method, status),
	}
	next := maps.Clone(old)
	next[k] = p
	m.series.Store(&next)
	return p
}

// methodLabel bounds the method label to the standard methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// metricsHandler serves /metrics from the registry of the configuration.
func (s *server) metricsHandler() echo.HandlerFunc {
	h := promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{
		Registry:      s.cfg.Registry, // promhttp_metric_handler_errors_total
		ErrorHandling: promhttp.ContinueOnError,
	})
	return echo.WrapHandler(h)
}
