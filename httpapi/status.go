package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
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
	// SetVersion reports the version of the set of stores in force, for
	// an instance serving from several; nil leaves it out.
	SetVersion func() int64
	// Durability reports what the settings of each store (each node of a
	// cluster) say of the commits it acknowledges; nil leaves it out.
	Durability func() []DurabilityLine
	// Headroom lists the tags that declared a bound, and CappedPeriods
	// the capped formatted tags owned here, each with how far it is from
	// its end (nil: none).
	Headroom, CappedPeriods func() []segment.Headroom
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

// statusRefresh is how often the page reloads itself, in seconds: often
// enough to watch a buffer drain, rarely enough that an open tab costs
// nothing.
const statusRefresh = 5

// statusState is everything the page and its JSON show, read once.
type statusState struct {
	now     time.Time
	started time.Time
	inst    Instance
	health  *StoreHealth
	segment *tagsStatus // nil when segment mode is off
	snow    *snowflake.Stats
	uuids   *uint64             // UUIDs made; nil when UUIDs are off
	seq     *sequenceStatusJSON // nil when sequences are off
	// rate is the snowflake ids per second over rateOver.
	rate     float64
	rateOver time.Duration

	// durability is one line per store or node whose settings are read.
	durability []DurabilityLine
	// headroom is one line per bounded tag and capped period.
	headroom []headroomLine
}

func (s *server) readStatus(tq tagQuery) statusState {
	st := statusState{now: s.now(), started: s.started, inst: s.cfg.Instance}
	if f := s.cfg.Instance.StoreHealth; f != nil {
		h := f()
		st.health = &h
	}
	if f := s.cfg.Instance.Durability; f != nil {
		st.durability = f()
	}
	for i, f := range []func() []segment.Headroom{s.cfg.Instance.Headroom, s.cfg.Instance.CappedPeriods} {
		if f == nil {
			continue
		}
		for _, h := range f() {
			if h.Bound > 0 {
				st.headroom = append(st.headroom, headroomLine{Headroom: h, capped: i == 1})
			}
		}
	}
	if seg := s.parts.Segments; seg != nil {
		tags := readTags(seg, tq, int(s.tagsSeen.Load()))
		s.tagsSeen.Store(int64(tags.totals.Tags + tags.failedFirst))
		st.segment = &tags
	}
	if s.parts.UUIDs != nil {
		n := s.parts.UUIDs.Issued()
		st.uuids = &n
	}
	if q := s.parts.Sequences; q != nil {
		ss := q.Stats()
		st.seq = &sequenceStatusJSON{Spaces: ss.Spaces, Sections: ss.Sections, SectionsOwned: ss.SectionsOwned,
			KeysInMemory: ss.KeysInMemory, Taken: ss.Taken, Dropped: ss.Dropped}
		st.seq.Forwards = s.svc.Forwards()
	}
	if sn := s.parts.Snowflake; sn != nil {
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

// statusQuery reads the page of tags asked for (status_tags.go).
func statusQuery(c echo.Context) (tagQuery, error) {
	q, err := query(c)
	if err != nil {
		return tagQuery{}, err
	}
	return parseTagQuery(q)
}

// statusJSONHandler serves GET /status.json.
func (s *server) statusJSONHandler(c echo.Context) error {
	tq, err := statusQuery(c)
	if err != nil {
		return err
	}
	setStatusHeaders(c)
	return c.JSON(http.StatusOK, s.readStatus(tq).json())
}

// statusPage serves GET /status. The page is rendered whole before any of
// it is sent, so that a failure is an error rather than half a page.
func (s *server) statusPage(c echo.Context) error {
	tq, err := statusQuery(c)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := statusTemplate.Execute(&buf, s.readStatus(tq).page()); err != nil {
		return fmt.Errorf("render the status page: %w", err)
	}
	setStatusHeaders(c)
	// The page has no script, frame or outside resource, and one form, the
	// search, which asks for the page itself: the policy says so, and
	// blocks whatever a rendering mistake might let in.
	c.Response().Header().Set("Content-Security-Policy",
		"default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	return c.HTMLBlob(http.StatusOK, buf.Bytes())
}
