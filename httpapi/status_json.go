package httpapi

import (
	"runtime"
	"strconv"

	"github.com/leafid/leaf/snowflake"
)

// JSON of GET /status.json.

type statusJSON struct {
	Time     string       `json:"time"`
	Instance instanceJSON `json:"instance"`
	// Segment and Snowflake are null when the mode is off.
	Segment   *segmentStatusJSON   `json:"segment"`
	Snowflake *snowflakeStatusJSON `json:"snowflake"`
	UUID      *uuidStatusJSON      `json:"uuid"`
	// Sequence is left out when sequences are off.
	Sequence *sequenceStatusJSON `json:"sequence,omitempty"`
	// Durability is left out when no store's settings are read.
	Durability []durabilityJSON `json:"durability,omitempty"`
	// Headroom is left out when no tag declared a bound and no capped
	// period is owned here.
	Headroom []headroomJSON `json:"headroom,omitempty"`
}

// sequenceStatusJSON is this instance's share of the per-key sequences.
type sequenceStatusJSON struct {
	Spaces        int   `json:"spaces"`
	Sections      int   `json:"sections"`
	SectionsOwned int   `json:"sections_owned"`
	KeysInMemory  int64 `json:"keys_in_memory"`
	Taken         int64 `json:"sections_taken"`
	Dropped       int64 `json:"sections_dropped"`
	Forwards      int64 `json:"forwards"`
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
	// SetVersion is the version of the set of stores; omitted for one
	// store.
	SetVersion int64 `json:"set_version,omitempty"`
}

// segmentStatusJSON is the totals over all tags and one page of them.
type segmentStatusJSON struct {
	Totals segmentTotalsJSON `json:"totals"`
	Page   statusPageJSON    `json:"page"`
	// Tags and Failed are the page's tags, with a buffer and without
	// (their first load failed).
	Tags   []statusTagJSON `json:"tags"`
	Failed []failedTagJSON `json:"failed"`
}

type segmentTotalsJSON struct {
	// Tags counts those with a buffer, Failing those of them whose last
	// load failed, and FailedFirst those whose first load failed.
	Tags         int    `json:"tags"`
	Failing      int    `json:"failing"`
	FailedFirst  int    `json:"failed"`
	Issued       string `json:"issued"`
	Loads        uint64 `json:"loads"`
	LoadFailures uint64 `json:"load_failures"`
	Waits        uint64 `json:"waits"`
	Regressions  uint64 `json:"regressions"`
}

type statusPageJSON struct {
	Page    int    `json:"page"`
	PerPage int    `json:"per_page"`
	Pages   int    `json:"pages"`
	Query   string `json:"q"`
	// Matching counts the tags the search kept, on every page.
	Matching int `json:"matching"`
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
	TimeUnit     string `json:"time_unit"` // "ms", "10ms" or "s"
	TimeBits     int    `json:"time_bits"`
	WorkerBits   int    `json:"worker_bits"`
	SequenceBits int    `json:"sequence_bits"`
	// Order is the fields' order from the top: "time,worker,sequence" or
	// "time,sequence,worker".
	Order string `json:"order"`
	// IDsPerSecond is one worker's ceiling.
	IDsPerSecond int64 `json:"ids_per_second"`
}

// json is the body of GET /status.json.
func (st statusState) json() statusJSON {
	out := statusJSON{
		Time: formatTime(st.now, timeLayout),
		Instance: instanceJSON{
			Version:       st.inst.Version,
			GoVersion:     runtime.Version(),
			Started:       formatTime(st.started, timeLayout),
			UptimeSeconds: st.now.Sub(st.started).Seconds(),
			Store:         st.storeJSON(),
		},
	}
	if ts := st.segment; ts != nil {
		out.Segment = ts.json()
	}
	if sn := st.snow; sn != nil {
		out.Snowflake = st.snowflakeJSON(sn)
	}
	if st.uuids != nil {
		out.UUID = &uuidStatusJSON{Issued: strconv.FormatUint(*st.uuids, 10)}
	}
	out.Sequence = st.seq
	out.Durability = st.durabilityJSON()
	out.Headroom = st.headroomJSON()
	return out
}

// storeJSON is the store's part of the instance, nil when there is none
// to show.
func (st statusState) storeJSON() *storeJSON {
	if st.inst.Store == "" && st.health == nil {
		return nil
	}
	out := &storeJSON{Kind: st.inst.Store, Up: true}
	if h := st.health; h != nil {
		out.Up = h.Up
		out.Since = formatTime(h.Since, timeLayout)
		out.Error = h.Err
		out.FailedCalls = h.Failed
	}
	if f := st.inst.SetVersion; f != nil {
		out.SetVersion = f()
	}
	return out
}

// json is the segment part: the totals, and the page of tags asked for.
func (ts *tagsStatus) json() *segmentStatusJSON {
	t := ts.totals
	seg := &segmentStatusJSON{
		Totals: segmentTotalsJSON{Tags: t.Tags, Failing: t.Failing, FailedFirst: ts.failedFirst,
			Issued: strconv.FormatUint(t.Issued, 10), Loads: t.Loads, LoadFailures: t.LoadFailures,
			Waits: t.Waits, Regressions: t.Regressions},
		Page: statusPageJSON{Page: ts.query.page, PerPage: ts.query.perPage, Pages: ts.pages,
			Query: ts.query.search, Matching: ts.matching},
		Tags:   make([]statusTagJSON, 0, len(ts.tags)),
		Failed: make([]failedTagJSON, 0, len(ts.failed)),
	}
	for _, b := range ts.tags {
		seg.Tags = append(seg.Tags, statusTagJSON{bufferJSON: toBufferJSON(b), LastLoadTookSeconds: b.LastLoadTook.Seconds()})
	}
	for _, f := range ts.failed {
		seg.Failed = append(seg.Failed, failedTagJSON{Tag: f.Tag, Error: f.Err, Failures: f.Failures, LastFailure: formatTime(f.At, timeLayout)})
	}
	return seg
}

// snowflakeJSON is the snowflake part, with the rate st measured.
func (st statusState) snowflakeJSON(sn *snowflake.Stats) *snowflakeStatusJSON {
	out := &snowflakeStatusJSON{
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
		out.Layout = &snowflakeLayoutJSON{TimeUnit: snowflake.UnitSymbol(l.Unit), TimeBits: l.TimeBits, WorkerBits: l.WorkerBits,
			SequenceBits: l.SequenceBits, Order: l.Order.String(), IDsPerSecond: l.IDsPerSecond()}
	}
	return out
}
