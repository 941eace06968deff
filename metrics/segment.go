package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

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
)

// segmentCollector exports the allocator's state at scrape time:
// leaf_ids_issued_total{mode="segment",tag}, leaf_segment_loads_total{tag,result},
// leaf_segment_step{tag}, leaf_segment_remaining{tag},
// leaf_segment_waits_total{tag} and leaf_segment_regressions_total{tag}.
// Only tags present in the snapshot appear.
type segmentCollector struct{ src Segments }

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

// LoadTimes is the histogram leaf_segment_load_duration_seconds{result="ok"|"error"}.
// It has no tag label: the allocator also times lookups of tags that do
// not exist, and those must not create series.
type LoadTimes struct {
	vec        *prometheus.HistogramVec
	ok, failed prometheus.Observer
}

// NewLoadTimes returns an empty histogram of segment loads; Register
// exports it when it is Sources.SegmentLoads.
func NewLoadTimes() *LoadTimes {
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "leaf_segment_load_duration_seconds",
		Help:    "Time taken to load a segment from the store, by result (ok or error).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"result"})
	return &LoadTimes{vec: vec, ok: vec.WithLabelValues("ok"), failed: vec.WithLabelValues("error")}
}

// Observe records one load; it is a segment.Options.OnLoad.
func (l *LoadTimes) Observe(_ string, took time.Duration, err error) {
	if err != nil {
		l.failed.Observe(took.Seconds())
		return
	}
	l.ok.Observe(took.Seconds())
}
