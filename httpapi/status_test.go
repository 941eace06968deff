package httpapi_test

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// statusSegments is a segment mode whose snapshot and failed tags are set
// by the test, as segment.Allocator's are.
type statusSegments struct {
	*fakeSegments
	states []segment.BufferState
	failed []segment.FailedTag
}

func (f *statusSegments) Snapshot() []segment.BufferState { return f.states }
func (f *statusSegments) Failed() []segment.FailedTag     { return f.failed }
func (f *statusSegments) EachTag(fn func(segment.TagStats)) segment.Totals {
	return eachTagOf(f.states, fn)
}
func (f *statusSegments) State(tag string) (segment.BufferState, bool) { return stateOf(f.states, tag) }

// statusSnowflake is a snowflake mode with Stats, as snowflake.Generator.
type statusSnowflake struct {
	*fakeSnowflake
	mu    sync.Mutex
	stats snowflake.Stats
}

func (f *statusSnowflake) Stats() snowflake.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

func (f *statusSnowflake) addIssued(n uint64) {
	f.mu.Lock()
	f.stats.Issued += n
	f.mu.Unlock()
}

const hostileTag = `<script>alert("x")</script>`

// statusFixture is an instance 90 minutes old, a store that is up, three
// tags (one with a failed last load, one with a hostile name), a tag that
// failed to load, and a leased snowflake worker id.
type statusFixture struct {
	clock   *testkit.Clock
	started time.Time
	seg     *statusSegments
	snow    *statusSnowflake
	health  httpapi.StoreHealth
}

func newStatusFixture() *statusFixture {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	fx := &statusFixture{clock: testkit.NewClock(now, 0), started: now.Add(-90 * time.Minute)}
	fx.health = httpapi.StoreHealth{Up: true, Since: fx.started}
	fx.seg = &statusSegments{
		fakeSegments: newFakeSegments("orders"),
		states: []segment.BufferState{
			{
				Tag: hostileTag,
				Segments: [2]*segment.SegmentState{
					{Start: 1, End: 11, Next: 5, Remaining: 6, LoadedAt: now.Add(-time.Minute)},
				},
				Step: 10, MinStep: 10, LastLoad: now.Add(-time.Minute), LastLoadTook: 1500 * time.Microsecond,
				Issued: 4, Loads: 1,
			},
			{
				Tag: "orders",
				Segments: [2]*segment.SegmentState{
					{Start: 2001, End: 4001, Next: 3901, Remaining: 100, LoadedAt: now.Add(-2 * time.Minute)},
					{Start: 4001, End: 8001, Next: 4001, Remaining: 4000, LoadedAt: now.Add(-10 * time.Second)},
				},
				Step: 4000, MinStep: 1000, LastLoad: now.Add(-10 * time.Second), LastLoadTook: 3200 * time.Microsecond,
				Issued: 1234567, Loads: 3, Waits: 2, HighMaxID: 8001,
			},
			{
				Tag: "payments",
				Segments: [2]*segment.SegmentState{
					nil,
					{Start: 501, End: 701, Next: 690, Remaining: 11, LoadedAt: now.Add(-time.Hour)},
				},
				Current: 1, Step: 200, MinStep: 200, LastLoad: now.Add(-time.Hour), LastLoadTook: 2 * time.Millisecond,
				LastError: "store unavailable: no answer within 2s", Issued: 389, Loads: 2, LoadFailures: 5, Regressions: 1,
			},
		},
		failed: []segment.FailedTag{
			{Tag: "broken", Err: "biz tag's row is misconfigured: its step is 0, below 1", Failures: 3, At: now.Add(-3 * time.Second)},
		},
	}
	fx.snow = &statusSnowflake{fakeSnowflake: &fakeSnowflake{}, stats: snowflake.Stats{
		WorkerID:       12,
		Issued:         5000,
		ClockBackwards: 1,
		LeaseRenewals:  540,
		Holder:         "host-a:8080",
		LeaseExpires:   now.Add(20 * time.Second),
		LastRenewal:    now.Add(-10 * time.Second),
		Exhausts:       time.Date(2080, 7, 10, 17, 30, 30, 0, time.UTC),
	}}
	return fx
}

func (fx *statusFixture) config(c *envConfig) {
	c.Segments = fx.seg
	c.Snowflake = fx.snow
	c.Now = fx.clock.Now
	c.Instance = httpapi.Instance{
		Version:     "v1.2.3",
		Started:     fx.started,
		Store:       "mysql",
		StoreHealth: func() httpapi.StoreHealth { return fx.health },
	}
}

func TestStatusPage(t *testing.T) {
	fx := newStatusFixture()
	v := newEnv(t, fx.config)
	rec := v.do(t, http.MethodGet, "/status", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d; %s", rec.Code, rec.Body)
	}
	h := rec.Header()
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q", ct)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if cc := h.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q", cc)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<meta http-equiv="refresh" content="5">`,
		`v1.2.3`,
		`1h 30m`, // uptime
		`mysql`,
		// the tags in order, with their buffers
		`<bdi class="tag">orders</bdi>`,
		`1,234,567 issued · 4,100 left`,
		`in use</span> · 100 left</div><div class="small range">2001–4000</div>`,
		`next</span> · 4,000 left</div><div class="small range">4001–8000</div>`,
		`4,000<div class="small">row 1,000</div>`,
		`took 3.2ms`,
		`10s ago`,
		`<bdi class="tag">payments</bdi> <span class="flag">load failing</span>`,
		`last load failed: store unavailable: no answer within 2s`,
		`<span class="state">empty</span>`,
		// the tag that failed to load, flagged
		`<span class="flag">failed</span> <bdi class="tag">broken</bdi>`,
		`its step is 0, below 1`,
		`1 tag failed to load and cannot issue ids: broken`,
		`The last load failed for 1 tag: payments`,
		// snowflake
		`leased by host-a:8080`,
		`in 20s`,
		`540 renewals, 0 failed`,
		`until 2080-07-10`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// html/template escapes the hostile name wherever it appears.
	if strings.Contains(body, "<script") {
		t.Errorf("a <script> element reached the page:\n%s", body)
	}
	if !strings.Contains(body, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`) {
		t.Errorf("the hostile tag is not shown escaped")
	}
	// The tag whose last load failed comes first, then the others by
	// name: the hostile one sorts before orders.
	if i, j, k := strings.Index(body, ">payments<"), strings.Index(body, "alert("), strings.Index(body, ">orders<"); i < 0 || j < 0 || k < 0 || i > j || j > k {
		t.Errorf("tags out of order: payments at %d, hostile at %d, orders at %d", i, j, k)
	}
	// The totals of all tags, and which of them are shown.
	for _, want := range []string{
		`<dt>Tags</dt><dd>3</dd>`,
		`<div class="bad"><dt>Failing</dt><dd>1</dd>`,
		`<div class="bad"><dt>Failed to load</dt><dd>1</dd>`,
		`<dt>Issued</dt><dd>1,234,960</dd>`,
		`<dt>Loads</dt><dd>6</dd><dd class="note">5 failed</dd>`,
		`<div class="warn"><dt>Regressions</dt><dd>1</dd>`,
		`1–4 of 4 tags, those that need attention first`,
		`<form class="search" method="get" action="status" role="search">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(body, `rel="next"`) || strings.Contains(body, `rel="prev"`) {
		t.Error("a page of all the tags links to other pages")
	}
}

func TestStatusPageAllWell(t *testing.T) {
	fx := newStatusFixture()
	fx.seg.states, fx.seg.failed = fx.seg.states[:2], nil
	v := newEnv(t, fx.config)
	body := v.do(t, http.MethodGet, "/status", nil).Body.String()
	if !strings.Contains(body, "No problems found.") || strings.Contains(body, "Needs attention") {
		t.Errorf("a healthy instance is not shown as such:\n%s", body)
	}
}

func TestStatusPageAlerts(t *testing.T) {
	tests := []struct {
		name string
		edit func(fx *statusFixture)
		want string
	}{
		{"store down", func(fx *statusFixture) {
			fx.health = httpapi.StoreHealth{Up: false, Since: fx.clock.Now().Add(-5 * time.Minute), Err: "dial refused", Failed: 42}
		}, "The store has been down for 5m 00s: dial refused"},
		{"no worker lease", func(fx *statusFixture) {
			fx.snow.stats.WorkerID, fx.snow.stats.LeaseError = -1, "renew: worker lease lost"
		}, "Snowflake holds no worker lease: its ids are refused: renew: worker lease lost"},
		{"a renewal failed", func(fx *statusFixture) {
			fx.snow.stats.LeaseError = "renew: database down"
		}, "The last snowflake lease renewal failed: renew: database down"},
		{"epoch ending", func(fx *statusFixture) {
			fx.snow.stats.Exhausts = fx.clock.Now().Add(30 * 24 * time.Hour)
		}, "The snowflake epoch&#39;s range runs out in 30d 0h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newStatusFixture()
			tt.edit(fx)
			v := newEnv(t, fx.config)
			body := v.do(t, http.MethodGet, "/status", nil).Body.String()
			if !strings.Contains(body, tt.want) {
				t.Errorf("the page lacks the alert %q", tt.want)
			}
		})
	}
}

// statusTotals and statusPaging are the totals and the page of
// /status.json's segment.
type statusTotals struct {
	Tags         int    `json:"tags"`
	Failing      int    `json:"failing"`
	Failed       int    `json:"failed"`
	Issued       string `json:"issued"`
	Loads        uint64 `json:"loads"`
	LoadFailures uint64 `json:"load_failures"`
	Waits        uint64 `json:"waits"`
	Regressions  uint64 `json:"regressions"`
}

type statusPaging struct {
	Page     int    `json:"page"`
	PerPage  int    `json:"per_page"`
	Pages    int    `json:"pages"`
	Query    string `json:"q"`
	Matching int    `json:"matching"`
}

func TestStatusJSON(t *testing.T) {
	fx := newStatusFixture()
	fx.health = httpapi.StoreHealth{Up: false, Since: fx.clock.Now().Add(-time.Minute), Err: "no answer", Failed: 7}
	v := newEnv(t, fx.config)
	rec := v.do(t, http.MethodGet, "/status.json", nil)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("status = %d, Content-Type %q; %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var out struct {
		Time     string `json:"time"`
		Instance struct {
			Version       string  `json:"version"`
			GoVersion     string  `json:"go_version"`
			Started       string  `json:"started"`
			UptimeSeconds float64 `json:"uptime_seconds"`
			Store         struct {
				Kind        string `json:"kind"`
				Up          bool   `json:"up"`
				Since       string `json:"since"`
				Error       string `json:"error"`
				FailedCalls uint64 `json:"failed_calls"`
			} `json:"store"`
		} `json:"instance"`
		Segment struct {
			Tags []struct {
				Tag                 string `json:"tag"`
				Segments            [2]*struct{ Start, End, Next, Remaining, LoadedAt string }
				Current             int     `json:"current"`
				Step                int64   `json:"step"`
				LastError           string  `json:"last_error"`
				Issued              string  `json:"issued"`
				Regressions         uint64  `json:"regressions"`
				LastLoadTookSeconds float64 `json:"last_load_took_seconds"`
			} `json:"tags"`
			Failed []struct {
				Tag         string `json:"tag"`
				Error       string `json:"error"`
				Failures    uint64 `json:"failures"`
				LastFailure string `json:"last_failure"`
			} `json:"failed"`
			Totals statusTotals `json:"totals"`
			Page   statusPaging `json:"page"`
		} `json:"segment"`
		Snowflake struct {
			WorkerID          int64   `json:"worker_id"`
			Leased            bool    `json:"leased"`
			Holder            string  `json:"holder"`
			LeaseExpires      string  `json:"lease_expires"`
			LastRenewal       string  `json:"last_renewal"`
			LeaseRenewals     uint64  `json:"lease_renewals"`
			ClockBackwards    uint64  `json:"clock_backwards"`
			Issued            string  `json:"issued"`
			IDsPerSecond      float64 `json:"ids_per_second"`
			RateWindowSeconds float64 `json:"rate_window_seconds"`
			EpochExhausts     string  `json:"epoch_exhausts"`
			EpochLeftSeconds  float64 `json:"epoch_left_seconds"`
		} `json:"snowflake"`
	}
	decodeBody(t, rec, &out)

	in := out.Instance
	if out.Time != "2026-03-04T05:06:07.000Z" || in.Version != "v1.2.3" || in.GoVersion == "" ||
		in.Started != "2026-03-04T03:36:07.000Z" || in.UptimeSeconds != 5400 {
		t.Errorf("time and instance = %q %+v", out.Time, in)
	}
	if s := in.Store; s.Kind != "mysql" || s.Up || s.Since != "2026-03-04T05:05:07.000Z" || s.Error != "no answer" || s.FailedCalls != 7 {
		t.Errorf("store = %+v", s)
	}

	// The tag whose last load failed comes first, then the others by name.
	tags := out.Segment.Tags
	if len(tags) != 3 || tags[0].Tag != "payments" || tags[1].Tag != hostileTag || tags[2].Tag != "orders" {
		t.Fatalf("tags = %+v", tags)
	}
	orders := tags[2]
	if orders.Step != 4000 || orders.Issued != "1234567" || orders.LastLoadTookSeconds != 0.0032 ||
		orders.Segments[0] == nil || orders.Segments[0].Remaining != "100" || orders.Segments[1].Start != "4001" {
		t.Errorf("orders = %+v", orders)
	}
	if p := tags[0]; p.Current != 1 || p.Segments[0] != nil || p.LastError == "" || p.Regressions != 1 {
		t.Errorf("payments = %+v", p)
	}
	wantTotals := statusTotals{Tags: 3, Failing: 1, Failed: 1, Issued: "1234960", Loads: 6, LoadFailures: 5, Waits: 2, Regressions: 1}
	if out.Segment.Totals != wantTotals {
		t.Errorf("totals = %+v, want %+v", out.Segment.Totals, wantTotals)
	}
	if p := out.Segment.Page; p != (statusPaging{Page: 1, PerPage: 100, Pages: 1, Matching: 4}) {
		t.Errorf("page = %+v, want the first of one, 4 tags matching", p)
	}
	if f := out.Segment.Failed; len(f) != 1 || f[0].Tag != "broken" || f[0].Failures != 3 ||
		!strings.Contains(f[0].Error, "step is 0") || f[0].LastFailure != "2026-03-04T05:06:04.000Z" {
		t.Errorf("failed = %+v", f)
	}

	sn := out.Snowflake
	if sn.WorkerID != 12 || !sn.Leased || sn.Holder != "host-a:8080" || sn.LeaseExpires != "2026-03-04T05:06:27.000Z" ||
		sn.LastRenewal != "2026-03-04T05:05:57.000Z" || sn.LeaseRenewals != 540 || sn.ClockBackwards != 1 || sn.Issued != "5000" ||
		sn.EpochExhausts != "2080-07-10T17:30:30.000Z" || sn.EpochLeftSeconds <= 0 {
		t.Errorf("snowflake = %+v", sn)
	}
	// The first read has no earlier sample: the average since the start.
	if sn.RateWindowSeconds != 5400 || sn.IDsPerSecond != 5000.0/5400 {
		t.Errorf("rate = %v over %vs, want the average since the start", sn.IDsPerSecond, sn.RateWindowSeconds)
	}
}

// TestStatusRate: ids per second come from the counter's samples at each
// read, over the last minute once there are samples that old.
func TestStatusRate(t *testing.T) {
	fx := newStatusFixture()
	v := newEnv(t, fx.config)
	rate := func() (perSec, over float64) {
		t.Helper()
		var out struct {
			Snowflake struct {
				IDsPerSecond      float64 `json:"ids_per_second"`
				RateWindowSeconds float64 `json:"rate_window_seconds"`
			} `json:"snowflake"`
		}
		decodeBody(t, v.do(t, http.MethodGet, "/status.json", nil), &out)
		return out.Snowflake.IDsPerSecond, out.Snowflake.RateWindowSeconds
	}
	rate() // the first sample
	steps := []struct {
		after  time.Duration
		issued uint64
		rate   float64
		over   float64
	}{
		{2 * time.Second, 2000, 1000, 2},
		{500 * time.Millisecond, 500, 1000, 2.5}, // too soon for a sample of its own
		{7500 * time.Millisecond, 0, 250, 10},
		{50 * time.Second, 5900, 140, 60}, // 8400 ids since the first sample
		// Samples over a minute old are dropped but the newest of them,
		// taken 80 s ago: 8900 ids since.
		{30 * time.Second, 3000, 111.25, 80},
		// Not read for ten minutes: the rate over them.
		{10 * time.Minute, 0, 0, 600},
	}
	for i, s := range steps {
		fx.clock.Add(s.after)
		fx.snow.addIssued(s.issued)
		perSec, over := rate()
		if diff := perSec - s.rate; diff > 0.001 || diff < -0.001 || over != s.over {
			t.Errorf("step %d: %v ids/s over %vs, want %v over %vs", i, perSec, over, s.rate, s.over)
		}
	}
}

func TestStatusModesOff(t *testing.T) {
	v := newEnv(t, func(c *envConfig) { c.Segments, c.Snowflake = nil, nil })
	body := v.do(t, http.MethodGet, "/status", nil).Body.String()
	if n := strings.Count(body, "Off on this instance."); n != 3 {
		t.Errorf("the page says %d modes are off, want 3 (segment, snowflake, UUIDs)", n)
	}
	var out map[string]json.RawMessage
	decodeBody(t, v.do(t, http.MethodGet, "/status.json", nil), &out)
	if string(out["segment"]) != "null" || string(out["snowflake"]) != "null" || string(out["uuid"]) != "null" {
		t.Errorf("modes off: segment %s, snowflake %s, uuid %s, want null", out["segment"], out["snowflake"], out["uuid"])
	}

	v = newEnv(t, withUUIDs)
	v.do(t, http.MethodGet, "/api/uuid/batch?count=7", nil)
	decodeBody(t, v.do(t, http.MethodGet, "/status.json", nil), &out)
	if string(out["uuid"]) != `{"issued":"7"}` {
		t.Errorf("uuid status = %s, want 7 issued", out["uuid"])
	}
	body = v.do(t, http.MethodGet, "/status", nil).Body.String()
	if i := strings.Index(body, "<h2>UUIDs</h2>"); i < 0 || !strings.Contains(body[i:], "<dd>7</dd>") {
		t.Error("the page does not show the UUIDs made")
	}
}

func TestStatusToken(t *testing.T) {
	const statusToken = "st4tus-token"
	tests := []struct {
		name   string
		token  string // configured status token
		header string // the Authorization header sent
		target string
		status int
	}{
		{"open without a token", "", "", "/status", 200},
		{"open json without a token", "", "", "/status.json", 200},
		{"a header is ignored when open", "", "Bearer whatever", "/status", 200},
		{"no header", statusToken, "", "/status", 401},
		{"no header, json", statusToken, "", "/status.json", 401},
		{"wrong token", statusToken, "Bearer nope", "/status", 401},
		{"not bearer", statusToken, "Basic " + statusToken, "/status", 401},
		{"the admin token does not open it", statusToken, "Bearer " + testToken, "/status", 401},
		{"in the query it does not count", statusToken, "", "/status?token=" + statusToken, 401},
		{"right token", statusToken, "Bearer " + statusToken, "/status", 200},
		{"right token, json", statusToken, "Bearer " + statusToken, "/status.json", 200},
		{"right token, any case of the scheme", statusToken, "bearer " + statusToken, "/status", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t, func(c *envConfig) { c.StatusToken = tt.token })
			var opts []reqOpt
			if tt.header != "" {
				opts = append(opts, func(r *http.Request) { r.Header.Set("Authorization", tt.header) })
			}
			rec := v.do(t, http.MethodGet, tt.target, nil, opts...)
			if tt.status == http.StatusUnauthorized {
				wantError(t, rec, http.StatusUnauthorized, "unauthorized")
				if strings.Contains(rec.Body.String(), "tag") {
					t.Errorf("a refused request saw data: %s", rec.Body)
				}
				return
			}
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d; %s", rec.Code, tt.status, rec.Body)
			}
		})
	}

	t.Run("the status token does not open the admin API", func(t *testing.T) {
		v := newEnv(t, func(c *envConfig) { c.StatusToken = statusToken })
		wantError(t, v.do(t, http.MethodGet, "/api/admin/segments", nil, withToken(statusToken)), http.StatusUnauthorized, "unauthorized")
	})
}

func TestStatusHead(t *testing.T) {
	v := newEnv(t)
	for _, target := range []string{"/status", "/status.json"} {
		rec := v.do(t, http.MethodHead, target, nil)
		if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
			t.Errorf("HEAD %s = %d with %d bytes", target, rec.Code, rec.Body.Len())
		}
	}
	wantError(t, v.do(t, http.MethodPost, "/status", nil), http.StatusMethodNotAllowed, "method_not_allowed")
}

func TestStatusFixedWorkerID(t *testing.T) {
	fx := newStatusFixture()
	fx.snow.stats = snowflake.Stats{WorkerID: 7, Exhausts: fx.snow.stats.Exhausts}
	v := newEnv(t, fx.config)
	body := v.do(t, http.MethodGet, "/status", nil).Body.String()
	if !strings.Contains(body, "<dd>7</dd><dd class=\"note\">fixed</dd>") || strings.Contains(body, "Lease expires") {
		t.Errorf("a fixed worker id is not shown as such")
	}
	var out struct{ Snowflake map[string]any }
	decodeBody(t, v.do(t, http.MethodGet, "/status.json", nil), &out)
	if out.Snowflake["leased"] != false || out.Snowflake["worker_id"] != 7.0 {
		t.Errorf("snowflake = %v, want worker 7, not leased", out.Snowflake)
	}
	for _, key := range []string{"holder", "lease_expires", "last_renewal", "lease_error"} {
		if _, ok := out.Snowflake[key]; ok {
			t.Errorf("snowflake has %q with a fixed worker id", key)
		}
	}
}

// An instance serving from a set of stores shows the set's version; one
// store shows none.
func TestStatusSetVersion(t *testing.T) {
	for _, version := range []int64{0, 3} {
		fx := newStatusFixture()
		v := newEnv(t, fx.config, func(c *envConfig) {
			if version > 0 {
				c.Instance.SetVersion = func() int64 { return version }
			}
		})
		var out struct {
			Instance struct {
				Store map[string]any `json:"store"`
			} `json:"instance"`
		}
		decodeBody(t, v.do(t, http.MethodGet, "/status.json", nil), &out)
		got, ok := out.Instance.Store["set_version"]
		if version == 0 && ok || version > 0 && got != float64(version) {
			t.Errorf("set version %d: store = %v", version, out.Instance.Store)
		}
		page := v.do(t, http.MethodGet, "/status", nil).Body.String()
		if shown := strings.Contains(page, "Set of stores"); shown != (version > 0) || version > 0 && !strings.Contains(page, "version 3") {
			t.Errorf("set version %d: the page shows the set: %v", version, shown)
		}
	}
}

// The layout is shown with its fields from the top, in either order, in
// the page and in the JSON.
func TestStatusLayout(t *testing.T) {
	tests := []struct {
		name     string
		layout   snowflake.Layout
		value    string
		note     string
		jsonPart string
	}{
		{name: "Leaf's", layout: snowflake.DefaultLayout(), value: "41 + 10 + 12 bits",
			note:     "41 bits of milliseconds, 1,024 worker ids, 4,096 ids per millisecond per worker",
			jsonPart: `"layout":{"time_unit":"ms","time_bits":41,"worker_bits":10,"sequence_bits":12,"order":"time,worker,sequence","ids_per_second":4096000}`},
		{name: "sonyflake's", layout: snowflake.Layout{Unit: 10 * time.Millisecond, TimeBits: 39, WorkerBits: 16, SequenceBits: 8, Order: snowflake.TimeSequenceWorker},
			value:    "39 + 8 + 16 bits",
			note:     "39 bits of 10-millisecond units, 256 ids per 10-millisecond unit per worker, 65,536 worker ids: sequence above worker id",
			jsonPart: `"layout":{"time_unit":"10ms","time_bits":39,"worker_bits":16,"sequence_bits":8,"order":"time,sequence,worker","ids_per_second":25600}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newStatusFixture()
			fx.snow.stats.Layout = tt.layout
			v := newEnv(t, fx.config)
			page := html.UnescapeString(v.do(t, http.MethodGet, "/status", nil).Body.String())
			if want := "<dd>" + tt.value + "</dd><dd class=\"note\">" + tt.note + "</dd>"; !strings.Contains(page, want) {
				t.Errorf("/status lacks %s", want)
			}
			if body := v.do(t, http.MethodGet, "/status.json", nil).Body.String(); !strings.Contains(body, tt.jsonPart) {
				t.Errorf("/status.json lacks %s: %s", tt.jsonPart, body)
			}
		})
	}
}
