package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/segment"
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
	segWaitedLoadsDesc = prometheus.NewDesc("leaf_segment_waited_loads_total",
		"Segment loads that requests had to wait for, by biz tag: one however many requests waited on it.",
		[]string{"tag"}, nil)
	segRegressionsDesc = prometheus.NewDesc("leaf_segment_regressions_total",
		"Times a biz tag's row was found behind the highest max_id this process received, and moved forward.",
		[]string{"tag"}, nil)

	segTagsDesc = prometheus.NewDesc("leaf_segment_tags",
		"Biz tags with a buffer in this process.", nil, nil)
	segFailingDesc = prometheus.NewDesc("leaf_segment_tags_failing",
		"Biz tags whose last segment load failed.", nil, nil)
	segExportedDesc = prometheus.NewDesc("leaf_segment_tags_exported",
		"Biz tags with series of their own in this scrape: the ones named, the ones that need attention and the busiest.", nil, nil)
	segAllIssuedDesc = prometheus.NewDesc("leaf_segment_all_ids_issued_total",
		"Segment ids issued by this process, all biz tags together.", nil, nil)
	segAllLoadsDesc = prometheus.NewDesc("leaf_segment_all_loads_total",
		"Segment loads from the store, all biz tags together, by result (ok or error).", []string{"result"}, nil)
	segAllWaitsDesc = prometheus.NewDesc("leaf_segment_all_waits_total",
		"Requests that had to wait for a segment load, all biz tags together.", nil, nil)
	segAllRegressionsDesc = prometheus.NewDesc("leaf_segment_all_regressions_total",
		"Rows found behind the highest max_id this process received, and moved forward, all biz tags together.", nil, nil)
)

// segmentCollector exports the allocator's state at scrape time. Each tag
// chosen (see select.go) has leaf_ids_issued_total{mode="segment",tag},
// leaf_segment_loads_total{tag,result}, leaf_segment_step{tag},
// leaf_segment_remaining{tag}, leaf_segment_waits_total{tag},
// leaf_segment_waited_loads_total{tag} and
// leaf_segment_regressions_total{tag}. All tags together have
// leaf_segment_tags, leaf_segment_tags_failing, leaf_segment_tags_exported
// and the leaf_segment_all_* counters.
type segmentCollector struct {
	src   Segments
	named *namedTags
	now   func() time.Time

	mu      sync.Mutex // one collection at a time; guards the fields below
	watched map[string]*watch
	seen    uint64 // collections so far
}

func newSegmentCollector(src Sources) *segmentCollector {
	c := &segmentCollector{src: src.Segments, named: newNamedTags(src.SegmentTags), now: src.Now, watched: map[string]*watch{}}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

func (*segmentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{segIssuedDesc, segLoadsDesc, segStepDesc, segRemainingDesc, segWaitsDesc,
		segWaitedLoadsDesc, segRegressionsDesc, segTagsDesc, segFailingDesc, segExportedDesc, segAllIssuedDesc, segAllLoadsDesc,
		segAllWaitsDesc, segAllRegressionsDesc} {
		ch <- d
	}
}

func (c *segmentCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.seen++
	sel := selection{
		attention: best{n: MaxAttentionTags, before: attentionBefore},
		top:       best{n: TopTags, before: busierThan},
	}
	totals := c.src.EachTag(func(st segment.TagStats) {
		it := ranked{TagStats: st, rank: c.rank(st, now)}
		if c.named.has(st.Tag) {
			sel.named = append(sel.named, it)
			return
		}
		if it.rank != rankNone {
			sel.attention.offer(it)
		}
		sel.top.offer(it)
	})
	for tag, w := range c.watched {
		if w.seen != c.seen { // gone, or its counts went back to 0 with a new buffer
			delete(c.watched, tag)
		}
	}

	chosen := sel.chosen()
	for _, st := range chosen {
		ch <- prometheus.MustNewConstMetric(segIssuedDesc, prometheus.CounterValue, float64(st.Issued), st.Tag)
		ch <- prometheus.MustNewConstMetric(segLoadsDesc, prometheus.CounterValue, float64(st.Loads), st.Tag, "ok")
		ch <- prometheus.MustNewConstMetric(segLoadsDesc, prometheus.CounterValue, float64(st.LoadFailures), st.Tag, "error")
		ch <- prometheus.MustNewConstMetric(segStepDesc, prometheus.GaugeValue, float64(st.Step), st.Tag)
		ch <- prometheus.MustNewConstMetric(segRemainingDesc, prometheus.GaugeValue, float64(st.Remaining), st.Tag)
		ch <- prometheus.MustNewConstMetric(segWaitsDesc, prometheus.CounterValue, float64(st.Waits), st.Tag)
		ch <- prometheus.MustNewConstMetric(segWaitedLoadsDesc, prometheus.CounterValue, float64(st.WaitedLoads), st.Tag)
		ch <- prometheus.MustNewConstMetric(segRegressionsDesc, prometheus.CounterValue, float64(st.Regressions), st.Tag)
	}
	ch <- prometheus.MustNewConstMetric(segTagsDesc, prometheus.GaugeValue, float64(totals.Tags))
	ch <- prometheus.MustNewConstMetric(segFailingDesc, prometheus.GaugeValue, float64(totals.Failing))
	ch <- prometheus.MustNewConstMetric(segExportedDesc, prometheus.GaugeValue, float64(len(chosen)))
	ch <- prometheus.MustNewConstMetric(segAllIssuedDesc, prometheus.CounterValue, float64(totals.Issued))
	ch <- prometheus.MustNewConstMetric(segAllLoadsDesc, prometheus.CounterValue, float64(totals.Loads), "ok")
	ch <- prometheus.MustNewConstMetric(segAllLoadsDesc, prometheus.CounterValue, float64(totals.LoadFailures), "error")
	ch <- prometheus.MustNewConstMetric(segAllWaitsDesc, prometheus.CounterValue, float64(totals.Waits))
	ch <- prometheus.MustNewConstMetric(segAllRegressionsDesc, prometheus.CounterValue, float64(totals.Regressions))
}

// rank says how much st needs attention, and remembers when its waits or
// failed loads last grew. Called with c.mu held.
func (c *segmentCollector) rank(st segment.TagStats, now time.Time) int {
	grew := false
	if st.Waits > 0 || st.LoadFailures > 0 {
		w := c.watched[st.Tag]
		switch {
		case w == nil:
			w = &watch{waits: st.Waits, failures: st.LoadFailures, grew: now}
			c.watched[st.Tag] = w
		case w.waits != st.Waits || w.failures != st.LoadFailures:
			w.waits, w.failures, w.grew = st.Waits, st.LoadFailures, now
		}
		w.seen = c.seen
		grew = now.Sub(w.grew) < attentionHold
	}
	switch {
	case st.Failing:
		return rankFailing
	case st.Regressions > 0:
		return rankRegressed
	case grew:
		return rankWaiting
	}
	return rankNone
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
