package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
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

// snowflakeCollector exports, at scrape time,
// leaf_ids_issued_total{mode="snowflake",tag=""},
// leaf_snowflake_clock_backwards_total, leaf_snowflake_worker_id (-1
// while no lease is held), leaf_snowflake_sequence_waits_total,
// leaf_snowflake_epoch_end_timestamp_seconds,
// leaf_snowflake_lease_renewals_total, leaf_snowflake_lease_failures_total,
// leaf_snowflake_lease_regressions_total and, with a leased worker id,
// leaf_snowflake_lease_expiry_timestamp_seconds.
type snowflakeCollector struct{ src Snowflake }

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

// unixSeconds is t in Unix seconds, to the millisecond.
func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }
