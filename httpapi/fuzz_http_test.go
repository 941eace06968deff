package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
)

// idSet holds issued ids as sorted, disjoint, non-adjacent [lo, hi]
// intervals: ranges of a million ids cost one entry.
type idSet struct{ iv [][2]int64 }

// add records [lo, hi] and reports false if any of it was there.
func (s *idSet) add(lo, hi int64) bool {
	i := sort.Search(len(s.iv), func(i int) bool { return s.iv[i][1] >= lo-1 })
	j := i
	for ; j < len(s.iv) && s.iv[j][0]-1 <= hi; j++ {
		if s.iv[j][0] <= hi && s.iv[j][1] >= lo {
			return false
		}
		lo, hi = min(lo, s.iv[j][0]), max(hi, s.iv[j][1])
	}
	s.iv = slices.Replace(s.iv, i, j, [2]int64{lo, hi})
	return true
}

// addAll records ids, which must be increasing.
func (s *idSet) addAll(ids []int64) bool {
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		if !s.add(ids[i], ids[j-1]) {
			return false
		}
		i = j
	}
	return true
}

// knownCodes are the codes an answer to the fuzz target may carry: every
// code of the API but internal, which only a bug gives.
var knownCodes = func() map[string]bool {
	known := map[string]bool{}
	for _, c := range httpapi.ErrorCodes() {
		known[c] = c != "internal"
	}
	return known
}()

const fuzzToken = "t"

// httpSeeds are requests of the hostile-input findings: method, target,
// headers (one "Name: value" a line) and body.
var httpSeeds = [][4]string{
	{"GET", "/api/segment/get/orders", "", ""},
	{"GET", "/api/segment/get/order%2Fv2", "", ""},
	{"GET", "/api/segment/get/user@profile", "", ""},
	{"GET", "/api/segment/get/订单", "", ""},
	{"GET", "/api/segment/get/%E8%AE%A2%E5%8D%95", "", ""},
	{"GET", "/api/segment/get/%C3%A9t%C3%A9", "", ""},
	{"GET", "/api/segment/get/a%253Ab", "", ""},
	{"GET", "/api/segment/get/a%3Ab", "", ""},
	{"GET", "/api/segment/get/%25", "", ""},
	{"GET", "/api/segment/get/%2F", "", ""},
	{"GET", "/api/segment/get/%zz", "", ""},
	{"GET", "/api/segment/get/", "", ""},
	{"GET", "/api/segment/get/orders/", "", ""},
	{"GET", "/api/segment/get/misconfigured", "", ""},
	{"GET", "/api/segment/get/exhausted", "", ""},
	{"GET", "/api/segment/batch/a%22b%5Cc?count=3", "", ""},
	{"GET", "/api/segment/batch/orders?count=10000", "", ""},
	{"GET", "/api/segment/batch/?count=1", "", ""},
	{"GET", "/api/segment/batch/orders?count=+5", "", ""},
	{"GET", "/api/segment/batch/orders?count=05", "", ""},
	{"GET", "/api/segment/batch/orders?count=5&count=6", "", ""},
	{"GET", "/api/segment/batch/orders?count=%zz", "", ""},
	{"GET", "/api/segment/range/orders?count=1000000", "", ""},
	{"GET", "/api/segment/range/order%2Fv2?count=1000", "", ""},
	{"GET", "/api/segment/range/orders?count=1000001", "", ""},
	{"GET", "/api/segment/range/orders?count=99999999999999999999999", "", ""},
	{"GET", "/api/snowflake/get", "", ""},
	{"GET", "/api/snowflake/get/any%2Fkey", "", ""},
	{"GET", "/api/snowflake/batch?count=10000", "", ""},
	{"GET", "/api/snowflake/decode/%31", "", ""},
	{"GET", "/api/snowflake/decode/1%20", "", ""},
	{"GET", "/api/snowflake/decode/", "", ""},
	{"GET", "/api/snowflake/decode/9223372036854775808", "", ""},
	{"HEAD", "/healthz", "", ""},
	{"HEAD", "/readyz", "", ""},
	{"HEAD", "/metrics", "", ""},
	{"GET", "/openapi.json", "", ""},
	{"HEAD", "/openapi.json", "", ""},
	{"HEAD", "/api/segment/get/orders", "", ""},
	{"HEAD", "/api/segment/range/orders?count=5", "", ""},
	{"OPTIONS", "/api/segment/get/orders", "", ""},
	{"BREW", "/api/snowflake/get", "", ""},
	{"GET", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, ""},
	{"GET", "/api/admin/segments", "Authorization: Bearer " + fuzzToken, ""},
	{"GET", "/api/admin/tags/order%2Fv2", "Authorization: Bearer " + fuzzToken, ""},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"new/tag","step":5}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"a","tag":"b"}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"a","step":null}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"a","step":"x"}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"a","Step":1}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken + "\nContent-Length: 70000", `{"tag":"a"}`},
	{"PATCH", "/api/admin/tags/orders", "Authorization: Bearer " + fuzzToken, `{"max_id":"9000000000000000000"}`},
	{"PATCH", "/api/admin/tags/orders", "Authorization: Bearer " + fuzzToken, `{"step":1000000}`},
	{"PATCH", "/api/admin/tags/orders", "Authorization: Bearer wrong", `{"step":1}`},
	// Formatted and opaque tags.
	{"GET", "/api/segment/get/fmt", "", ""},
	{"GET", "/api/segment/batch/fmt?count=100", "", ""},
	{"GET", "/api/segment/get/fmt?format=base62", "", ""},
	{"GET", "/api/segment/range/fmt?count=10", "", ""},
	{"GET", "/api/segment/get/opq", "", ""},
	{"GET", "/api/segment/batch/opq?count=50&format=base62", "", ""},
	{"GET", "/api/segment/range/opq?count=10", "", ""},
	{"GET", "/api/admin/tags/opq/reveal/12345", "Authorization: Bearer " + fuzzToken, ""},
	{"GET", "/api/admin/tags/opq/reveal/0", "Authorization: Bearer " + fuzzToken, ""},
	{"GET", "/api/admin/tags/fmt/reveal/1", "Authorization: Bearer " + fuzzToken, ""},
	{"GET", "/api/admin/tags/fmt", "Authorization: Bearer " + fuzzToken, ""},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"inv","format":"INV{date:200601}-{seq:3!}","reset":"month","time_zone":"Europe/Paris"}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"x","format":"{date:2006}{seq}","reset":"day"}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"x","format":"{seq","reset":"week"}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"y","opaque":53,"max_id":"9007199254740993"}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"z","format":"Z-{seq}","opaque":63}`},
	{"PATCH", "/api/admin/tags/orders", "Authorization: Bearer " + fuzzToken, `{"format":"O-{seq:2!}"}`},
	{"PATCH", "/api/admin/tags/fmt", "Authorization: Bearer " + fuzzToken, `{"time_zone":"America/New_York"}`},
	{"PATCH", "/api/admin/tags/fmt", "Authorization: Bearer " + fuzzToken, `{"format":"G-{seq}"}`},
	{"GET", "/api/segment/get/ordered", "", ""},
	{"GET", "/api/segment/batch/ordered?count=25", "", ""},
	{"GET", "/api/segment/range/ordered?count=5", "", ""},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"o2","ordered":true}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"o3","ordered":1}`},
	{"GET", "/api/sequence/next/inbox/alice", "", ""},
	{"GET", "/api/sequence/next/inbox/%E4%BC%9A%E8%AF%9D%2F1", "", ""},
	{"GET", "/api/sequence/next/inbox/a%FFb", "", ""},
	{"GET", "/api/sequence/next/inbox/" + strings.Repeat("k", 257), "", ""},
	{"GET", "/api/sequence/next/inbox/", "", ""},
	{"GET", "/api/sequence/next/inbox", "", ""},
	{"GET", "/api/sequence/next/", "", ""},
	{"GET", "/api/sequence/next/outbox/k", "", ""},
	{"GET", "/api/sequence/next/inbox/bob?count=10000", "", ""},
	{"GET", "/api/sequence/next/inbox/bob?count=0", "", ""},
	{"GET", "/api/sequence/next/inbox/bob?count=%zz", "", ""},
	{"GET", "/api/sequence/current/inbox/alice", "", ""},
	{"GET", "/api/sequence/current/inbox/alice?x=1", "", ""},
	{"GET", "/api/sequence/next/inbox/k", "Leaf-Forwarded: 1", ""},
	{"HEAD", "/api/sequence/next/inbox/alice", "", ""},
	{"GET", "/api/admin/sequences", "Authorization: Bearer " + fuzzToken, ""},
	{"GET", "/api/admin/sequences/inbox", "Authorization: Bearer " + fuzzToken, ""},
	{"POST", "/api/admin/sequences", "Authorization: Bearer " + fuzzToken, `{"space":"s2","step":7,"sections":3}`},
	{"POST", "/api/admin/sequences", "Authorization: Bearer " + fuzzToken, `{"space":"inbox","sections":9}`},
	{"POST", "/api/admin/sequences", "Authorization: Bearer " + fuzzToken, `{"space":"a","sections":-1}`},
	// Ordered and formatted or opaque at once: refused.
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"o4","ordered":true,"format":"O-{seq}"}`},
	{"POST", "/api/admin/tags", "Authorization: Bearer " + fuzzToken, `{"tag":"o5","ordered":true,"opaque":63}`},
	{"PATCH", "/api/admin/tags/ordered", "Authorization: Bearer " + fuzzToken, `{"format":"O-{seq}"}`},
}

// FuzzHTTP drives the whole API, the real allocator and snowflake
// generator behind it, with fuzzed methods, targets, headers and bodies.
// Across the run no id is issued twice; no request is a 500 but for a
// misconfigured row, or takes more than two seconds; every error is the
// one JSON shape with a known code.
func FuzzHTTP(f *testing.F) {
	for _, s := range httpSeeds {
		f.Add(s[0], s[1], s[2], []byte(s[3]))
	}
	// Every row takes its ranges from one sequence, so an id is unique
	// across all tags, those the target creates too, and segIDs holds them
	// all: a duplicate anywhere is a fault.
	store := segmenttest.NewShared(
		segment.Tag{Name: "orders", MaxID: 1, Step: 1000},
		segment.Tag{Name: "order/v2", MaxID: 1, Step: 10},
		segment.Tag{Name: "user@profile", MaxID: 1, Step: 1000},
		segment.Tag{Name: "订单", MaxID: 1, Step: 1000},
		segment.Tag{Name: "été", MaxID: 1, Step: 1000},
		segment.Tag{Name: "a%3Ab", MaxID: 1, Step: 1000},
		segment.Tag{Name: "%", MaxID: 1, Step: 1000},
		segment.Tag{Name: `a"b\c`, MaxID: 1, Step: 1000},
		segment.Tag{Name: "misconfigured", MaxID: 1, Step: 0},
		segment.Tag{Name: "exhausted", MaxID: math.MaxInt64, Step: 1000},
	)
	store.SetNow(func() time.Time { return fakeNow })
	alloc := segment.New(store, segment.Options{RefreshInterval: -1})
	f.Cleanup(func() { alloc.Close() })
	biz := bizidtest.New(store)
	for _, s := range []bizid.Settings{
		{Format: "F-{date:20060102}-{seq:4}", Reset: bizid.Day, TimeZone: "Asia/Shanghai"},
		{OpaqueBits: bizid.Bits63, KeyID: bizid.KeyID([]byte(testOpaqueKey))},
	} {
		name := map[bool]string{true: "fmt", false: "opq"}[s.Formatted()]
		if _, err := biz.CreateSpecialTag(context.Background(), segment.Tag{Name: name, MaxID: 1, Step: 100}, s); err != nil {
			f.Fatal(err)
		}
	}
	issuer, err := bizid.New(bizid.Options{Store: biz, IDs: alloc.Specials(), Keys: [][]byte{[]byte(testOpaqueKey)},
		IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) }})
	if err != nil {
		f.Fatal(err)
	}
	gen, err := snowflake.New(context.Background(), snowflake.Settings{WorkerID: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { gen.Close(context.Background()) })
	seqStore := sequencetest.NewMemStore(time.Now)
	if _, err := seqStore.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 10, Sections: 4}); err != nil {
		f.Fatal(err)
	}
	// An ordered tag, whose ids are far above the other tags' so that
	// segIDs holds them all.
	ordered := sequencetest.NewOrderedTags(seqStore, 10)
	ordered.Create("ordered", true)
	ordered.SetMaxID("ordered", 1<<62)
	seqs, err := sequence.New(sequence.Options{Store: seqStore, Ordered: ordered, Tags: ordered, Addr: "self:1", Lease: time.Hour, Interval: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { seqs.Close(context.Background()) })
	if err := seqs.Round(context.Background()); err != nil {
		f.Fatal(err)
	}
	e := httpapi.New(httpapi.Config{
		Service: service.New(service.Config{
			Segments: alloc, Snowflake: gen, Tags: store,
			Sequences: seqs, Spaces: seqStore, Ordered: seqs,
			Biz: issuer, BizTags: biz, OnCreate: alloc.Added,
		}),
		AdminToken: fuzzToken, Registry: prometheus.NewRegistry(),
	})
	var segIDs, snowIDs idSet
	texts := map[string]bool{}    // the texts of formatted tags and the opaque ids
	lastSeq := map[string]int64{} // by the escaped path of a next route

	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte) {
		var head strings.Builder
		head.WriteString(method + " " + target + " HTTP/1.1\r\nHost: leaf\r\n")
		for line := range strings.SplitSeq(headers, "\n") {
			if line != "" {
				head.WriteString(line + "\r\n")
			}
		}
		if lower := strings.ToLower(headers); !strings.Contains(lower, "content-length") && !strings.Contains(lower, "transfer-encoding") {
			head.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
		}
		head.WriteString("\r\n")
		req, err := readRequest(head.String(), body)
		if err != nil {
			return // refused by net/http before any handler
		}
		rec := httptest.NewRecorder()
		start := time.Now()
		e.ServeHTTP(rec, req)
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("%s %q took %v", method, target, took)
		}
		checkAnswer(t, req, rec, &segIDs, &snowIDs, texts)
		checkSequence(t, req, rec, lastSeq)
	})
}

// checkAnswer checks one answer. Segment ids that are not numbers are
// texts of formatted tags, and batches of numbers not in order are opaque
// ids: each is kept in texts, where none may be seen twice.
func checkAnswer(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder, segIDs, snowIDs *idSet, texts map[string]bool) {
	t.Helper()
	what := req.Method + " " + req.RequestURI
	path := req.URL.Path
	idRoute := strings.HasPrefix(path, "/api/segment/") || strings.HasPrefix(path, "/api/snowflake/get") || strings.HasPrefix(path, "/api/snowflake/batch")
	if req.Method == http.MethodHead {
		if rec.Body.Len() != 0 {
			t.Fatalf("%s: a body to HEAD: %q", what, rec.Body)
		}
		if idRoute && rec.Code < 300 {
			t.Fatalf("%s: %d", what, rec.Code)
		}
		return
	}
	if rec.Code >= 400 {
		var e apiErr
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d, not the error shape: %q (%v)", what, rec.Code, rec.Body, err)
		}
		if !knownCodes[e.Error.Code] || e.Error.Message == "" {
			t.Fatalf("%s: %d %+v", what, rec.Code, e.Error)
		}
		if rec.Code >= 500 && e.Error.Code != "tag_misconfigured" && e.Error.Code != "unavailable" {
			t.Fatalf("%s: %d %+v", what, rec.Code, e.Error)
		}
		if rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
			t.Fatalf("%s: 503 without Retry-After", what)
		}
		return
	}
	if rec.Code != http.StatusOK || req.Method != http.MethodGet {
		return
	}
	switch {
	case strings.HasPrefix(path, "/api/segment/get/"):
		id, err := strconv.ParseInt(rec.Body.String(), 10, 64)
		if err != nil && rec.Body.Len() > 0 && !texts[rec.Body.String()] {
			texts[rec.Body.String()] = true
			return
		}
		if err != nil || id < 1 || !segIDs.add(id, id) {
			t.Fatalf("%s: id %q (%v) bad or issued before", what, rec.Body, err)
		}
	case strings.HasPrefix(path, "/api/snowflake/get"):
		id, err := strconv.ParseInt(rec.Body.String(), 10, 64)
		if err != nil || id < 1 || !snowIDs.add(id, id) {
			t.Fatalf("%s: id %q (%v) bad or issued before", what, rec.Body, err)
		}
	case strings.HasPrefix(path, "/api/segment/batch/"), strings.HasPrefix(path, "/api/snowflake/batch"):
		var out struct{ IDs []string }
		decodeBody(t, rec, &out)
		if strings.HasPrefix(path, "/api/segment/") && !increasing(out.IDs) {
			for _, s := range out.IDs {
				if s == "" || texts[s] {
					t.Fatalf("%s: id %q empty or issued before", what, s)
				}
				texts[s] = true
			}
			return
		}
		ids := make([]int64, len(out.IDs))
		for i, s := range out.IDs {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil || id < 1 || i > 0 && id <= ids[i-1] {
				t.Fatalf("%s: id %q of %v", what, s, out.IDs)
			}
			ids[i] = id
		}
		set := segIDs
		if strings.HasPrefix(path, "/api/snowflake/") {
			set = snowIDs
		}
		if len(ids) == 0 || !set.addAll(ids) {
			t.Fatalf("%s: ids empty or issued before: %v", what, out.IDs)
		}
	case strings.HasPrefix(path, "/api/segment/range/"):
		var out rangeJSON
		decodeBody(t, rec, &out)
		first, err := strconv.ParseInt(out.Start, 10, 64)
		if err != nil || first < 1 || out.Count < 1 || out.Count > httpapi.MaxRangeCount || !segIDs.add(first, first+int64(out.Count)-1) {
			t.Fatalf("%s: range %+v bad or issued before", what, out)
		}
	}
}

// increasing reports whether ids are decimal numbers in increasing order.
func increasing(ids []string) bool {
	prev := int64(0)
	for _, s := range ids {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= prev {
			return false
		}
		prev = id
	}
	return true
}

// checkSequence fails when a key's number did not go up: one key may be
// sent with several escapings, each path then sees part of its numbers,
// still increasing.
func checkSequence(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder, last map[string]int64) {
	t.Helper()
	path := req.URL.EscapedPath()
	if req.Method != http.MethodGet || rec.Code != http.StatusOK || !strings.HasPrefix(path, "/api/sequence/next/") {
		return
	}
	var got []int64
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		v, err := strconv.ParseInt(rec.Body.String(), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", path, rec.Body)
		}
		got = append(got, v)
	} else {
		var out struct{ Seqs []string }
		decodeBody(t, rec, &out)
		for _, s := range out.Seqs {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", path, rec.Body)
			}
			got = append(got, v)
		}
	}
	for _, v := range got {
		if v <= last[path] {
			t.Fatalf("%s: %d after %d", path, v, last[path])
		}
		last[path] = v
	}
}

func TestIDSet(t *testing.T) {
	var s idSet
	for _, r := range [][2]int64{{10, 20}, {30, 40}, {21, 29}, {1, 5}, {6, 9}, {50, 50}} {
		if !s.add(r[0], r[1]) {
			t.Fatalf("add %v refused; set %v", r, s.iv)
		}
	}
	if want := [][2]int64{{1, 40}, {50, 50}}; !slices.Equal(s.iv, want) {
		t.Fatalf("set %v, want %v", s.iv, want)
	}
	for _, r := range [][2]int64{{40, 45}, {0, 1}, {50, 50}, {45, 55}, {-5, 100}} {
		if s.add(r[0], r[1]) {
			t.Fatalf("add %v accepted; set %v", r, s.iv)
		}
	}
}
