package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/base62"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/fleettest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
)

// knownCodes are the codes an answer to the fuzz target may carry: every
// code of the API but internal, which only a bug gives.
var knownCodes = func() map[string]bool {
	known := map[string]bool{}
	for _, c := range httpapi.ErrorCodes() {
		known[c] = c != "internal"
	}
	return known
}()

const auth = "Authorization: Bearer " + fleettest.Token

// httpSeed is a request of the hostile-input findings, or one that reaches
// a kind of id: method, target, headers (one "Name: value" a line), body,
// and whether it is sent to the second instance.
type httpSeed struct {
	method, target, headers, body string
	second                        bool
}

// httpSeeds run in this order in `go test`: later ones use what earlier
// ones created or filled.
var httpSeeds = []httpSeed{
	{method: "GET", target: "/api/segment/get/orders"},
	{method: "GET", target: "/api/segment/get/order%2Fv2"},
	{method: "GET", target: "/api/segment/get/user@profile"},
	{method: "GET", target: "/api/segment/get/订单"},
	{method: "GET", target: "/api/segment/get/%E8%AE%A2%E5%8D%95"},
	{method: "GET", target: "/api/segment/get/%C3%A9t%C3%A9"},
	{method: "GET", target: "/api/segment/get/a%253Ab"},
	{method: "GET", target: "/api/segment/get/a%3Ab"},
	{method: "GET", target: "/api/segment/get/%25"},
	{method: "GET", target: "/api/segment/get/%2F"},
	{method: "GET", target: "/api/segment/get/%zz"},
	{method: "GET", target: "/api/segment/get/"},
	{method: "GET", target: "/api/segment/get/orders/"},
	{method: "GET", target: "/api/segment/get/misconfigured"},
	{method: "GET", target: "/api/segment/get/exhausted"},
	{method: "GET", target: "/api/segment/batch/a%22b%5Cc?count=3"},
	{method: "GET", target: "/api/segment/batch/orders?count=10000"},
	{method: "GET", target: "/api/segment/batch/orders?count=10000", second: true},
	{method: "GET", target: "/api/segment/batch/?count=1"},
	{method: "GET", target: "/api/segment/batch/orders?count=+5"},
	{method: "GET", target: "/api/segment/batch/orders?count=05"},
	{method: "GET", target: "/api/segment/batch/orders?count=5&count=6"},
	{method: "GET", target: "/api/segment/batch/orders?count=%zz"},
	{method: "GET", target: "/api/segment/batch/orders?count=7&format=base62"},
	{method: "GET", target: "/api/segment/range/orders?count=1000000"},
	{method: "GET", target: "/api/segment/range/order%2Fv2?count=1000"},
	{method: "GET", target: "/api/segment/range/orders?count=1000001"},
	{method: "GET", target: "/api/segment/range/orders?count=99999999999999999999999"},
	{method: "GET", target: "/api/snowflake/get"},
	{method: "GET", target: "/api/snowflake/get?format=base62", second: true},
	{method: "GET", target: "/api/snowflake/get/any%2Fkey"},
	{method: "GET", target: "/api/snowflake/batch?count=10000"},
	{method: "GET", target: "/api/snowflake/decode/%31"},
	{method: "GET", target: "/api/snowflake/decode/1%20"},
	{method: "GET", target: "/api/snowflake/decode/"},
	{method: "GET", target: "/api/snowflake/decode/9223372036854775808"},
	{method: "HEAD", target: "/healthz"},
	{method: "HEAD", target: "/readyz"},
	{method: "HEAD", target: "/metrics"},
	{method: "GET", target: "/openapi.json"},
	{method: "HEAD", target: "/openapi.json"},
	{method: "HEAD", target: "/api/segment/get/orders"},
	{method: "HEAD", target: "/api/segment/range/orders?count=5"},
	{method: "OPTIONS", target: "/api/segment/get/orders"},
	{method: "BREW", target: "/api/snowflake/get"},
	{method: "GET", target: "/api/admin/tags", headers: auth},
	{method: "GET", target: "/api/admin/segments", headers: auth},
	{method: "GET", target: "/api/admin/tags/order%2Fv2", headers: auth},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"new/tag","step":5}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"a","tag":"b"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"a","step":null}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"a","step":"x"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"a","Step":1}`},
	{method: "POST", target: "/api/admin/tags", headers: auth + "\nContent-Length: 70000", body: `{"tag":"a"}`},
	{method: "PATCH", target: "/api/admin/tags/orders", headers: auth, body: `{"max_id":"9000000000000000000"}`},
	{method: "PATCH", target: "/api/admin/tags/orders", headers: auth, body: `{"step":1000000}`},
	{method: "PATCH", target: "/api/admin/tags/orders", headers: "Authorization: Bearer wrong", body: `{"step":1}`},

	// Formatted, open: numbered by both instances.
	{method: "GET", target: "/api/segment/get/open"},
	{method: "GET", target: "/api/segment/get/open", second: true},
	{method: "GET", target: "/api/segment/batch/open?count=100"},
	{method: "GET", target: "/api/segment/batch/open?count=10000", second: true},
	{method: "GET", target: "/api/segment/get/open?format=base62"},
	{method: "GET", target: "/api/segment/range/open?count=10"},
	{method: "GET", target: "/api/admin/tags/open", headers: auth},
	{method: "PATCH", target: "/api/admin/tags/open", headers: auth, body: `{"time_zone":"America/New_York"}`},
	{method: "PATCH", target: "/api/admin/tags/open", headers: auth, body: `{"format":"G-{seq}"}`},
	{method: "GET", target: "/api/segment/get/open", second: true},
	// Capped, owned by the second instance: the first forwards. 95 of 99,
	// a batch of 10 refused with 4 left, the next id continues (C-96),
	// the last 3, then refusals of the full tag.
	{method: "GET", target: "/api/segment/batch/cap?count=95"},
	{method: "GET", target: "/api/segment/batch/cap?count=10"},
	{method: "GET", target: "/api/segment/get/cap"},
	{method: "GET", target: "/api/segment/batch/cap?count=100", second: true},
	{method: "GET", target: "/api/segment/batch/cap?count=3", second: true},
	{method: "GET", target: "/api/segment/get/cap"},
	{method: "GET", target: "/api/segment/get/cap", second: true},
	{method: "GET", target: "/api/segment/range/cap?count=1"},
	// Capped and daily; its zone moved a day ahead gives it a new day.
	{method: "GET", target: "/api/segment/batch/capday?count=100"},
	{method: "GET", target: "/api/segment/batch/capday?count=99"},
	{method: "GET", target: "/api/segment/get/capday", second: true},
	{method: "PATCH", target: "/api/admin/tags/capday", headers: auth, body: `{"time_zone":"Pacific/Kiritimati"}`},
	{method: "GET", target: "/api/segment/get/capday"},
	{method: "PATCH", target: "/api/admin/tags/capday", headers: auth, body: `{"time_zone":"Etc/GMT+12","step":1}`},
	{method: "GET", target: "/api/segment/batch/capday?count=2", second: true},
	// Formatted and ordered, owned by the second instance.
	{method: "GET", target: "/api/segment/get/ordtext"},
	{method: "GET", target: "/api/segment/batch/ordtext?count=50", second: true},
	{method: "GET", target: "/api/segment/batch/ordtext?count=10000"},
	{method: "GET", target: "/api/segment/get/ordtext", headers: "Leaf-Forwarded: 1"},
	// The longest answer an owner gives: a batch of long texts, forwarded.
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"q2","ordered":true,"format":"` + strings.Repeat("L", 240) + `-{seq}"}`},
	{method: "GET", target: "/api/segment/batch/q2?count=10000"},
	// Opaque, 63 and 53 bits, and their reveals: of ids issued (the first
	// numbers of each tag) and forged.
	{method: "GET", target: "/api/segment/get/opq"},
	{method: "GET", target: "/api/segment/batch/opq?count=50&format=base62"},
	{method: "GET", target: "/api/segment/range/opq?count=10"},
	{method: "GET", target: "/api/segment/batch/opq53?count=100", second: true},
	{method: "GET", target: "/api/segment/get/opq53?format=base62"},
	{method: "GET", target: "/api/admin/tags/opq/reveal/" + strconv.FormatInt(fleettest.OpaqueID(63, 1), 10), headers: auth},
	{method: "GET", target: "/api/admin/tags/opq53/reveal/" + strconv.FormatInt(fleettest.OpaqueID(53, 2), 10), headers: auth, second: true},
	{method: "GET", target: "/api/admin/tags/opq/reveal/12345", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq/reveal/0", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq/reveal/9223372036854775807", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq/reveal/9223372036854775808", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq/reveal/-1", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq/reveal/%2B1", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq53/reveal/9007199254740991", headers: auth, second: true},
	{method: "GET", target: "/api/admin/tags/opq53/reveal/9007199254740992", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq53/reveal/12345", headers: auth},
	{method: "GET", target: "/api/admin/tags/open/reveal/1", headers: auth},
	{method: "GET", target: "/api/admin/tags/orders/reveal/1", headers: auth},
	{method: "GET", target: "/api/admin/tags/nope/reveal/1", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq/reveal/", headers: auth},
	{method: "GET", target: "/api/admin/tags/opq/reveal/1", headers: "Authorization: Bearer wrong"},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"inv","format":"INV{date:200601}-{seq:3!}","reset":"month","time_zone":"Europe/Paris"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"x","format":"{date:2006}{seq}","reset":"day"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"x","format":"{seq","reset":"week"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"y","opaque":53,"max_id":"9007199254740993"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"z","format":"Z-{seq}","opaque":63}`},
	{method: "PATCH", target: "/api/admin/tags/orders", headers: auth, body: `{"format":"O-{seq:2!}"}`},
	// Ordered: one owned by each instance, asked of both.
	{method: "GET", target: "/api/segment/get/ordered"},
	{method: "GET", target: "/api/segment/get/ordered", second: true},
	{method: "GET", target: "/api/segment/get/ord"},
	{method: "GET", target: "/api/segment/batch/ord?count=25"},
	{method: "GET", target: "/api/segment/batch/ordered?count=25&format=base62", second: true},
	{method: "GET", target: "/api/segment/range/ordered?count=5"},
	{method: "GET", target: "/api/segment/get/ord", headers: "Leaf-Forwarded: 1"},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"o2","ordered":true}`},
	{method: "GET", target: "/api/segment/get/o2", second: true},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"o3","ordered":1}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"h2","ordered":true,"max_id":"9223372036854775806"}`},
	{method: "GET", target: "/api/segment/batch/h2?count=2"},
	{method: "GET", target: "/api/segment/get/h2"},
	{method: "PATCH", target: "/api/admin/tags/ord", headers: auth, body: `{"max_id":"9223372036854775807"}`},
	{method: "GET", target: "/api/segment/get/ord", second: true},
	// Ordered and formatted or opaque at once; reset or zone without a
	// format; capped formats; huge counts.
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"o4","ordered":true,"format":"O-{seq}"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"o5","ordered":true,"opaque":63}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"o6","ordered":true,"opaque":53,"format":"X-{seq}"}`},
	{method: "PATCH", target: "/api/admin/tags/ordered", headers: auth, body: `{"format":"O-{seq}"}`},
	{method: "PATCH", target: "/api/admin/tags/ordered", headers: auth, body: `{"ordered":true}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"r1","reset":"day"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"r2","time_zone":"Asia/Tokyo"}`},
	{method: "PATCH", target: "/api/admin/tags/orders", headers: auth, body: `{"reset":"day"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"cp","format":"P-{seq:1!}","step":3}`},
	{method: "GET", target: "/api/segment/batch/cp?count=10"},
	{method: "GET", target: "/api/segment/batch/cp?count=8", second: true},
	{method: "GET", target: "/api/segment/get/cp"},
	{method: "GET", target: "/api/segment/get/cp"},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"fo","format":"F-{seq:18!}","ordered":true,"max_id":"999999999999999990"}`},
	{method: "GET", target: "/api/segment/batch/fo?count=10"},
	{method: "GET", target: "/api/segment/batch/fo?count=9"},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"big","step":2147483648}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"big","step":1000000,"max_id":"9223372036854775807"}`},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"q1","step":1}`},
	{method: "PATCH", target: "/api/admin/tags/q1", headers: auth, body: `{"format":"Q-{seq:2!}"}`},
	{method: "GET", target: "/api/segment/get/q1"},
	{method: "GET", target: "/api/segment/batch/q1?count=3", second: true},
	{method: "PATCH", target: "/api/admin/tags/q1", headers: auth, body: `{"opaque":63}`},
	{method: "PATCH", target: "/api/admin/tags/orders", headers: auth, body: `{"opaque":53}`},
	// Settings that are neither a format nor opaque: refused, for the tag
	// would have nothing to issue its ids by.
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"e1","format":""}`},
	{method: "GET", target: "/api/segment/batch/e1?count=2"},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"e2","format":"","ordered":true}`},
	{method: "GET", target: "/api/segment/batch/e2?count=2", second: true},

	// Sequences: keys of odd bytes, in sections of both instances; counts.
	{method: "GET", target: "/api/sequence/next/inbox/alice"},
	{method: "GET", target: "/api/sequence/next/inbox/alice", second: true},
	{method: "GET", target: "/api/sequence/next/inbox/bob"},
	{method: "GET", target: "/api/sequence/next/inbox/carol?count=3"},
	{method: "GET", target: "/api/sequence/next/inbox/dave", second: true},
	{method: "GET", target: "/api/sequence/next/inbox/erin"},
	{method: "GET", target: "/api/sequence/next/inbox/%E4%BC%9A%E8%AF%9D%2F1"},
	{method: "GET", target: "/api/sequence/next/inbox/%00"},
	{method: "GET", target: "/api/sequence/next/inbox/%20%20"},
	{method: "GET", target: "/api/sequence/next/inbox/.."},
	{method: "GET", target: "/api/sequence/next/inbox/%2E%2E"},
	{method: "GET", target: "/api/sequence/next/inbox/a%25b"},
	{method: "GET", target: "/api/sequence/next/inbox/\xc3\xa9%2F0"},
	{method: "GET", target: "/api/sequence/next/inbox/\xc3\xa9%2F2"},
	{method: "GET", target: "/api/sequence/next/inbox/\xc3\xa9%2F0", second: true},
	{method: "GET", target: "/api/sequence/next/inbox/\xc3\xa9%2F2?count=2", second: true},
	{method: "GET", target: "/api/sequence/current/inbox/\xc3\xa9%2F5"},
	{method: "POST", target: "/api/admin/tags", headers: auth, body: `{"tag":"é/1","ordered":true}`},
	{method: "GET", target: "/api/segment/get/\xc3\xa9%2F1"},
	{method: "GET", target: "/api/segment/batch/\xc3\xa9%2F1?count=2", second: true},
	{method: "GET", target: "/api/sequence/next/inbox/a%FFb"},
	{method: "GET", target: "/api/sequence/next/inbox/a/b"},
	{method: "GET", target: "/api/sequence/next/inbox/" + strings.Repeat("k", 256)},
	{method: "GET", target: "/api/sequence/next/inbox/" + strings.Repeat("k", 257)},
	{method: "GET", target: "/api/sequence/next/inbox/"},
	{method: "GET", target: "/api/sequence/next/inbox"},
	{method: "GET", target: "/api/sequence/next/"},
	{method: "GET", target: "/api/sequence/next/outbox/k"},
	{method: "GET", target: "/api/sequence/next/inbox/bob?count=10000"},
	{method: "GET", target: "/api/sequence/next/inbox/bob?count=10000", second: true},
	{method: "GET", target: "/api/sequence/next/inbox/bob?count=0"},
	{method: "GET", target: "/api/sequence/next/inbox/bob?count=%zz"},
	{method: "GET", target: "/api/sequence/next/inbox/bob?count=2&count=3"},
	{method: "GET", target: "/api/sequence/next/tight/k?count=10000"},
	{method: "GET", target: "/api/sequence/next/tight/k?count=2"},
	{method: "GET", target: "/api/sequence/next/%E4%BC%9A%E8%AF%9D/%F0%9F%98%80"},
	{method: "GET", target: "/api/sequence/current/%E4%BC%9A%E8%AF%9D/%F0%9F%98%80", second: true},
	{method: "GET", target: "/api/sequence/current/inbox/alice"},
	{method: "GET", target: "/api/sequence/current/inbox/bob", second: true},
	{method: "GET", target: "/api/sequence/current/inbox/never"},
	{method: "GET", target: "/api/sequence/current/inbox/alice?x=1"},
	{method: "GET", target: "/api/sequence/next/inbox/k", headers: "Leaf-Forwarded: 1"},
	{method: "GET", target: "/api/sequence/next/inbox/bob", headers: "Leaf-Routes-Version: 0000000000000000"},
	{method: "HEAD", target: "/api/sequence/next/inbox/alice"},
	// The routing tables.
	{method: "GET", target: "/api/sequence/routes/inbox"},
	{method: "GET", target: "/api/sequence/routes/tight", second: true},
	{method: "GET", target: "/api/sequence/routes/%E4%BC%9A%E8%AF%9D"},
	{method: "GET", target: "/api/sequence/routes/outbox"},
	{method: "GET", target: "/api/sequence/routes/"},
	{method: "GET", target: "/api/sequence/routes/inbox?x=%zz"},
	{method: "GET", target: "/api/sequence/routes/a%2Fb"},
	// Spaces.
	{method: "GET", target: "/api/admin/sequences", headers: auth},
	{method: "GET", target: "/api/admin/sequences/inbox", headers: auth},
	{method: "POST", target: "/api/admin/sequences", headers: auth, body: `{"space":"s2","step":7,"sections":3}`},
	{method: "GET", target: "/api/sequence/next/s2/k", second: true},
	{method: "POST", target: "/api/admin/sequences", headers: auth, body: `{"space":"inbox","sections":9}`},
	{method: "POST", target: "/api/admin/sequences", headers: auth, body: `{"space":"a","sections":-1}`},
	{method: "POST", target: "/api/admin/sequences", headers: auth, body: `{"space":"s3","step":1,"sections":4096}`},
	{method: "POST", target: "/api/admin/sequences", headers: auth, body: `{"space":"s4","step":9223372036854775807}`},
	{method: "POST", target: "/api/admin/sequences", headers: auth, body: `{"space":"\u0000","sections":4097}`},
	{method: "GET", target: "/api/sequence/next/s4/k?count=10000"},
}

// FuzzHTTP drives the whole API of two instances (internal/fleettest:
// real routers, allocators, snowflake generators, Issuers and Sequencers
// over one in-memory database, the second owning some sections and tags
// and each forwarding to the other over loopback HTTP) with fuzzed
// methods, targets, headers and bodies, sent to the first instance or the
// second. No request is a 500 but for a misconfigured row, or takes more
// than two seconds; every error is the one JSON shape with a known code;
// and every id answered keeps the rules of fleettest.Ledger: none twice,
// ordered and owned ones increasing across both instances, no capped one
// past its cap, a refusal taking nothing.
func FuzzHTTP(f *testing.F) {
	for _, s := range httpSeeds {
		f.Add(s.method, s.target, s.headers, []byte(s.body), s.second)
	}
	fl := fleettest.New(f)
	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte, second bool) {
		serveHTTP(t, fl, method, target, headers, body, second)
	})
}

// serveHTTP sends one request to the fleet and checks its answer.
func serveHTTP(t *testing.T, fl *fleettest.Fleet, method, target, headers string, body []byte, second bool) {
	t.Helper()
	defer fl.Tick()
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
	in := fl.A
	if second {
		in = fl.B
	}
	rec := httptest.NewRecorder()
	start := time.Now()
	in.HTTP.ServeHTTP(rec, req)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("%s %q took %v", method, target, took)
	}
	if err := checkHTTP(fl.Ledger, req, rec); err != nil {
		t.Fatalf("%s %s (to %s): %d %.300q: %v", method, target, in.Name, rec.Code, rec.Body, err)
	}
	if err := fl.Fault(); err != nil {
		t.Fatalf("after %s %s (to %s): %v", method, target, in.Name, err)
	}
}

// checkHTTP checks one answer, and the ids it holds against the ledger.
func checkHTTP(l *fleettest.Ledger, req *http.Request, rec *httptest.ResponseRecorder) error {
	path := fleettest.RoutePath(req.URL)
	idRoute := strings.HasPrefix(path, "/api/segment/") || strings.HasPrefix(path, "/api/snowflake/get") ||
		strings.HasPrefix(path, "/api/snowflake/batch") || strings.HasPrefix(path, "/api/sequence/next/")
	if req.Method == http.MethodHead {
		switch {
		case rec.Body.Len() != 0:
			return fmt.Errorf("a body to HEAD")
		case idRoute && rec.Code < 300:
			return fmt.Errorf("HEAD of an id route answered")
		}
		return nil
	}
	tag, isTag := "", false
	for _, prefix := range []string{"/api/segment/get/", "/api/segment/batch/", "/api/segment/range/"} {
		if v, ok := fleettest.PathParam(req.URL, prefix); ok {
			tag, isTag = v, true
		}
	}
	if rec.Code >= 400 {
		var e apiErr
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.DisallowUnknownFields()
		switch err := dec.Decode(&e); {
		case err != nil || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"):
			return fmt.Errorf("not the error shape (%v)", err)
		case !knownCodes[e.Error.Code] || e.Error.Message == "":
			return fmt.Errorf("code %q", e.Error.Code)
		case rec.Code >= 500 && e.Error.Code != "tag_misconfigured" && e.Error.Code != "unavailable":
			return fmt.Errorf("a %d", rec.Code)
		case rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "":
			return fmt.Errorf("503 without Retry-After")
		}
		if isTag {
			l.Answered(tag, e.Error.Code)
		}
		return checkRefusal(l, req.URL, e.Error.Code)
	}
	if rec.Code != http.StatusOK || req.Method != http.MethodGet {
		return nil
	}
	q, _ := url.ParseQuery(req.URL.RawQuery)
	b62 := q.Get("format") == "base62"
	switch {
	case strings.HasPrefix(path, "/api/segment/get/") && isTag:
		if l.Formatted(tag) {
			return l.Texts(tag, []string{rec.Body.String()})
		}
		ids, err := numbers([]string{rec.Body.String()}, b62)
		if err != nil {
			return err
		}
		return l.IDs(tag, ids)
	case strings.HasPrefix(path, "/api/segment/batch/") && isTag:
		var out struct {
			Tag string   `json:"tag"`
			IDs []string `json:"ids"`
		}
		if err := strictJSON(rec, &out); err != nil {
			return err
		}
		if out.Tag != tag || len(out.IDs) != count(q) {
			return fmt.Errorf("batch of %d ids of %q, asked %d of %q", len(out.IDs), out.Tag, count(q), tag)
		}
		if l.Formatted(tag) {
			return l.Texts(tag, out.IDs)
		}
		ids, err := numbers(out.IDs, b62)
		if err != nil {
			return err
		}
		return l.IDs(tag, ids)
	case strings.HasPrefix(path, "/api/segment/range/") && isTag:
		var out rangeJSON
		if err := strictJSON(rec, &out); err != nil {
			return err
		}
		start, err := strconv.ParseInt(out.Start, 10, 64)
		if err != nil || out.Tag != tag || out.Count > count(q) {
			return fmt.Errorf("range %+v of %q, asked %d", out, tag, count(q))
		}
		return l.Range(tag, start, out.Count)
	case strings.HasPrefix(path, "/api/snowflake/get"):
		ids, err := numbers([]string{rec.Body.String()}, b62)
		if err != nil {
			return err
		}
		return l.Snowflake(ids)
	case strings.HasPrefix(path, "/api/snowflake/batch"):
		var out struct {
			IDs []string `json:"ids"`
		}
		if err := strictJSON(rec, &out); err != nil {
			return err
		}
		ids, err := numbers(out.IDs, b62)
		if err != nil {
			return err
		}
		return l.Snowflake(ids)
	case strings.HasPrefix(path, "/api/sequence/next/"), strings.HasPrefix(path, "/api/sequence/current/"):
		return checkSequence(l, req.URL, q, rec)
	case strings.HasPrefix(path, "/api/sequence/routes/"):
		var out struct {
			Space    string   `json:"space"`
			Sections int      `json:"sections"`
			Scheme   string   `json:"scheme"`
			Version  string   `json:"version"`
			Members  []string `json:"members"`
			Owners   []int    `json:"owners"`
		}
		if err := strictJSON(rec, &out); err != nil {
			return err
		}
		if space, ok := fleettest.PathParam(req.URL, "/api/sequence/routes/"); !ok || out.Space != space || len(out.Version) != 16 {
			return fmt.Errorf("routes of %q answered for %q, version %q", space, out.Space, out.Version)
		}
		return l.Routes(out.Space, out.Sections, out.Members, out.Owners)
	case strings.HasPrefix(path, "/api/admin/tags/") && strings.Contains(path, "/reveal/"):
		var out struct {
			Tag    string `json:"tag"`
			ID     string `json:"id"`
			Number string `json:"number"`
		}
		if err := strictJSON(rec, &out); err != nil {
			return err
		}
		rest := strings.TrimPrefix(path, "/api/admin/tags/")
		tag, ok := fleettest.Param(req.URL, rest[:strings.Index(rest, "/reveal/")])
		id, err1 := strconv.ParseInt(out.ID, 10, 64)
		n, err2 := strconv.ParseInt(out.Number, 10, 64)
		if !ok || err1 != nil || err2 != nil || out.Tag != tag {
			return fmt.Errorf("reveal of %q answered %+v", tag, out)
		}
		return l.Reveal(tag, id, n)
	}
	return nil
}

// checkRefusal fails when a tag, space or key is refused as invalid
// although the path holds a valid one: an instance reads the names of
// the path as the request's client wrote them, whichever instance
// answers.
func checkRefusal(l *fleettest.Ledger, u *url.URL, code string) error {
	path := fleettest.RoutePath(u)
	switch code {
	case "invalid_tag":
		for _, prefix := range []string{"/api/segment/get/", "/api/segment/batch/", "/api/segment/range/"} {
			if tag, ok := fleettest.PathParam(u, prefix); ok && segment.ValidateTag(tag) == nil {
				return fmt.Errorf("the valid tag %q refused", tag)
			}
		}
	case "invalid_id":
		rest, ok := strings.CutPrefix(path, "/api/admin/tags/")
		if i := strings.Index(rest, "/reveal/"); ok && i > 0 {
			tag, ok1 := fleettest.Param(u, rest[:i])
			id, err := strconv.ParseInt(rest[i+len("/reveal/"):], 10, 64)
			if ok1 && err == nil && l.Issued(tag, id) {
				return fmt.Errorf("reveal of %d, an id %q issued, refused", id, tag)
			}
		}
	case "invalid_space", "invalid_key":
		for _, prefix := range []string{"/api/sequence/next/", "/api/sequence/current/"} {
			rest, ok := strings.CutPrefix(path, prefix)
			if !ok {
				continue
			}
			rawSpace, rawKey, _ := strings.Cut(rest, "/")
			space, ok1 := fleettest.Param(u, rawSpace)
			key, ok2 := fleettest.Param(u, rawKey)
			if ok1 && ok2 && sequence.ValidateSpace(space) == nil && sequence.ValidateKey(key) == nil {
				return fmt.Errorf("the valid space %q and key %q refused", space, key)
			}
		}
	}
	return nil
}

// checkSequence checks the answer of a sequence's next or current.
func checkSequence(l *fleettest.Ledger, u *url.URL, q url.Values, rec *httptest.ResponseRecorder) error {
	path := fleettest.RoutePath(u)
	current := strings.HasPrefix(path, "/api/sequence/current/")
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/api/sequence/next/"), "/api/sequence/current/")
	rawSpace, rawKey, _ := strings.Cut(rest, "/")
	space, ok1 := fleettest.Param(u, rawSpace)
	key, ok2 := fleettest.Param(u, rawKey)
	if !ok1 || !ok2 {
		return fmt.Errorf("an answer to a request the API refuses")
	}
	if _, batch := q["count"]; !batch || current {
		v, err := strconv.ParseInt(rec.Body.String(), 10, 64)
		switch {
		case err != nil || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain"):
			return fmt.Errorf("not a number: %v", err)
		case current:
			return l.Current(space, key, v)
		}
		return l.Next(space, key, []int64{v})
	}
	var out struct {
		Space string   `json:"space"`
		Key   string   `json:"key"`
		Seqs  []string `json:"seqs"`
	}
	if err := strictJSON(rec, &out); err != nil {
		return err
	}
	if out.Space != space || out.Key != key || len(out.Seqs) != count(q) {
		return fmt.Errorf("%d numbers of %q/%q, asked %d of %q/%q", len(out.Seqs), out.Space, out.Key, count(q), space, key)
	}
	seqs, err := numbers(out.Seqs, false)
	if err != nil {
		return err
	}
	return l.Next(space, key, seqs)
}

// numbers reads ids in decimal or base62.
func numbers(ss []string, b62 bool) ([]int64, error) {
	out := make([]int64, len(ss))
	for i, s := range ss {
		var err error
		if b62 {
			out[i], err = base62.Decode(s)
		} else {
			out[i], err = strconv.ParseInt(s, 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("id %q: %v", s, err)
		}
	}
	return out, nil
}

// count is the count asked, or 1.
func count(q url.Values) int {
	n, err := strconv.Atoi(q.Get("count"))
	if err != nil {
		return 1
	}
	return n
}

// strictJSON decodes a 200's JSON body, which has the fields of v and no
// other.
func strictJSON(rec *httptest.ResponseRecorder, v any) error {
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.More() || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		return fmt.Errorf("not the JSON answer: %v", err)
	}
	return nil
}

// TestFuzzHTTPSeedsReach: the seeds of FuzzHTTP reach every kind of id,
// on both instances and forwarded between them, with the checks of the
// target.
func TestFuzzHTTPSeedsReach(t *testing.T) {
	fl := fleettest.New(t)
	for _, s := range httpSeeds {
		serveHTTP(t, fl, s.method, s.target, s.headers, []byte(s.body), s.second)
	}
	got := fl.Ledger.Reached()
	for _, what := range []string{
		fleettest.KindPlain, fleettest.KindOrdered, fleettest.KindOpen, fleettest.KindCapped, fleettest.KindText,
		fleettest.KindOpaque63, fleettest.KindOpaque53, "range", "snowflake", "reveal", "sequence", "current", "routes",
		"full", "continued", "owner", "owner:refused", "owner:continued",
		"forward:" + fleettest.KindOrdered, "forward:" + fleettest.KindCapped, "forward:" + fleettest.KindText, "forward:sequence",
	} {
		if got[what] == 0 {
			t.Errorf("the seeds never reached %q; reached %v", what, got)
		}
	}
}
