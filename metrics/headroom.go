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
	tagSecondsLeftDesc = prometheus.NewDesc("leaf_tag_seconds_left",
		"How long the ids of a bounded biz tag left below its bound last at the rate its row moved lately, as this process saw it at its loads (up to the last 10 minutes); absent until the row is seen to move.",
		[]string{"tag"}, nil)
	cappedLeftDesc = prometheus.NewDesc("leaf_capped_period_left",
		"Numbers left in the period in use of a capped formatted tag ({seq:N!}) past the last its owner issued: exported by the instance owning the tag.",
		[]string{"tag"}, nil)
	cappedUsedDesc = prometheus.NewDesc("leaf_capped_period_used_ratio",
		"The share of the numbers of the period in use of a capped formatted tag that its owner issued, 0 to 1; at 1 the period's calls are 409 sequence_full.",
		[]string{"tag"}, nil)
)

// headroomCollector exports one series each of bound (unless nil), left
// and used per entry of src: the bounded tags, or the capped periods.
type headroomCollector struct {
	src               func() []segment.Headroom
	bound, left, used *prometheus.Desc
}

func newHeadroomCollector(src func() []segment.Headroom) headroomCollector {
	return headroomCollector{src: src, bound: tagBoundDesc, left: tagLeftDesc, used: tagUsedDesc}
}

func newCappedCollector(src func() []segment.Headroom) headroomCollector {
	return headroomCollector{src: src, left: cappedLeftDesc, used: cappedUsedDesc}
}

func (c headroomCollector) Describe(ch chan<- *prometheus.Desc) {
	if c.bound != nil {
		ch <- c.bound
		ch <- tagSecondsLeftDesc
	}
	ch <- c.left
	ch <- c.used
}

func (c headroomCollector) Collect(ch chan<- prometheus.Metric) {
	hs := c.src()
	used := func(h segment.Headroom) float64 { return float64(min(h.Taken, h.Bound)) / float64(h.Bound) }
	slices.SortFunc(hs, func(a, b segment.Headroom) int { return cmp.Compare(used(b), used(a)) })
	for _, h := range hs[:min(len(hs), MaxBoundedTags)] {
		if h.Bound <= 0 {
			continue
		}
		if c.bound != nil {
			ch <- prometheus.MustNewConstMetric(c.bound, prometheus.GaugeValue, float64(h.Bound), h.Tag)
		}
		ch <- prometheus.MustNewConstMetric(c.left, prometheus.GaugeValue, float64(max(h.Bound-h.Taken, 0)), h.Tag)
		if c.bound != nil && h.SecondsLeft > 0 {
			ch <- prometheus.MustNewConstMetric(tagSecondsLeftDesc, prometheus.GaugeValue, h.SecondsLeft, h.Tag)
		}
		ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, used(h), h.Tag)
	}
}
