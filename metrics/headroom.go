package metrics

import (
	"cmp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/segment"
)

// Headroom: how far each tag that declared a bound (its max) is from it.
// Every bounded tag has series, the nearest its bound first, up to
// MaxBoundedTags: a bound is declared by an operator, for few tags.

// MaxBoundedTags bounds the tags with headroom series in a scrape.
const MaxBoundedTags = 256

var (
	tagBoundDesc = prometheus.NewDesc("leaf_tag_bound",
		"The bound a biz tag declared (its max): the largest id it issues; past it, 410 tag_bound_reached.",
		[]string{"tag"}, nil)
	tagLeftDesc = prometheus.NewDesc("leaf_tag_ids_left",
		"Ids of a bounded biz tag left below its bound, past the highest id this process took of its row (other instances may have taken more: the fleet's is the min).",
		[]string{"tag"}, nil)
	tagUsedDesc = prometheus.NewDesc("leaf_tag_bound_used_ratio",
		"The share of a bounded biz tag's ids up to its bound that this process saw taken, 0 to 1 (the fleet's is the max).",
		[]string{"tag"}, nil)
)

type headroomCollector struct {
	src func() []segment.Headroom
}

func (headroomCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- tagBoundDesc
	ch <- tagLeftDesc
	ch <- tagUsedDesc
}

func (c headroomCollector) Collect(ch chan<- prometheus.Metric) {
	hs := c.src()
	used := func(h segment.Headroom) float64 { return float64(min(h.Taken, h.Bound)) / float64(h.Bound) }
	slices.SortFunc(hs, func(a, b segment.Headroom) int { return cmp.Compare(used(b), used(a)) })
	for _, h := range hs[:min(len(hs), MaxBoundedTags)] {
		if h.Bound <= 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(tagBoundDesc, prometheus.GaugeValue, float64(h.Bound), h.Tag)
		ch <- prometheus.MustNewConstMetric(tagLeftDesc, prometheus.GaugeValue, float64(max(h.Bound-h.Taken, 0)), h.Tag)
		ch <- prometheus.MustNewConstMetric(tagUsedDesc, prometheus.GaugeValue, used(h), h.Tag)
	}
}
