package metrics

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// newBuildInfoCollector exports leaf_build_info{version,goversion}, always
// 1, so that dashboards and alerts can tell which build each instance runs.
func newBuildInfoCollector(version string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "leaf_build_info",
		Help:        "Always 1; its labels are the version of leaf and of Go it was built with.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}

// newStoreUpCollector exports leaf_store_up, 1 while up() is true.
func newStoreUpCollector(up func() bool) prometheus.Collector {
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
