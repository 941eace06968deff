package service

import (
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// LatencyBuckets are the buckets of both edges' request latency
// histograms, from 100 µs to 5 s.
var LatencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// Register registers c on reg, or returns the collector already registered
// in its place (an edge may be built twice with one registry, as tests do).
// Any other refusal is a bug: it panics.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

// counterValue reads a counter.
func counterValue(c prometheus.Counter) int64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return 0
	}
	return int64(m.GetCounter().GetValue())
}

// RequestMetrics count an edge's requests and their latencies, in a
// counter and a histogram of the same labels, read from a key K of a few
// values. The series of each key are looked up once and kept in a map
// that is replaced whole when a key is new: a request then costs one map
// read, where the vectors' own lookup builds and hashes a label map on
// every call. Keys must be few (routes and statuses, procedures and
// codes): every one is kept.
type RequestMetrics[K comparable] struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	values   func(K) []string

	series atomic.Pointer[map[K]requestSeries]
	mu     sync.Mutex // serialises the replacement of series
}

type requestSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// MetricNames are the names and helps of the two metrics of an edge.
type MetricNames struct {
	Requests, RequestsHelp string
	Duration, DurationHelp string
}

// NewRequestMetrics registers the counter and the histogram (of
// LatencyBuckets) named by names, with labels, on reg; values gives a key's
// label values, in the order of labels.
func NewRequestMetrics[K comparable](reg prometheus.Registerer, names MetricNames, labels []string, values func(K) []string) *RequestMetrics[K] {
	m := &RequestMetrics[K]{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: names.Requests, Help: names.RequestsHelp}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: names.Duration, Help: names.DurationHelp, Buckets: LatencyBuckets,
		}, labels),
		values: values,
	}
	m.requests = Register(reg, m.requests)
	m.duration = Register(reg, m.duration)
	m.series.Store(&map[K]requestSeries{})
	return m
}

// Observe counts one request of key k that took took.
func (m *RequestMetrics[K]) Observe(k K, took time.Duration) {
	p, ok := (*m.series.Load())[k]
	if !ok {
		p = m.add(k)
	}
	p.requests.Inc()
	p.duration.Observe(took.Seconds())
}

// add looks up the series of a new key and publishes a map with it.
func (m *RequestMetrics[K]) add(k K) requestSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.series.Load()
	if p, ok := old[k]; ok {
		return p
	}
	v := m.values(k)
	p := requestSeries{requests: m.requests.WithLabelValues(v...), duration: m.duration.WithLabelValues(v...)}
	next := maps.Clone(old)
	next[k] = p
	m.series.Store(&next)
	return p
}
