package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leafid/leaf/httpapi"
)

// fakeIDs is the state fake servers share, as real servers share their
// database: the next id per tag, and a snowflake counter.
type fakeIDs struct {
	mu    sync.Mutex
	next  map[string]int64 // tags that exist
	flake int64
}

func newFakeIDs(tags ...string) *fakeIDs {
	f := &fakeIDs{next: map[string]int64{}, flake: 1 << 40}
	for _, t := range tags {
		f.next[t] = 1
	}
	return f
}

// failure is what a fake answers instead of ids.
type failure struct {
	status int
	code   string
}

// fake is a server that speaks the range and snowflake routes of the API
// over a real listener, with failures injected on demand.
type fake struct {
	srv      *httptest.Server
	ids      *fakeIDs
	fail     atomic.Pointer[failure]
	maxRange atomic.Int64  // when set, ranges are cut to it, as at a segment's end
	anyCount atomic.Bool   // ranges larger than the API's limit are given
	hang     chan struct{} // when not nil, requests block until it is closed
	ranges   atomic.Int64  // range requests answered with ids
	requests atomic.Int64  // every request
	asked    sync.Map      // count asked -> struct{}: the sizes seen
	token    string        // when set, the bearer token asked of every request (leaf serve --id-token)
}

func newFake(tb testing.TB, ids *fakeIDs) *fake {
	tb.Helper()
	f := &fake{ids: ids}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(f.srv.Close)
	return f
}

func (f *fake) URL() string { return f.srv.URL }

// failWith makes every request fail with status and code; 0 clears it.
func (f *fake) failWith(status int, code string) {
	if status == 0 {
		f.fail.Store(nil)
		return
	}
	f.fail.Store(&failure{status: status, code: code})
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if f.hang != nil {
		select {
		case <-f.hang:
		case <-r.Context().Done():
			return
		}
	}
	if fl := f.fail.Load(); fl != nil {
		writeError(w, fl.status, fl.code, "injected")
		return
	}
	if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
		return
	}
	count, err := strconv.Atoi(r.URL.Query().Get("count"))
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/segment/range/"):
		tag := strings.TrimPrefix(r.URL.Path, "/api/segment/range/")
		if err != nil || count < 1 || count > httpapi.MaxRangeCount && !f.anyCount.Load() {
			writeError(w, http.StatusBadRequest, "invalid_count", "bad count")
			return
		}
		f.asked.Store(count, struct{}{})
		if m := f.maxRange.Load(); m > 0 {
			count = min(count, int(m))
		}
		f.ids.mu.Lock()
		start, ok := f.ids.next[tag]
		if ok {
			f.ids.next[tag] = start + int64(count)
		}
		f.ids.mu.Unlock()
		if !ok {
			writeError(w, http.StatusNotFound, "unknown_tag", fmt.Sprintf("biz tag %q does not exist", tag))
			return
		}
		f.ranges.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"tag":%q,"start":"%d","count":%d}`, tag, start, count)
	case r.URL.Path == "/api/snowflake/batch":
		if err != nil || count < 1 || count > httpapi.MaxCount {
			writeError(w, http.StatusBadRequest, "invalid_count", "bad count")
			return
		}
		f.ids.mu.Lock()
		start := f.ids.flake
		f.ids.flake += int64(count)
		f.ids.mu.Unlock()
		ids := make([]string, count)
		for i := range ids {
			ids[i] = strconv.FormatInt(start+int64(i), 10)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string][]string{"ids": ids})
	default:
		writeError(w, http.StatusNotFound, "not_found", "no such route")
	}
}
