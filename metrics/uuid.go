package metrics

import "github.com/prometheus/client_golang/prometheus"

// uuidIssuedDesc is leaf_ids_issued_total for mode "uuid".
var uuidIssuedDesc = prometheus.NewDesc("leaf_ids_issued_total", issuedHelp,
	[]string{"tag"}, prometheus.Labels{"mode": "uuid"})

// uuidCollector exports the UUIDs made as leaf_ids_issued_total{mode="uuid",tag=""}.
type uuidCollector struct{ src UUIDs }

func (uuidCollector) Describe(ch chan<- *prometheus.Desc) { ch <- uuidIssuedDesc }

func (c uuidCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(uuidIssuedDesc, prometheus.CounterValue, float64(c.src.Issued()), "")
}
