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

// StoreDurability is what a store's settings say of its commits.
type StoreDurability struct {
	// Store is the store's name with several stores (--store), "" for the
	// one store.
	Store string
	// Durable: no node of the store can forget a commit it acknowledged.
	Durable bool
}

var storeDurableDesc = prometheus.NewDesc("leaf_store_durable",
	"1 while the database's settings say a commit it acknowledged survives a crash (every node of a cluster), 0 while it can forget one.",
	[]string{"store"}, nil)

// storeDurableCollector exports leaf_store_durable{store}: one series per
// store, as many as the stores configured.
type storeDurableCollector struct{ src func() []StoreDurability }

func (c storeDurableCollector) Describe(ch chan<- *prometheus.Desc) { ch <- storeDurableDesc }

func (c storeDurableCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.src() {
		v := 0.0
		if s.Durable {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(storeDurableDesc, prometheus.GaugeValue, v, s.Store)
	}
}

// StoreCount is a count of one store's.
type StoreCount struct {
	// Store is the store's name with several stores (--store), "" for the
	// one store.
	Store string
	N     uint64
}

var storeJumpsDesc = prometheus.NewDesc("leaf_store_restart_jumps_total",
	"Times this process moved every row of the store forward by the failover jump, after the database started again while it could forget commits.",
	[]string{"store"}, nil)

// storeJumpsCollector exports leaf_store_restart_jumps_total{store}: one
// series per store.
type storeJumpsCollector struct{ src func() []StoreCount }

func (c storeJumpsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- storeJumpsDesc }

func (c storeJumpsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.src() {
		ch <- prometheus.MustNewConstMetric(storeJumpsDesc, prometheus.CounterValue, float64(s.N), s.Store)
	}
}
