package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/leafid/leaf/service"
)

// httpMetrics are the request counts and latencies, by route pattern,
// method and status (service.RequestMetrics). Route patterns, methods and
// statuses are few.
type httpMetrics = service.RequestMetrics[seriesKey]

type seriesKey struct {
	route, method string
	status        int
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	return service.NewRequestMetrics(reg, service.MetricNames{
		Requests:     "leaf_http_requests_total",
		RequestsHelp: "HTTP requests by route pattern, method and status.",
		Duration:     "leaf_http_request_duration_seconds",
		DurationHelp: "HTTP request latency by route pattern, method and status.",
	}, []string{"route", "method", "status"}, func(k seriesKey) []string {
		return []string{k.route, k.method, strconv.Itoa(k.status)}
	})
}

// observeRequest counts one request.
func observeRequest(m *httpMetrics, route, method string, status int, took time.Duration) {
	m.Observe(seriesKey{route: route, method: methodLabel(method), status: status}, took)
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
