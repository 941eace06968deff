package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// The domain's types are the sources cmd/leaf registers.
var (
	_ metrics.Segments  = (*segment.Allocator)(nil)
	_ metrics.Snowflake = (*snowflake.Generator)(nil)
	_ metrics.UUIDs     = (*uuidv7.Generator)(nil)
)

// fakeSegments hands out ids per tag from 1 upwards and shows its buffers
// as the allocator does: two halves of 1000 ids, a step of 1000, two
// loads of which one failed, and three waits per tag. edit changes a
// tag's figures beyond that.
type fakeSegments struct {
	mu     sync.Mutex
	next   map[string]int64
	issued map[string]uint64
	edits  map[string]func(*segment.TagStats)
}

func newFakeSegments(tags ...string) *fakeSegments {
	f := &fakeSegments{next: map[string]int64{}, issued: map[string]uint64{}, edits: map[string]func(*segment.TagStats){}}
	for _, t := range tags {
		f.next[t] = 1
	}
	return f
}

// take hands out n ids of tag, which must be one of the fake's.
func (f *fakeSegments) take(tb testing.TB, tag string, n int) {
	tb.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.next[tag]; !ok {
		tb.Fatalf("no tag %q", tag)
	}
	f.next[tag] += int64(n)
	f.issued[tag] += uint64(n)
}

// edit sets how tag's figures differ from the default ones.
func (f *fakeSegments) edit(tag string, e func(*segment.TagStats)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.edits[tag] = e
}

func (f *fakeSegments) EachTag(fn func(segment.TagStats)) segment.Totals {
	f.mu.Lock()
	defer f.mu.Unlock()
	var t segment.Totals
	for tag, next := range f.next {
		st := segment.TagStats{
			Tag: tag, Issued: f.issued[tag], Loads: 2, LoadFailures: 1, Waits: 3, WaitedLoads: 2,
			Step: 1000, Remaining: 1001 - next + 1000,
		}
		if e := f.edits[tag]; e != nil {
			e(&st)
		}
		t.Tags++
		if st.Failing {
			t.Failing++
		}
		t.Issued += st.Issued
		t.Loads += st.Loads
		t.LoadFailures += st.LoadFailures
		t.Waits += st.Waits
		t.Regressions += st.Regressions
		fn(st)
	}
	return t
}

// statsFunc is a snowflake generator's Stats as a test sets them.
type statsFunc struct {
	mu sync.Mutex
	st snowflake.Stats
}

func (s *statsFunc) Stats() snowflake.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *statsFunc) set(edit func(*snowflake.Stats)) {
	s.mu.Lock()
	edit(&s.st)
	s.mu.Unlock()
}

// uuidCount is a number of UUIDs made.
type uuidCount struct{ n atomic.Uint64 }

func (u *uuidCount) Issued() uint64 { return u.n.Load() }

// gather returns the metric family name from reg, or nil.
func gather(tb testing.TB, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return nil
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value finds the metric whose labels include want and returns its value
// (counter, gauge or histogram sample count).
func value(tb testing.TB, reg prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	tb.Helper()
	mf := gather(tb, reg, name)
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		got := labelsOf(m)
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func register(tb testing.TB, src metrics.Sources) *prometheus.Registry {
	tb.Helper()
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, src); err != nil {
		tb.Fatal(err)
	}
	return reg
}

func TestRegister(t *testing.T) {
	seg := newFakeSegments("orders", "users")
	stats := &statsFunc{st: snowflake.Stats{WorkerID: 7, Issued: 42, LeaseFailures: 3, LeaseRegressions: 1}}
	uuids := &uuidCount{}
	var storeUp atomic.Bool
	storeUp.Store(true)
	loads := metrics.NewLoadTimes()
	reg := register(t, metrics.Sources{
		Version:      "v1.2.3",
		StoreUp:      storeUp.Load,
		Segments:     seg,
		SegmentLoads: loads,
		Snowflake:    stats,
		UUIDs:        uuids,
	})

	seg.take(t, "orders", 5)
	loads.Observe("orders", 3*time.Millisecond, nil)
	loads.Observe("nosuchtag", time.Millisecond, errors.New("unknown"))
	stats.set(func(st *snowflake.Stats) { st.ClockBackwards = 2 })
	uuids.n.Store(9)
	storeUp.Store(false)

	tests := []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
	}{
		{"segment issued", "leaf_ids_issued_total", map[string]string{"mode": "segment", "tag": "orders"}, 5},
		{"segment issued other tag", "leaf_ids_issued_total", map[string]string{"mode": "segment", "tag": "users"}, 0},
		{"snowflake issued", "leaf_ids_issued_total", map[string]string{"mode": "snowflake", "tag": ""}, 42},
		{"uuid issued", "leaf_ids_issued_total", map[string]string{"mode": "uuid", "tag": ""}, 9},
		{"loads ok", "leaf_segment_loads_total", map[string]string{"tag": "orders", "result": "ok"}, 2},
		{"loads error", "leaf_segment_loads_total", map[string]string{"tag": "orders", "result": "error"}, 1},
		{"step", "leaf_segment_step", map[string]string{"tag": "orders"}, 1000},
		{"remaining both halves", "leaf_segment_remaining", map[string]string{"tag": "orders"}, 995 + 1000},
		{"waits", "leaf_segment_waits_total", map[string]string{"tag": "orders"}, 3},
		{"waited loads", "leaf_segment_waited_loads_total", map[string]string{"tag": "orders"}, 2},
		{"clock backwards", "leaf_snowflake_clock_backwards_total", nil, 2},
		{"worker id", "leaf_snowflake_worker_id", nil, 7},
		{"lease failures", "leaf_snowflake_lease_failures_total", nil, 3},
		{"lease regressions", "leaf_snowflake_lease_regressions_total", nil, 1},
		{"regressions", "leaf_segment_regressions_total", map[string]string{"tag": "orders"}, 0},
		{"store down", "leaf_store_up", nil, 0},
		{"load duration ok", "leaf_segment_load_duration_seconds", map[string]string{"result": "ok"}, 1},
		{"load duration error", "leaf_segment_load_duration_seconds", map[string]string{"result": "error"}, 1},
		{"build", "leaf_build_info", map[string]string{"version": "v1.2.3"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := value(t, reg, tt.metric, tt.labels)
			if !ok || got != tt.want {
				t.Fatalf("%s%v = %v (found %v), want %v", tt.metric, tt.labels, got, ok, tt.want)
			}
		})
	}

	t.Run("no series for unknown tags", func(t *testing.T) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				tag, has := labelsOf(m)["tag"]
				if has && tag != "orders" && tag != "users" && tag != "" {
					t.Errorf("%s has a series for tag %q", mf.GetName(), tag)
				}
			}
		}
	})

	t.Run("moves after traffic", func(t *testing.T) {
		seg.take(t, "orders", 1)
		if got, _ := value(t, reg, "leaf_ids_issued_total", map[string]string{"mode": "segment", "tag": "orders"}); got != 6 {
			t.Fatalf("issued = %v, want 6", got)
		}
	})
}

// TestRegisterLeavesOut: what is off has no metrics, and a registry that
// already holds the names is an error, not a panic.
func TestRegisterLeavesOut(t *testing.T) {
	reg := register(t, metrics.Sources{})
	if mfs, err := reg.Gather(); err != nil || len(mfs) != 0 {
		t.Fatalf("nothing given, yet gathered %d families (%v)", len(mfs), err)
	}

	reg = register(t, metrics.Sources{Snowflake: &statsFunc{}})
	for _, name := range []string{"leaf_build_info", "leaf_store_up", "leaf_segment_step", "leaf_segment_load_duration_seconds"} {
		if mf := gather(t, reg, name); mf != nil {
			t.Errorf("%s present with only snowflake given", name)
		}
	}
	if _, ok := value(t, reg, "leaf_ids_issued_total", map[string]string{"mode": "segment"}); ok {
		t.Error("segment ids counted with only snowflake given")
	}
	if err := metrics.Register(reg, metrics.Sources{Snowflake: &statsFunc{}}); err == nil {
		t.Error("registering the snowflake metrics twice on one registry succeeded")
	}
}

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
			reg := register(t, metrics.Sources{Snowflake: &statsFunc{st: tt.st}})
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

// TestStoreDurable: one series per store whose settings were read, 1 for
// durable and 0 for one that can forget, labelled with the store's name.
func TestStoreDurable(t *testing.T) {
	var stores []metrics.StoreDurability
	reg := register(t, metrics.Sources{StoresDurable: func() []metrics.StoreDurability { return stores }})
	if mf := gather(t, reg, "leaf_store_durable"); mf != nil {
		t.Fatalf("no store read yet: %v", mf)
	}
	stores = []metrics.StoreDurability{{Store: "eu", Durable: true}, {Store: "us", Durable: false}}
	for name, want := range map[string]float64{"eu": 1, "us": 0} {
		if got, ok := value(t, reg, "leaf_store_durable", map[string]string{"store": name}); !ok || got != want {
			t.Errorf("leaf_store_durable{store=%q} = %v (found %v), want %v", name, got, ok, want)
		}
	}
	stores = []metrics.StoreDurability{{Durable: false}}
	if got, ok := value(t, reg, "leaf_store_durable", map[string]string{"store": ""}); !ok || got != 0 {
		t.Errorf("one store: leaf_store_durable = %v (found %v), want 0", got, ok)
	}
	if n := len(gather(t, reg, "leaf_store_durable").GetMetric()); n != 1 {
		t.Errorf("one store: %d series, want 1", n)
	}
}

func TestBuildInfo(t *testing.T) {
	reg := register(t, metrics.Sources{Version: "v1.2.3"})
	got, ok := value(t, reg, "leaf_build_info", map[string]string{"version": "v1.2.3", "goversion": runtime.Version()})
	if !ok || got != 1 {
		t.Fatalf("leaf_build_info = %v (found %v), want 1 with version and goversion labels", got, ok)
	}
}

// TestMetricsDocumented: the Metrics section of docs/observability.md, which
// the README links to, names every leaf_ metric the service exports, these
// and the HTTP edge's, as the contract requires.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := strings.Index(section, "\n## Metrics\n"); i >= 0 {
		section = section[i:]
		if j := strings.Index(section[1:], "\n## "); j >= 0 {
			section = section[:j+1]
		}
	} else {
		t.Fatal("docs/observability.md has no Metrics section")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`\bleaf_[a-z_]+`).FindAllString(section, -1) {
		listed[m] = true
	}

	loads := metrics.NewLoadTimes()
	reg := register(t, metrics.Sources{
		Version:       "test",
		StoreUp:       func() bool { return true },
		StoresDurable: func() []metrics.StoreDurability { return []metrics.StoreDurability{{Durable: true}} },
		Segments:      newFakeSegments("orders"),
		SegmentLoads:  loads,
		Snowflake:     &statsFunc{st: snowflake.Stats{LeaseExpires: time.Now(), Exhausts: time.Now()}},
		UUIDs:         &uuidCount{},
		Sequences:     fakeSequences{},
	})
	loads.Observe("orders", time.Millisecond, nil)
	api := httpapi.New(httpapi.Config{Service: service.New(service.Config{Metrics: reg, Sequences: fakeSequences{}}), Registry: reg})
	api.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))

	mfs, err := reg.Gather()
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
			t.Errorf("%s is exported but not in the Metrics section of docs/observability.md", name)
		}
	}
	if seen < 19 {
		t.Errorf("only %d leaf_ metrics gathered: the test registers too little", seen)
	}
}

// tagsOf lists the tags with a series of name, and checks that each of
// them has every per-tag series.
func tagsOf(tb testing.TB, reg prometheus.Gatherer, name string) map[string]bool {
	tb.Helper()
	out := map[string]bool{}
	mf := gather(tb, reg, name)
	if mf == nil {
		return out
	}
	for _, m := range mf.GetMetric() {
		if l := labelsOf(m); l["mode"] != "snowflake" && l["mode"] != "uuid" {
			out[l["tag"]] = true
		}
	}
	return out
}

// exported checks that the tags with series are want, the same for every
// per-tag metric, and that leaf_segment_tags_exported counts them.
func exported(tb testing.TB, reg prometheus.Gatherer, want []string) {
	tb.Helper()
	wantSet := map[string]bool{}
	for _, tag := range want {
		wantSet[tag] = true
	}
	for _, name := range []string{"leaf_ids_issued_total", "leaf_segment_loads_total", "leaf_segment_step",
		"leaf_segment_remaining", "leaf_segment_waits_total", "leaf_segment_waited_loads_total", "leaf_segment_regressions_total"} {
		got := tagsOf(tb, reg, name)
		for tag := range got {
			if !wantSet[tag] {
				tb.Errorf("%s has a series for %q, which is not chosen", name, tag)
			}
		}
		for tag := range wantSet {
			if !got[tag] {
				tb.Errorf("%s has no series for %q", name, tag)
			}
		}
	}
	if n, _ := value(tb, reg, "leaf_segment_tags_exported", nil); int(n) != len(wantSet) {
		tb.Errorf("leaf_segment_tags_exported = %v, want %d", n, len(wantSet))
	}
}

// quietSegments is a fake whose tags never waited nor failed a load, each
// having issued as many ids as the number in its name.
func quietSegments(n int) *fakeSegments {
	f := newFakeSegments()
	for i := range n {
		tag := fmt.Sprintf("t%04d", i)
		f.next[tag] = 1
		f.issued[tag] = uint64(i)
		f.edits[tag] = func(st *segment.TagStats) { st.Waits, st.LoadFailures = 0, 0 }
	}
	return f
}

func busiest(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("t%04d", i))
	}
	return out
}

// TestSeriesOfChosenTags: of 1,000 tags, those named, those that need
// attention and the 20 busiest have series; the totals count them all.
func TestSeriesOfChosenTags(t *testing.T) {
	seg := quietSegments(1000)
	seg.edit("t0001", func(st *segment.TagStats) { st.Failing, st.LoadFailures, st.Waits = true, 4, 0 })
	seg.edit("t0002", func(st *segment.TagStats) { st.Regressions, st.Waits, st.LoadFailures = 1, 0, 0 })
	seg.edit("t0003", func(st *segment.TagStats) { st.Waits, st.LoadFailures = 12, 0 })
	reg := register(t, metrics.Sources{Segments: seg, SegmentTags: []string{"t0004", "t0005", "nosuchtag"}})

	exported(t, reg, append([]string{"t0001", "t0002", "t0003", "t0004", "t0005"}, busiest(980, 1000)...))
	var issued float64
	for i := range 1000 {
		issued += float64(i)
	}
	for name, want := range map[string]float64{
		"leaf_segment_tags":                  1000,
		"leaf_segment_tags_failing":          1,
		"leaf_segment_all_ids_issued_total":  issued,
		"leaf_segment_all_waits_total":       12,
		"leaf_segment_all_regressions_total": 1,
	} {
		if got, ok := value(t, reg, name, nil); !ok || got != want {
			t.Errorf("%s = %v (found %v), want %v", name, got, ok, want)
		}
	}
	for result, want := range map[string]float64{"ok": 2000, "error": 4} {
		if got, _ := value(t, reg, "leaf_segment_all_loads_total", map[string]string{"result": result}); got != want {
			t.Errorf("leaf_segment_all_loads_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	if got, _ := value(t, reg, "leaf_segment_loads_total", map[string]string{"tag": "t0001", "result": "error"}); got != 4 {
		t.Errorf("the failing tag's failed loads = %v, want 4", got)
	}
}

// TestAttentionIsBounded: however many tags fail, at most
// MaxAttentionTags of them have series, the busiest; the failing come
// before the regressed.
func TestAttentionIsBounded(t *testing.T) {
	seg := quietSegments(1000)
	for i := range 300 {
		seg.edit(fmt.Sprintf("t%04d", i), func(st *segment.TagStats) { st.Failing, st.LoadFailures, st.Waits = true, 1, 0 })
	}
	seg.edit("t0500", func(st *segment.TagStats) { st.Regressions, st.Waits, st.LoadFailures = 2, 0, 0 })
	reg := register(t, metrics.Sources{Segments: seg})
	exported(t, reg, append(busiest(300-metrics.MaxAttentionTags, 300), busiest(1000-metrics.TopTags, 1000)...))
	if got, _ := value(t, reg, "leaf_segment_tags_failing", nil); got != 300 {
		t.Errorf("leaf_segment_tags_failing = %v, want 300", got)
	}
}

// TestWaitsKeepATagExported: a tag whose waits grew has series for
// 30 minutes after the last growth, then not.
func TestWaitsKeepATagExported(t *testing.T) {
	seg := quietSegments(100)
	clock := testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0)
	reg := register(t, metrics.Sources{Segments: seg, Now: clock.Now})
	top := busiest(80, 100)
	exported(t, reg, top)

	setWaits := func(n uint64) {
		seg.edit("t0007", func(st *segment.TagStats) { st.Waits, st.LoadFailures = n, 0 })
	}
	setWaits(1)
	exported(t, reg, append([]string{"t0007"}, top...))
	clock.Add(29 * time.Minute)
	exported(t, reg, append([]string{"t0007"}, top...))
	clock.Add(2 * time.Minute)
	exported(t, reg, top)
	setWaits(5)
	exported(t, reg, append([]string{"t0007"}, top...))
	clock.Add(20 * time.Minute)
	setWaits(6)
	clock.Add(20 * time.Minute)
	exported(t, reg, append([]string{"t0007"}, top...))
}

func TestParseTags(t *testing.T) {
	var names []string
	for i := range metrics.MaxNamedTags + 1 {
		names = append(names, fmt.Sprintf("t%d", i))
	}
	many, most := strings.Join(names, ","), strings.Join(names[1:], ",")
	tests := []struct {
		name string
		in   string
		want []string
		bad  bool
	}{
		{"empty", "", nil, false},
		{"spaces", "  ", nil, false},
		{"one", "orders", []string{"orders"}, false},
		{"several, trimmed", " orders , users,payments ", []string{"orders", "users", "payments"}, false},
		{"twice counts once", "orders,orders", []string{"orders"}, false},
		{"any valid name", "a:b/c,日本", []string{"a:b/c", "日本"}, false},
		{"empty name", "orders,,users", nil, true},
		{"trailing comma", "orders,", nil, true},
		{"too long", strings.Repeat("x", segment.MaxTagLen+1), nil, true},
		{"not UTF-8", "\xff", nil, true},
		{"as many as allowed", most, names[1:], false},
		{"too many", many, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := metrics.ParseTags(tt.in)
			if tt.bad {
				if err == nil {
					t.Fatalf("ParseTags(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ParseTags(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := metrics.ParseTags("\xff"); !errors.Is(err, segment.ErrInvalidTag) {
		t.Errorf("a bad name: %v, want ErrInvalidTag", err)
	}
}

// fakeSequences serves no number, and has figures for the metrics.
type fakeSequences struct{}

func (fakeSequences) NextN(context.Context, string, string, int) (int64, error) {
	return 0, sequence.ErrUnavailable
}
func (fakeSequences) Current(context.Context, string, string) (int64, error) {
	return 0, sequence.ErrUnavailable
}
func (fakeSequences) Stats() sequence.Stats {
	return sequence.Stats{Spaces: 1, Sections: 64, SectionsOwned: 20, KeysInMemory: 1000, Taken: 20, Dropped: 2}
}
