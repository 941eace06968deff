package httpapi_test

import (
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/snowflake"
)

func TestSnowflakeSignals(t *testing.T) {
	expires := time.UnixMilli(1_750_000_030_250)
	exhausts := time.UnixMilli(snowflake.DefaultEpochMs + 1<<41)
	tests := []struct {
		name   string
		st     snowflake.Stats
		want   map[string]float64
		absent []string
	}{
		{
			name: "lease held",
			st: snowflake.Stats{WorkerID: 12, SequenceWaits: 4, LeaseRenewals: 9, LeaseFailures: 2,
				LeaseExpires: expires, Exhausts: exhausts},
			want: map[string]float64{
				"leaf_snowflake_worker_id":                      12,
				"leaf_snowflake_sequence_waits_total":           4,
				"leaf_snowflake_lease_renewals_total":           9,
				"leaf_snowflake_lease_failures_total":           2,
				"leaf_snowflake_lease_expiry_timestamp_seconds": 1_750_000_030.25,
				"leaf_snowflake_epoch_end_timestamp_seconds":    float64(exhausts.UnixMilli()) / 1000,
			},
		},
		{
			name: "lease lost",
			st:   snowflake.Stats{WorkerID: -1, LeaseFailures: 5, LeaseExpires: expires, Exhausts: exhausts},
			want: map[string]float64{
				"leaf_snowflake_worker_id":                      -1,
				"leaf_snowflake_lease_failures_total":           5,
				"leaf_snowflake_lease_expiry_timestamp_seconds": 1_750_000_030.25,
			},
		},
		{
			name: "fixed worker id",
			st:   snowflake.Stats{WorkerID: 3, Exhausts: exhausts},
			want: map[string]float64{
				"leaf_snowflake_worker_id":            3,
				"leaf_snowflake_lease_renewals_total": 0,
			},
			absent: []string{"leaf_snowflake_lease_expiry_timestamp_seconds"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			reg.MustRegister(httpapi.NewSnowflakeCollector(&statsFunc{st: tt.st}))
			for name, want := range tt.want {
				if got, ok := value(t, reg, name, nil); !ok || got != want {
					t.Errorf("%s = %v (found %v), want %v", name, got, ok, want)
				}
			}
			for _, name := range tt.absent {
				if mf := gather(t, reg, name); mf != nil {
					t.Errorf("%s present: %v", name, mf)
				}
			}
		})
	}
}

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(httpapi.NewBuildInfoCollector("v1.2.3"))
	got, ok := value(t, reg, "leaf_build_info", map[string]string{"version": "v1.2.3", "goversion": runtime.Version()})
	if !ok || got != 1 {
		t.Fatalf("leaf_build_info = %v (found %v), want 1 with version and goversion labels", got, ok)
	}
}

// TestMetricsInREADME: the README's Metrics section names every leaf_
// metric the service exports, as the contract requires.
func TestMetricsInREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	if i := strings.Index(section, "\n### Metrics\n"); i >= 0 {
		section = section[i:]
		if j := strings.Index(section[1:], "\n### "); j >= 0 {
			section = section[:j+1]
		}
	} else {
		t.Fatal("README.md has no Metrics section")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`\bleaf_[a-z_]+`).FindAllString(section, -1) {
		listed[m] = true
	}

	v := newEnv(t)
	stats := &statsFunc{st: snowflake.Stats{LeaseExpires: time.Now(), Exhausts: time.Now()}}
	v.reg.MustRegister(httpapi.NewSegmentCollector(v.seg), httpapi.NewSnowflakeCollector(stats),
		httpapi.NewStoreUpCollector(func() bool { return true }), httpapi.NewBuildInfoCollector("test"))
	observe, err := httpapi.NewSegmentLoadObserver(v.reg)
	if err != nil {
		t.Fatal(err)
	}
	observe("orders", time.Millisecond, nil)
	v.do(t, http.MethodGet, "/api/segment/get/orders", nil)

	mfs, err := v.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "leaf_") {
			continue
		}
		seen++
		if !listed[name] {
			t.Errorf("%s is exported but not in the README's Metrics section", name)
		}
	}
	if seen < 19 {
		t.Errorf("only %d leaf_ metrics gathered: the test registers too little", seen)
	}
}
