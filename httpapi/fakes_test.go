package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
)

// fakeSegments issues ids per tag from 1 upwards. A tag must be in next
// unless anyTag is set; errs makes a tag fail; the tag "boom" panics.
// rangeCap, when set, shortens ranges to at most that many ids, as a
// segment boundary does.
type fakeSegments struct {
	mu       sync.Mutex
	next     map[string]int64
	errs     map[string]error
	anyTag   bool
	rangeCap int
	issued   map[string]uint64
	seen     []string
	// rows, when set, are raised past every id handed out of a tag that
	// has one, as an allocator's ranges raise them.
	rows *segmenttest.MemStore
}

func newFakeSegments(tags ...string) *fakeSegments {
	f := &fakeSegments{next: map[string]int64{}, errs: map[string]error{}, issued: map[string]uint64{}}
	for _, t := range tags {
		f.next[t] = 1
	}
	return f
}

// take hands out n consecutive ids of tag and returns the first.
func (f *fakeSegments) take(ctx context.Context, tag string, n int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, tag)
	if tag == "boom" {
		panic("fake segment panic")
	}
	if err := f.errs[tag]; err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	start, ok := f.next[tag]
	if !ok {
		if !f.anyTag {
			return 0, segment.ErrUnknownTag
		}
		start = 1
	}
	f.next[tag] = start + int64(n)
	f.issued[tag] += uint64(n)
	if f.rows != nil {
		if _, err := f.rows.Tag(ctx, tag); err == nil {
			f.rows.Edit(tag, func(t *segment.Tag) { t.MaxID = max(t.MaxID, start+int64(n)) })
		}
	}
	return start, nil
}

func (f *fakeSegments) NextN(ctx context.Context, tag string, n int) ([]int64, error) {
	start, err := f.take(ctx, tag, n)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = start + int64(i)
	}
	return ids, nil
}

func (f *fakeSegments) NextRange(ctx context.Context, tag string, n int) (int64, int, error) {
	f.mu.Lock()
	if f.rangeCap > 0 {
		n = min(n, f.rangeCap)
	}
	f.mu.Unlock()
	start, err := f.take(ctx, tag, n)
	if err != nil {
		return 0, 0, err
	}
	return start, n, nil
}

// lastSeen is the tag of the last call, or "" before any.
func (f *fakeSegments) lastSeen() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		return ""
	}
	return f.seen[len(f.seen)-1]
}

// total is the number of ids handed out for every tag.
func (f *fakeSegments) total() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n uint64
	for _, v := range f.issued {
		n += v
	}
	return n
}

func (f *fakeSegments) Next(ctx context.Context, tag string) (int64, error) {
	ids, err := f.NextN(ctx, tag, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

func (f *fakeSegments) Snapshot() []segment.BufferState {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []segment.BufferState
	for tag, next := range f.next {
		out = append(out, segment.BufferState{
			Tag: tag,
			Segments: [2]*segment.SegmentState{
				{Start: 1, End: 1001, Next: next, Remaining: 1001 - next, LoadedAt: time.Unix(1700000000, 0)},
				{Start: 1001, End: 2001, Next: 1001, Remaining: 1000},
			},
			Step: 1000, MinStep: 1000,
			LastLoad: time.Unix(1700000000, 0),
			Issued:   f.issued[tag],
			Loads:    2, LoadFailures: 1, Waits: 3,
		})
	}
	return out
}

func (f *fakeSegments) EachTag(fn func(segment.TagStats)) segment.Totals {
	return eachTagOf(f.Snapshot(), fn)
}

func (f *fakeSegments) State(tag string) (segment.BufferState, bool) {
	return stateOf(f.Snapshot(), tag)
}

// eachTagOf is segment.Allocator's EachTag over the buffers of states.
func eachTagOf(states []segment.BufferState, fn func(segment.TagStats)) segment.Totals {
	var t segment.Totals
	for _, b := range states {
		st := segment.TagStats{Tag: b.Tag, Issued: b.Issued, Loads: b.Loads, LoadFailures: b.LoadFailures,
			Waits: b.Waits, Regressions: b.Regressions, Step: b.Step, Failing: b.LastError != ""}
		for _, s := range b.Segments {
			if s != nil {
				st.Remaining += s.Remaining
			}
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

// stateOf is segment.Allocator's State over the buffers of states.
func stateOf(states []segment.BufferState, tag string) (segment.BufferState, bool) {
	for _, b := range states {
		if b.Tag == tag {
			return b, true
		}
	}
	return segment.BufferState{}, false
}

// Failed lists no tag: the fake has no first load to fail.
func (f *fakeSegments) Failed() []segment.FailedTag { return nil }

// NextLoaded is Next for a tag that issued an id already (Loaded).
func (f *fakeSegments) NextLoaded(ctx context.Context, tag string) (int64, bool, error) {
	if !f.Loaded(tag) {
		return 0, false, nil
	}
	id, err := f.Next(ctx, tag)
	return id, true, err
}

// Loaded is true once tag issued an id, as a buffer is loaded then.
func (f *fakeSegments) Loaded(tag string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issued[tag] > 0
}

func (f *fakeSegments) setErr(tag string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[tag] = err
}

// Leaf's layout: 41 bits of ms, 10 of worker, 12 of sequence.
const fakeEpoch = 1288834974657

type fakeSnowflake struct {
	mu   sync.Mutex
	next int64
	err  error
}

func (f *fakeSnowflake) NextN(ctx context.Context, n int) ([]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	ids := make([]int64, n)
	for i := range ids {
		f.next++
		ids[i] = (1000 << 22) | (7 << 12) | f.next
	}
	return ids, nil
}

// issued is the number of ids handed out.
func (f *fakeSnowflake) issued() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next
}

func (f *fakeSnowflake) Next(ctx context.Context) (int64, error) {
	ids, err := f.NextN(ctx, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// Stats is a fixed worker id, 7, and the ids handed out.
func (f *fakeSnowflake) Stats() snowflake.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return snowflake.Stats{WorkerID: 7, Issued: uint64(f.next), Exhausts: time.UnixMilli(fakeEpoch + 1<<41).UTC(),
		Epoch: time.UnixMilli(fakeEpoch).UTC()}
}

func (f *fakeSnowflake) Bounds(from, to time.Time) (lo, hi int64, err error) {
	return snowflake.DefaultLayout().Bounds(fakeEpoch, from, to)
}

func (f *fakeSnowflake) Decode(id int64) (snowflake.ID, error) {
	if id < 0 {
		return snowflake.ID{}, snowflake.ErrInvalidID
	}
	return snowflake.ID{
		ID:       id,
		Time:     time.UnixMilli(fakeEpoch + id>>22).UTC(),
		WorkerID: (id >> 12) & 1023,
		Sequence: id & 4095,
	}, nil
}

var fakeNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newFakeTags is the store of the admin routes: one row, orders, and
// fakeNow as the time of every change.
func newFakeTags() *segmenttest.MemStore {
	st := segmenttest.New(segment.Tag{Name: "orders", MaxID: 2001, Step: 1000, Description: "order ids", UpdateTime: fakeNow})
	st.SetNow(func() time.Time { return fakeNow })
	return st
}

var _ service.TagRows = (*segmenttest.MemStore)(nil)

// fakeBounds keeps the bounds of the tags of rows in memory.
type fakeBounds struct {
	rows *segmenttest.MemStore
	mu   sync.Mutex
	m    map[string]int64
}

func (f *fakeBounds) TagBounds(context.Context) (map[string]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.m), nil
}

func (f *fakeBounds) TagBound(_ context.Context, tag string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[tag], nil
}

func (f *fakeBounds) SetTagBound(ctx context.Context, tag string, bound int64) error {
	if _, err := f.rows.Tag(ctx, tag); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]int64{}
	}
	if bound == 0 {
		delete(f.m, tag)
	} else {
		f.m[tag] = bound
	}
	return nil
}

const testToken = "s3cret-admin-token"

type env struct {
	e    *httpapi.Handler
	seg  *fakeSegments
	snow *fakeSnowflake
	tags *segmenttest.MemStore
	reg  *prometheus.Registry
	logs *testkit.SyncBuffer
}

// envConfig is what a test may change of its server: the parts of the
// service, and the edge's own settings.
type envConfig struct {
	service.Config
	AdminToken, StatusToken string
	Instance                httpapi.Instance
	Checks                  []readiness.Check
	Now                     func() time.Time
}

// handler makes the server of c: the service, and the HTTP edge around it.
func (c envConfig) handler() *httpapi.Handler {
	reg, _ := c.Metrics.(*prometheus.Registry)
	return httpapi.New(httpapi.Config{
		Service:    service.New(c.Config),
		AdminToken: c.AdminToken, StatusToken: c.StatusToken, Instance: c.Instance, Checks: c.Checks, Now: c.Now,
		Registry: reg, Logger: c.Logger,
	})
}

// newEnv builds a server with every mode on and the admin API mounted;
// edit applies changes to the config first.
func newEnv(tb testing.TB, edit ...func(*envConfig)) *env {
	tb.Helper()
	v := &env{
		seg:  newFakeSegments("orders", "users"),
		snow: &fakeSnowflake{},
		tags: newFakeTags(),
		reg:  prometheus.NewRegistry(),
		logs: &testkit.SyncBuffer{},
	}
	cfg := envConfig{
		Config: service.Config{
			Segments:  v.seg,
			Snowflake: v.snow,
			Tags:      v.tags,
			Bounds:    &fakeBounds{rows: v.tags},
			Metrics:   v.reg,
			Logger:    slog.New(slog.NewTextHandler(v.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
		AdminToken: testToken,
	}
	for _, f := range edit {
		f(&cfg)
	}
	v.e = cfg.handler()
	return v
}

type reqOpt func(*http.Request)

func withToken(tok string) reqOpt {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}

func (v *env) do(tb testing.TB, method, target string, body io.Reader, opts ...reqOpt) *httptest.ResponseRecorder {
	tb.Helper()
	req := httptest.NewRequest(method, target, body)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	rec := httptest.NewRecorder()
	v.e.ServeHTTP(rec, req)
	return rec
}

func (v *env) admin(tb testing.TB, method, target, body string) *httptest.ResponseRecorder {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	return v.do(tb, method, target, r, withToken(testToken))
}

type apiErr struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wantError checks the status and that the body is exactly the error shape
// with code.
func wantError(tb testing.TB, rec *httptest.ResponseRecorder, status int, code string) apiErr {
	tb.Helper()
	if rec.Code != status {
		tb.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Fatalf("Content-Type = %q, want JSON; body %s", ct, rec.Body)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		tb.Fatalf("body %q is not JSON: %v", rec.Body, err)
	}
	if _, ok := raw["error"]; !ok || (len(raw) != 1) {
		tb.Fatalf("body %s is not {\"error\":{...}}", rec.Body)
	}
	var e apiErr
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		tb.Fatalf("body %s: %v", rec.Body, err)
	}
	if e.Error.Code != code || e.Error.Message == "" {
		tb.Fatalf("error = %+v, want code %q and a message", e.Error, code)
	}
	if status == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
		tb.Fatalf("503 without Retry-After")
	}
	return e
}

func decodeBody(tb testing.TB, rec *httptest.ResponseRecorder, v any) {
	tb.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		tb.Fatalf("body %q: %v", rec.Body, err)
	}
}

// fakeLeases lease worker ids from memory: each acquisition the next id,
// its instance its number.
type fakeLeases struct {
	mu   sync.Mutex
	next int64
	held map[int64]snowflake.Lease
}

func (f *fakeLeases) Acquire(_ context.Context, holder string, maxWorkers int64, ttl time.Duration) (snowflake.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next >= maxWorkers {
		return snowflake.Lease{}, snowflake.ErrNoWorkerID
	}
	if f.held == nil {
		f.held = map[int64]snowflake.Lease{}
	}
	l := snowflake.Lease{WorkerID: f.next, Holder: holder, Instance: strconv.FormatInt(f.next, 10), Expires: fakeNow.Add(ttl)}
	f.held[l.WorkerID] = l
	f.next++
	return l, nil
}

func (f *fakeLeases) Renew(_ context.Context, l snowflake.Lease, last int64, ttl time.Duration) (snowflake.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := f.held[l.WorkerID]
	if !ok || h.Instance != l.Instance || h.Holder != l.Holder {
		return snowflake.Lease{}, snowflake.ErrLeaseLost
	}
	h.LastTimestamp, h.Expires = max(h.LastTimestamp, last), fakeNow.Add(ttl)
	f.held[l.WorkerID] = h
	return h, nil
}

func (f *fakeLeases) Release(_ context.Context, l snowflake.Lease, last int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := f.held[l.WorkerID]
	if !ok || h.Instance != l.Instance {
		return snowflake.ErrLeaseLost
	}
	delete(f.held, l.WorkerID)
	return nil
}
