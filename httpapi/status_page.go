package httpapi

import (
	_ "embed"
	"fmt"
	"html/template"
	"net/url"
	"runtime"
	"strconv"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

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
	// Totals are the figures of all tags together.
	Totals []field
	// Tags and Failed are the page's tags, with a buffer and without.
	Tags   []tagView
	Failed []failedView
	// Search and PerPage are what was asked for, kept by the search form;
	// PerPage is 0 for the default.
	Search  string
	PerPage int
	// Showing says which tags are shown, or Empty why none is.
	Showing, Empty string
	// Prev and Next are the addresses of the pages around this one, empty
	// at the ends.
	Prev, Next string
	Snowflake  []field // nil when snowflake mode is off
	UUID       []field // nil when UUIDs are off
	// Durability is one field per store or node whose settings are read.
	Durability []field
	// Headroom is one field per bounded tag and capped period.
	Headroom []field
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
	if f := st.inst.SetVersion; f != nil {
		v.Instance = append(v.Instance, field{Label: "Set of stores", Value: "version " + strconv.FormatInt(f(), 10)})
	}
	st.durabilityPage(&v)
	st.headroomPage(&v)

	if ts := st.segment; ts != nil {
		v.SegmentOn = true
		for _, b := range ts.tags {
			v.Tags = append(v.Tags, tagPage(st.now, b))
		}
		for _, f := range ts.failed {
			v.Failed = append(v.Failed, failedView{
				Tag: f.Tag, Err: f.Err, Failures: group(f.Failures),
				Last: ago(st.now, f.At), LastAt: formatTime(f.At, time.RFC3339),
			})
		}
		if n := ts.failedFirst; n > 0 {
			names := make([]string, 0, namesShown)
			for _, f := range ts.failedAll[:min(n, namesShown)] {
				names = append(names, f.Tag)
			}
			v.Alerts = append(v.Alerts, fmt.Sprintf("%s failed to load and cannot issue ids: %s", plural(n, "tag"), listOf(names, n)))
		}
		if n := ts.totals.Failing; n > 0 {
			v.Alerts = append(v.Alerts, fmt.Sprintf("The last load failed for %s: %s", plural(n, "tag"), listOf(ts.failing, n)))
		}
		tagsPage(&v, ts)
	}

	if sn := st.snow; sn != nil {
		v.Snowflake, v.Alerts = snowflakePage(st, *sn, v.Alerts)
	}
	return v
}

// tagsPage sets the totals of v, and says which page of tags it shows.
func tagsPage(v *pageView, ts *tagsStatus) {
	t, tq := ts.totals, ts.query
	failing := field{Label: "Failing", Value: group(uint64(t.Failing)), Note: "last load failed", Bad: t.Failing > 0}
	failed := field{Label: "Failed to load", Value: group(uint64(ts.failedFirst)), Note: "first load failed", Bad: ts.failedFirst > 0}
	v.Totals = []field{
		{Label: "Tags", Value: group(uint64(t.Tags)), Note: "with a buffer"},
		failing, failed,
		{Label: "Issued", Value: group(t.Issued), Note: "ids, all tags"},
		{Label: "Loads", Value: group(t.Loads), Note: group(t.LoadFailures) + " failed"},
		{Label: "Waits", Value: group(t.Waits), Note: "requests that waited for a load"},
		{Label: "Regressions", Value: group(t.Regressions), Warn: t.Regressions > 0, Note: "rows found gone back in time"},
	}
	v.Search = tq.search
	if tq.perPage != defaultPerPage {
		v.PerPage = tq.perPage
	}
	shown := len(ts.tags) + len(ts.failed)
	from := (tq.page - 1) * tq.perPage
	switch {
	case ts.matching == 0 && tq.search != "":
		v.Empty = fmt.Sprintf("No tag's name contains %q.", tq.search)
	case ts.matching == 0:
		v.Empty = "No tag has been asked for since the start."
	case shown == 0:
		v.Empty = fmt.Sprintf("Page %d is past the last one, %d.", tq.page, ts.pages)
	default:
		v.Showing = fmt.Sprintf("%s–%s of %s", group(uint64(from+1)), group(uint64(from+shown)), plural(ts.matching, "tag"))
		if tq.search != "" {
			v.Showing += fmt.Sprintf(" whose name contains %q", tq.search)
		}
		v.Showing += ", those that need attention first"
	}
	if tq.page > 1 {
		v.Prev = pageURL(tq, min(tq.page-1, ts.pages))
	}
	if tq.page < ts.pages {
		v.Next = pageURL(tq, tq.page+1)
	}
}

// pageURL is the address of page of the tags asked for by tq, relative to
// the page.
func pageURL(tq tagQuery, page int) string {
	q := url.Values{"page": {strconv.Itoa(page)}}
	if tq.perPage != defaultPerPage {
		q.Set("per_page", strconv.Itoa(tq.perPage))
	}
	if tq.search != "" {
		q.Set("q", tq.search)
	}
	return "status?" + q.Encode()
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
		fields = append(fields, layoutField(l, unit))
	}
	return fields, alerts
}

// layoutField shows the widths of l's fields from the top, and what they
// give, in the same order.
func layoutField(l snowflake.Layout, unit string) field {
	workers := group(uint64(l.MaxWorkerID()+1)) + " worker ids"
	perUnit := group(uint64(l.MaxSequence()+1)) + " ids per " + unit + " per worker"
	if l.Order == snowflake.TimeSequenceWorker {
		return field{Label: "Layout", Value: fmt.Sprintf("%d + %d + %d bits", l.TimeBits, l.SequenceBits, l.WorkerBits),
			Note: fmt.Sprintf("%d bits of %ss, %s, %s: sequence above worker id", l.TimeBits, unit, perUnit, workers)}
	}
	return field{Label: "Layout", Value: fmt.Sprintf("%d + %d + %d bits", l.TimeBits, l.WorkerBits, l.SequenceBits),
		Note: fmt.Sprintf("%d bits of %ss, %s, %s", l.TimeBits, unit, workers, perUnit)}
}
