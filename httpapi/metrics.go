package httpapi

import (
	"errors"
	"maps"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/leafid/leaf/snowflake"
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
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, httpLabels),
	}
	m.requests = register(reg, m.requests)
	m.duration = register(reg, m.duration)
	m.series.Store(&map[seriesKey]seriesPair{})
	return m
}

// register registers c, or returns the collector already registered in its
// place (New may be called twice with one registry, as tests do).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
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

// Descriptors of the collectors. leaf_ids_issued_total has mode as a
// constant label and tag as a variable one in both collectors, so that
// both can be registered on one registry.
const issuedHelp = "Ids issued by this process, by mode and biz tag (empty for snowflake)."

var (
	segIssuedDesc = prometheus.NewDesc("leaf_ids_issued_total", issuedHelp,
		[]string{"tag"}, prometheus.Labels{"mode": "segment"})
	segLoadsDesc = prometheus.NewDesc("leaf_segment_loads_total",
		"Segment loads from the store, by biz tag and result (ok or error).",
		[]string{"tag", "result"}, nil)
	segStepDesc = prometheus.NewDesc("leaf_segment_step",
		"The step of the last segment load of a biz tag; the next load adapts it to how long the segment lasted.",
		[]string{"tag"}, nil)
	segRemainingDesc = prometheus.NewDesc("leaf_segment_remaining",
		"Ids left in both halves of a biz tag's buffer.",
		[]string{"tag"}, nil)
	segWaitsDesc = prometheus.NewDesc("leaf_segment_waits_total",
		"Requests that had to wait for a segment load, by biz tag.",
		[]string{"tag"}, nil)
	segRegressionsDesc = prometheus.NewDesc("leaf_segment_regressions_total",
		"Times a biz tag's row was found behind the highest max_id this process received, and moved forward.",
		[]string{"tag"}, nil)

	snowIssuedDesc = prometheus.NewDesc("leaf_ids_issued_total", issuedHelp,
		[]string{"tag"}, prometheus.Labels{"mode": "snowflake"})
	snowBackwardsDesc = prometheus.NewDesc("leaf_snowflake_clock_backwards_total",
		"Times the clock was seen moving backwards.", nil, nil)
	snowWorkerDesc = prometheus.NewDesc("leaf_snowflake_worker_id",
		"The worker id this process issues snowflake ids with; -1 while it holds no worker lease.", nil, nil)
	snowSeqWaitsDesc = prometheus.NewDesc("leaf_snowflake_sequence_waits_total",
		"Waits for the next unit of time (millisecond or second, per the layout) because the current one had no sequence number left.", nil, nil)
	snowEpochEndDesc = prometheus.NewDesc("leaf_snowflake_epoch_end_timestamp_seconds",
		"When the time field of the configured snowflake layout runs out, counted from the configured epoch, in Unix seconds.", nil, nil)
	snowLeaseRenewalsDesc = prometheus.NewDesc("leaf_snowflake_lease_renewals_total",
		"Worker-lease renewals and acquisitions that succeeded.", nil, nil)
	snowLeaseFailuresDesc = prometheus.NewDesc("leaf_snowflake_lease_failures_total",
		"Worker-lease renewals and acquisitions that failed.", nil, nil)
	snowLeaseExpiryDesc = prometheus.NewDesc("leaf_snowflake_lease_expiry_timestamp_seconds",
		"When the worker lease last acquired or renewed expires by the database's clock, in Unix seconds; absent with a fixed worker id.", nil, nil)
	snowLeaseRegressionsDesc = prometheus.NewDesc("leaf_snowflake_lease_regressions_total",
		"Renewals that found the worker lease gone back in time in the store.", nil, nil)
)

type segmentCollector struct{ src SegmentIDs }

// NewSegmentCollector exports the allocator's state at scrape time:
// leaf_ids_issued_total{mode="segment",tag}, leaf_segment_loads_total{tag,result},
// leaf_segment_step{tag}, leaf_segment_remaining{tag},
// leaf_segment_waits_total{tag} and leaf_segment_regressions_total{tag}.
// Only tags present in the snapshot appear.
func NewSegmentCollector(src SegmentIDs) prometheus.Collector {
	return segmentCollector{src: src}
}

func (segmentCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- segIssuedDesc
	ch <- segLoadsDesc
	ch <- segStepDesc
	ch <- segRemainingDesc
	ch <- segWaitsDesc
	ch <- segRegressionsDesc
}

func (s segmentCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range s.src.Snapshot() {
		var remaining int64
		for _, seg := range b.Segments {
			if seg != nil {
				remaining += seg.Remaining
			}
		}
		ch <- prometheus.MustNewConstMetric(segIssuedDesc, prometheus.CounterValue, float64(b.Issued), b.Tag)
		ch <- prometheus.MustNewConstMetric(segLoadsDesc, prometheus.CounterValue, float64(b.Loads), b.Tag, "ok")
		ch <- prometheus.MustNewConstMetric(segLoadsDesc, prometheus.CounterValue, float64(b.LoadFailures), b.Tag, "error")
		ch <- prometheus.MustNewConstMetric(segStepDesc, prometheus.GaugeValue, float64(b.Step), b.Tag)
		ch <- prometheus.MustNewConstMetric(segRemainingDesc, prometheus.GaugeValue, float64(remaining), b.Tag)
		ch <- prometheus.MustNewConstMetric(segWaitsDesc, prometheus.CounterValue, float64(b.Waits), b.Tag)
		ch <- prometheus.MustNewConstMetric(segRegressionsDesc, prometheus.CounterValue, float64(b.Regressions), b.Tag)
	}
}

// SnowflakeStatser is what the snowflake collector reads at scrape time
// (snowflake.Generator implements it).
type SnowflakeStatser interface {
	Stats() snowflake.Stats
}

type snowflakeCollector struct{ src SnowflakeStatser }

// NewSnowflakeCollector exports, at scrape time,
// leaf_ids_issued_total{mode="snowflake",tag=""},
// leaf_snowflake_clock_backwards_total, leaf_snowflake_worker_id (-1
// while no lease is held), leaf_snowflake_sequence_waits_total,
// leaf_snowflake_epoch_end_timestamp_seconds,
// leaf_snowflake_lease_renewals_total, leaf_snowflake_lease_failures_total,
// leaf_snowflake_lease_regressions_total and, with a leased worker id,
// leaf_snowflake_lease_expiry_timestamp_seconds.
func NewSnowflakeCollector(src SnowflakeStatser) prometheus.Collector {
	return snowflakeCollector{src: src}
}

func (snowflakeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- snowIssuedDesc
	ch <- snowBackwardsDesc
	ch <- snowWorkerDesc
	ch <- snowSeqWaitsDesc
	ch <- snowEpochEndDesc
	ch <- snowLeaseRenewalsDesc
	ch <- snowLeaseFailuresDesc
	ch <- snowLeaseRegressionsDesc
	ch <- snowLeaseExpiryDesc
}

func (s snowflakeCollector) Collect(ch chan<- prometheus.Metric) {
	st := s.src.Stats()
	ch <- prometheus.MustNewConstMetric(snowIssuedDesc, prometheus.CounterValue, float64(st.Issued), "")
	ch <- prometheus.MustNewConstMetric(snowBackwardsDesc, prometheus.CounterValue, float64(st.ClockBackwards))
	ch <- prometheus.MustNewConstMetric(snowWorkerDesc, prometheus.GaugeValue, float64(st.WorkerID))
	ch <- prometheus.MustNewConstMetric(snowSeqWaitsDesc, prometheus.CounterValue, float64(st.SequenceWaits))
	if !st.Exhausts.IsZero() {
		ch <- prometheus.MustNewConstMetric(snowEpochEndDesc, prometheus.GaugeValue, unixSeconds(st.Exhausts))
	}
	ch <- prometheus.MustNewConstMetric(snowLeaseRenewalsDesc, prometheus.CounterValue, float64(st.LeaseRenewals))
	ch <- prometheus.MustNewConstMetric(snowLeaseFailuresDesc, prometheus.CounterValue, float64(st.LeaseFailures))
	ch <- prometheus.MustNewConstMetric(snowLeaseRegressionsDesc, prometheus.CounterValue, float64(st.LeaseRegressions))
	if !st.LeaseExpires.IsZero() {
		ch <- prometheus.MustNewConstMetric(snowLeaseExpiryDesc, prometheus.GaugeValue, unixSeconds(st.LeaseExpires))
	}
}

// uuidIssuedDesc is leaf_ids_issued_total for mode "uuid".
var uuidIssuedDesc = prometheus.NewDesc("leaf_ids_issued_total", issuedHelp,
	[]string{"tag"}, prometheus.Labels{"mode": "uuid"})

// uuidCollector exports the UUIDs made as leaf_ids_issued_total{mode="uuid",tag=""}.
type uuidCollector struct{ u UUIDs }

// NewUUIDCollector returns the collector of u's count.
func NewUUIDCollector(u UUIDs) prometheus.Collector { return uuidCollector{u} }

func (c uuidCollector) Describe(ch chan<- *prometheus.Desc) { ch <- uuidIssuedDesc }

func (c uuidCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(uuidIssuedDesc, prometheus.CounterValue, float64(c.u.Issued()), "")
}

// unixSeconds is t in Unix seconds, to the millisecond.
func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// NewBuildInfoCollector exports leaf_build_info{version,goversion}, always
// 1, so that dashboards and alerts can tell which build each instance runs.
func NewBuildInfoCollector(version string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "leaf_build_info",
		Help:        "Always 1; its labels are the version of leaf and of Go it was built with.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}

// NewStoreUpCollector exports leaf_store_up, 1 while up() is true.
func NewStoreUpCollector(up func() bool) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "leaf_store_up",
		Help: "1 while the store answers, 0 from the first call it failed until it answers again.",
	}, func() float64 {
		if up() {
			return 1
		}
		return 0
	})
}

// NewSegmentLoadObserver registers the histogram
// leaf_segment_load_duration_seconds{result="ok"|"error"} on reg and returns
// an observer for segment.Options.OnLoad. It has no tag label: the
// allocator also times lookups of tags that do not exist, and those must
// not create series.
func NewSegmentLoadObserver(reg prometheus.Registerer) (func(tag string, took time.Duration, err error), error) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "leaf_segment_load_duration_seconds",
		Help:    "Time taken to load a segment from the store, by result (ok or error).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"result"})
	if err := reg.Register(h); err != nil {
		return nil, err
	}
	ok, failed := h.WithLabelValues("ok"), h.WithLabelValues("error")
	return func(_ string, took time.Duration, err error) {
		if err != nil {
			failed.Observe(took.Seconds())
			return
		}
		ok.Observe(took.Seconds())
	}, nil
}
