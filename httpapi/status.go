package httpapi

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// The status page: GET /status renders, server-side, the state of this
// instance for a person; GET /status.json is the same data for scripts.
// Both are read-only and open unless Config.StatusToken is set.

// Instance describes the running process on the status page.
type Instance struct {
	Version string
	// Started is when the process started; zero means when New was called.
	Started time.Time
	// Store names the kind of store, "mysql" or "sqlite". It is shown to
	// whoever may read the page, so it never holds an address.
	Store string
	// StoreHealth reports the store's state; nil leaves it out.
	StoreHealth func() StoreHealth
}

// StoreHealth is the store's state as the status page shows it.
type StoreHealth struct {
	Up bool
	// Since is when the current state began.
	Since time.Time
	// Err is why the store went down, or empty.
	Err string
	// Failed counts the calls that failed while it was down.
	Failed uint64
}

// failedLister is the optional part of SegmentIDs that lists the tags
// whose first load failed (segment.Allocator has it).
type failedLister interface {
	Failed() []segment.FailedTag
}

// statusRefresh is how often the page reloads itself, in seconds: often
// enough to watch a buffer drain, rarely enough that an open tab costs
// nothing.
const statusRefresh = 5

// Rates are measured over the last rateWindow, from samples taken when the
// status is read, at most one per rateSpacing. Nothing runs between two
// reads, so an idle page costs nothing.
const (
	rateWindow  = time.Minute
	rateSpacing = time.Second
)

// rateMeter turns a counter into a rate from samples taken as it is read.
type rateMeter struct {
	mu      sync.Mutex  // protects samples
	samples []rateCount // oldest first, at least rateSpacing apart
}

type rateCount struct {
	at time.Time
	n  uint64
}

// rate records the counter's value n at now and returns its rate since the
// oldest sample kept: the newest one at least rateWindow old, or an older
// one when the page was not read within the window. ok is false until two
// samples are rateSpacing apart, or after the counter went back.
func (m *rateMeter) rate(now time.Time, n uint64) (perSec float64, over time.Duration, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	drop := 0
	for drop+1 < len(m.samples) && now.Sub(m.samples[drop+1].at) >= rateWindow {
		drop++
	}
	m.samples = slices.Delete(m.samples, 0, drop)
	if k := len(m.samples); k == 0 || now.Sub(m.samples[k-1].at) >= rateSpacing {
		m.samples = append(m.samples, rateCount{at: now, n: n})
	}
	base := m.samples[0]
	over = now.Sub(base.at)
	if over < rateSpacing || n < base.n {
		return 0, 0, false
	}
	return float64(n-base.n) / over.Seconds(), over, true
}

// statusState is everything the page and its JSON show, read once.
type statusState struct {
	now       time.Time
	started   time.Time
	inst      Instance
	health    *StoreHealth
	segmentOn bool
	tags      []segment.BufferState
	failed    []segment.FailedTag
	snow      *snowflake.Stats
	uuids     *uint64 // UUIDs made; nil when UUIDs are off
	// rate is the snowflake ids per second over rateOver.
	rate     float64
	rateOver time.Duration
}

func (s *server) readStatus() statusState {
	st := statusState{now: s.now(), started: s.started, inst: s.cfg.Instance}
	if f := s.cfg.Instance.StoreHealth; f != nil {
		h := f()
		st.health = &h
	}
	if seg := s.cfg.Segments; seg != nil {
		st.segmentOn = true
		st.tags = seg.Snapshot()
		if fl, ok := seg.(failedLister); ok {
			st.failed = fl.Failed()
		}
	}
	if s.cfg.UUIDs != nil {
		n := s.cfg.UUIDs.Issued()
		st.uuids = &n
	}
	if sn, ok := s.cfg.Snowflake.(SnowflakeStatser); ok {
		stats := sn.Stats()
		st.snow = &stats
		var measured bool
		st.rate, st.rateOver, measured = s.snowRate.rate(st.now, stats.Issued)
		if !measured { // no sample a second old yet: the average since the start
			st.rateOver = st.now.Sub(st.started)
			st.rate = 0
			if st.rateOver > 0 {
				st.rate = float64(stats.Issued) / st.rateOver.Seconds()
			}
		}
	}
	return st
}

// setStatusHeaders keeps the answer out of caches and its type fixed.
func setStatusHeaders(c echo.Context) {
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, "no-store")
	h.Set(echo.HeaderXContentTypeOptions, "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// statusJSONHandler serves GET /status.json.
func (s *server) statusJSONHandler(c echo.Context) error {
	setStatusHeaders(c)
	return c.JSON(http.StatusOK, s.readStatus().json())
}

// statusPage serves GET /status. The page is rendered whole before any of
// it is sent, so that a failure is an error rather than half a page.
func (s *server) statusPage(c echo.Context) error {
	var buf bytes.Buffer
	if err := statusTemplate.Execute(&buf, s.readStatus().page()); err != nil {
		return fmt.Errorf("render the status page: %w", err)
	}
	setStatusHeaders(c)
	// The page has no script, form, frame or outside resource: the policy
	// says so, and blocks whatever a rendering mistake might let in.
	c.Response().Header().Set("Content-Security-Policy",
		"default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	return c.HTMLBlob(http.StatusOK, buf.Bytes())
}

// JSON of GET /status.json.

type statusJSON struct {
	Time     string       `json:"time"`
	Instance instanceJSON `json:"instance"`
	// Segment and Snowflake are null when the mode is off.
	Segment   *segmentStatusJSON   `json:"segment"`
	Snowflake *snowflakeStatusJSON `json:"snowflake"`
	UUID      *uuidStatusJSON      `json:"uuid"`
}

type uuidStatusJSON struct {
	Issued string `json:"issued"`
}

type instanceJSON struct {
	Version       string     `json:"version"`
	GoVersion     string     `json:"go_version"`
	Started       string     `json:"started"`
	UptimeSeconds float64    `json:"uptime_seconds"`
	Store         *storeJSON `json:"store"`
}

type storeJSON struct {
	Kind        string `json:"kind"`
	Up          bool   `json:"up"`
	Since       string `json:"since,omitempty"`
	Error       string `json:"error,omitempty"`
	FailedCalls uint64 `json:"failed_calls"`
}

type segmentStatusJSON struct {
	Tags   []statusTagJSON `json:"tags"`
	Failed []failedTagJSON `json:"failed"`
}

// statusTagJSON is a tag's buffer as /api/admin/segments shows it, and how
// long its last load took.
type statusTagJSON struct {
	bufferJSON
	LastLoadTookSeconds float64 `json:"last_load_took_seconds"`
}

type failedTagJSON struct {
	Tag         string `json:"tag"`
	Error       string `json:"error"`
	Failures    uint64 `json:"failures"`
	LastFailure string `json:"last_failure"`
}

type snowflakeStatusJSON struct {
	// WorkerID is -1 while no lease is held.
	WorkerID         int64   `json:"worker_id"`
	Leased           bool    `json:"leased"`
	Holder           string  `json:"holder,omitempty"`
	LeaseExpires     string  `json:"lease_expires,omitempty"`
	LastRenewal      string  `json:"last_renewal,omitempty"`
	LeaseError       string  `json:"lease_error,omitempty"`
	LeaseRenewals    uint64  `json:"lease_renewals"`
	LeaseFailures    uint64  `json:"lease_failures"`
	LeaseRegressions uint64  `json:"lease_regressions"`
	ClockBackwards   uint64  `json:"clock_backwards"`
	SequenceWaits    uint64  `json:"sequence_waits"`
	Issued           string  `json:"issued"`
	IDsPerSecond     float64 `json:"ids_per_second"`
	// RateWindowSeconds is the time ids_per_second is measured over.
	RateWindowSeconds float64 `json:"rate_window_seconds"`
	EpochExhausts     string  `json:"epoch_exhausts"`
	EpochLeftSeconds  float64 `json:"epoch_left_seconds"`
	// Layout is omitted when the generator does not say it.
	Layout *snowflakeLayoutJSON `json:"layout,omitempty"`
}

type snowflakeLayoutJSON struct {
	TimeUnit     string `json:"time_unit"` // "ms" or "s"
	TimeBits     int    `json:"time_bits"`
	WorkerBits   int    `json:"worker_bits"`
	SequenceBits int    `json:"sequence_bits"`
	// IDsPerSecond is one worker's ceiling.
	IDsPerSecond int64 `json:"ids_per_second"`
}

func (st statusState) json() statusJSON {
	out := statusJSON{
		Time: formatTime(st.now, timeLayout),
		Instance: instanceJSON{
			Version:       st.inst.Version,
			GoVersion:     runtime.Version(),
			Started:       formatTime(st.started, timeLayout),
			UptimeSeconds: st.now.Sub(st.started).Seconds(),
		},
	}
	if st.inst.Store != "" || st.health != nil {
		out.Instance.Store = &storeJSON{Kind: st.inst.Store, Up: true}
		if h := st.health; h != nil {
			out.Instance.Store.Up = h.Up
			out.Instance.Store.Since = formatTime(h.Since, timeLayout)
			out.Instance.Store.Error = h.Err
			out.Instance.Store.FailedCalls = h.Failed
		}
	}
	if st.segmentOn {
		seg := &segmentStatusJSON{
			Tags:   make([]statusTagJSON, 0, len(st.tags)),
			Failed: make([]failedTagJSON, 0, len(st.failed)),
		}
		for _, b := range st.tags {
			seg.Tags = append(seg.Tags, statusTagJSON{bufferJSON: toBufferJSON(b), LastLoadTookSeconds: b.LastLoadTook.Seconds()})
		}
		for _, f := range st.failed {
			seg.Failed = append(seg.Failed, failedTagJSON{Tag: f.Tag, Error: f.Err, Failures: f.Failures, LastFailure: formatTime(f.At, timeLayout)})
		}
		out.Segment = seg
	}
	if sn := st.snow; sn != nil {
		out.Snowflake = &snowflakeStatusJSON{
			WorkerID:          sn.WorkerID,
			Leased:            sn.Holder != "",
			Holder:            sn.Holder,
			LeaseExpires:      formatTime(sn.LeaseExpires, timeLayout),
			LastRenewal:       formatTime(sn.LastRenewal, timeLayout),
			LeaseError:        sn.LeaseError,
			LeaseRenewals:     sn.LeaseRenewals,
			LeaseFailures:     sn.LeaseFailures,
			LeaseRegressions:  sn.LeaseRegressions,
			ClockBackwards:    sn.ClockBackwards,
			SequenceWaits:     sn.SequenceWaits,
			Issued:            strconv.FormatUint(sn.Issued, 10),
			IDsPerSecond:      st.rate,
			RateWindowSeconds: st.rateOver.Seconds(),
			EpochExhausts:     formatTime(sn.Exhausts, timeLayout),
			EpochLeftSeconds:  sn.Exhausts.Sub(st.now).Seconds(),
		}
		if l := sn.Layout; l != (snowflake.Layout{}) {
			out.Snowflake.Layout = &snowflakeLayoutJSON{TimeUnit: snowflake.UnitSymbol(l.Unit), TimeBits: l.TimeBits, WorkerBits: l.WorkerBits,
				SequenceBits: l.SequenceBits, IDsPerSecond: l.IDsPerSecond()}
		}
	}
	if st.uuids != nil {
		out.UUID = &uuidStatusJSON{Issued: strconv.FormatUint(*st.uuids, 10)}
	}
	return out
}

// The page's view: every value is formatted here, so the template only
// lays them out.

//go:embed status.html
var statusHTML string

var statusTemplate = template.Must(template.New("status").Parse(statusHTML))

type pageView struct {
	Refresh int
	Time    string
	Version string
	// Alerts are the problems that need a person, worst first; none means
	// all is well.
	Alerts    []string
	Instance  []field
	SegmentOn bool
	Tags      []tagView
	Failed    []failedView
	Snowflake []field // nil when snowflake mode is off
	UUID      []field // nil when UUIDs are off
}

// field is one labelled value; Bad and Warn colour it.
type field struct {
	Label, Value string
	// Note is a smaller line under the value.
	Note      string
	Bad, Warn bool
}

type tagView struct {
	Tag                         string
	Halves                      [2]halfView
	Step                        string
	RowStep                     string // the row's step, when the step in use differs
	LastLoad, LastLoadAt, Took  string
	Loads, LoadFailures, Waits  string
	Regressions, Issued, Remain string
	LastError                   string
	// Bad: the last load failed; Warn: the row was found gone back in time.
	Bad, Warn bool
}

// lowPercent of the half in use left colours its bar: the switch to the
// other half is near.
const lowPercent = 20

type halfView struct {
	// State is "in use", "next", "loading" or "empty".
	State string
	// Range is the ids of the half, first–last.
	Range     string
	Remaining string
	// Left is the share of the half not yet handed out, in percent.
	Left  int
	Empty bool
	// Class is "cur" for the half in use, "next" for the other, and
	// "cur low" when the half in use is nearly spent.
	Class string
}

type failedView struct {
	Tag, Err, Failures, Last, LastAt string
}

func (st statusState) page() pageView {
	v := pageView{Refresh: statusRefresh, Time: st.now.UTC().Format("2006-01-02 15:04:05 MST"), Version: st.inst.Version}
	if st.uuids != nil {
		v.UUID = []field{{Label: "Issued", Value: strconv.FormatUint(*st.uuids, 10), Note: "RFC 9562 version 7, monotonic within the instance"}}
	}

	v.Instance = []field{
		{Label: "Version", Value: orDash(st.inst.Version), Note: runtime.Version()},
		{Label: "Uptime", Value: humanDuration(st.now.Sub(st.started)), Note: "since " + formatTime(st.started, time.RFC3339)},
	}
	store := field{Label: "Store", Value: orDash(st.inst.Store)}
	if h := st.health; h != nil {
		if h.Up {
			store.Note = "up for " + humanDuration(st.now.Sub(h.Since))
		} else {
			store.Bad = true
			store.Value += " — down"
			store.Note = fmt.Sprintf("down for %s, %s calls failed", humanDuration(st.now.Sub(h.Since)), group(h.Failed))
			v.Alerts = append(v.Alerts, "The store has been down for "+humanDuration(st.now.Sub(h.Since))+withErr(h.Err))
		}
	}
	v.Instance = append(v.Instance, store)

	if st.segmentOn {
		v.SegmentOn = true
		var loadFailing []string
		for _, b := range st.tags {
			t := tagPage(st.now, b)
			if t.Bad {
				loadFailing = append(loadFailing, b.Tag)
			}
			v.Tags = append(v.Tags, t)
		}
		for _, f := range st.failed {
			v.Failed = append(v.Failed, failedView{
				Tag: f.Tag, Err: f.Err, Failures: group(f.Failures),
				Last: ago(st.now, f.At), LastAt: formatTime(f.At, time.RFC3339),
			})
		}
		if n := len(st.failed); n > 0 {
			names := make([]string, n)
			for i, f := range st.failed {
				names[i] = f.Tag
			}
			v.Alerts = append(v.Alerts, fmt.Sprintf("%s failed to load and cannot issue ids: %s", plural(n, "tag"), list(names)))
		}
		if n := len(loadFailing); n > 0 {
			v.Alerts = append(v.Alerts, fmt.Sprintf("The last load failed for %s: %s", plural(n, "tag"), list(loadFailing)))
		}
	}

	if sn := st.snow; sn != nil {
		v.Snowflake, v.Alerts = snowflakePage(st, *sn, v.Alerts)
	}
	return v
}

func tagPage(now time.Time, b segment.BufferState) tagView {
	t := tagView{
		Tag:          b.Tag,
		Step:         group(uint64(max(b.Step, 0))),
		LastLoad:     ago(now, b.LastLoad),
		LastLoadAt:   formatTime(b.LastLoad, time.RFC3339),
		Took:         humanTook(b.LastLoadTook),
		Loads:        group(b.Loads),
		LoadFailures: group(b.LoadFailures),
		Waits:        group(b.Waits),
		Regressions:  group(b.Regressions),
		Issued:       group(b.Issued),
		LastError:    b.LastError,
		Bad:          b.LastError != "",
		Warn:         b.Regressions > 0,
	}
	if b.MinStep != b.Step {
		t.RowStep = group(uint64(max(b.MinStep, 0)))
	}
	var remain int64
	for i, seg := range b.Segments {
		h := halfView{State: "next", Class: "next"}
		if i == b.Current {
			h.State, h.Class = "in use", "cur"
		}
		if seg == nil {
			h.Empty = true
			h.State = "empty"
			if b.Loading && i != b.Current {
				h.State = "loading"
			}
			t.Halves[i] = h
			continue
		}
		remain += seg.Remaining
		h.Range = strconv.FormatInt(seg.Start, 10) + "–" + strconv.FormatInt(seg.End-1, 10)
		h.Remaining = group(uint64(max(seg.Remaining, 0)))
		if size := seg.End - seg.Start; size > 0 {
			h.Left = int(seg.Remaining * 100 / size)
			if h.Left == 0 && seg.Remaining > 0 {
				h.Left = 1 // a sliver, so "nearly spent" does not read as "spent"
			}
		}
		if i == b.Current && h.Left < lowPercent {
			h.Class += " low"
		}
		t.Halves[i] = h
	}
	t.Remain = group(uint64(max(remain, 0)))
	return t
}

func snowflakePage(st statusState, sn snowflake.Stats, alerts []string) ([]field, []string) {
	worker := field{Label: "Worker id", Value: strconv.FormatInt(sn.WorkerID, 10), Note: "fixed"}
	leased := sn.Holder != ""
	if leased {
		worker.Note = "leased by " + sn.Holder
	}
	if sn.WorkerID < 0 {
		worker.Value, worker.Bad = "none", true
		alerts = append(alerts, "Snowflake holds no worker lease: its ids are refused"+withErr(sn.LeaseError))
	}
	fields := []field{worker}
	if leased {
		lease := field{Label: "Lease expires", Value: until(st.now, sn.LeaseExpires), Note: formatTime(sn.LeaseExpires, time.RFC3339)}
		renewal := field{Label: "Last renewal", Value: ago(st.now, sn.LastRenewal),
			Note: fmt.Sprintf("%s, %s failed", count(sn.LeaseRenewals, "renewal"), group(sn.LeaseFailures))}
		if sn.LeaseError != "" {
			renewal.Warn = true
			renewal.Note += "; last error: " + sn.LeaseError
			if sn.WorkerID >= 0 {
				alerts = append(alerts, "The last snowflake lease renewal failed"+withErr(sn.LeaseError))
			}
		}
		fields = append(fields, lease, renewal)
		if sn.LeaseRegressions > 0 {
			fields = append(fields, field{Label: "Lease regressions", Value: group(sn.LeaseRegressions), Warn: true,
				Note: "renewals that found the lease gone back in time"})
		}
	}
	rate := field{Label: "Ids per second", Value: humanRate(st.rate), Note: group(sn.Issued) + " issued"}
	if st.rateOver > 0 {
		rate.Note += "; rate over the last " + humanDuration(st.rateOver)
	}
	unit := snowflake.UnitName(sn.Layout.Unit)
	backwards := field{Label: "Clock backwards", Value: group(sn.ClockBackwards), Warn: sn.ClockBackwards > 0,
		Note: group(sn.SequenceWaits) + " waits for the next " + unit}
	left := sn.Exhausts.Sub(st.now)
	epoch := field{Label: "Epoch range lasts", Value: humanDuration(left), Note: "until " + formatTime(sn.Exhausts, "2006-01-02")}
	if left < snowflake.EndingSoon {
		epoch.Bad = true
		alerts = append(alerts, "The snowflake epoch's range runs out in "+humanDuration(left))
	}
	fields = append(fields, rate, backwards, epoch)
	if l := sn.Layout; l != (snowflake.Layout{}) {
		fields = append(fields, field{Label: "Layout", Value: fmt.Sprintf("%d + %d + %d bits", l.TimeBits, l.WorkerBits, l.SequenceBits),
			Note: fmt.Sprintf("%d bits of %ss, %s worker ids, %s ids per %s per worker", l.TimeBits, unit,
				group(uint64(l.MaxWorkerID()+1)), group(uint64(l.MaxSequence()+1)), unit)})
	}
	return fields, alerts
}

// Formatting for people.

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func withErr(err string) string {
	if err == "" {
		return ""
	}
	return ": " + err
}

func plural(n int, noun string) string { return count(uint64(max(n, 0)), noun) }

// count is n and the noun, in the plural unless n is 1.
func count(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return group(n) + " " + noun + "s"
}

// list names up to five items, and how many more.
func list(names []string) string {
	const most = 5
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
}

// group writes n with thousands separated by commas.
func group(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// humanDuration is d to two units: "45s", "3m 05s", "2h 10m", "4d 3h",
// "54 years".
func humanDuration(d time.Duration) string {
	const day, year = 24 * time.Hour, 365*24*time.Hour + 6*time.Hour // a year of 365.25 days
	switch {
	case d < 0:
		return "-" + humanDuration(-d)
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int64(d/time.Minute), int64(d%time.Minute/time.Second))
	case d < day:
		return fmt.Sprintf("%dh %02dm", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
	case d < 2*year:
		return fmt.Sprintf("%dd %dh", int64(d/day), int64(d%day/time.Hour))
	}
	return fmt.Sprintf("%d years", int64(d/year))
}

// humanTook is a load's duration: "850µs", "3.2ms", "1.25s".
func humanTook(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}

func humanRate(r float64) string {
	switch {
	case r >= 100:
		return group(uint64(r + 0.5))
	case r >= 10:
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

// ago is how long before now t was, "never" for the zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + humanDuration(-d)
	}
	return humanDuration(d) + " ago"
}

// until is how long after now t is, "—" for the zero time.
func until(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := t.Sub(now)
	if d < 0 {
		return "expired " + humanDuration(-d) + " ago"
	}
	return "in " + humanDuration(d)
}
