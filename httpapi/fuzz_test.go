package httpapi_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/segment"
)

// rawGet sends GET with path used as it is (not parsed as a URL), so the
// fuzzer's bytes reach the router unchanged.
func rawGet(e http.Handler, path, rawQuery string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", rawQuery
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func validCount(s string) bool {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= httpapi.MaxCount
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"1", "10000", "10001", "0", "-1", "+5", "abc", "", "1.5", "0005", " 5", "99999999999999999999"} {
		f.Add(s)
	}
	v := newEnv(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, base := range []string{"/api/segment/batch/orders", "/api/snowflake/batch"} {
			rec := rawGet(v.e, base, url.Values{"count": {s}}.Encode())
			switch {
			case rec.Code >= 500:
				t.Fatalf("count %q: %d %s", s, rec.Code, rec.Body)
			case validCount(s) && rec.Code != 200:
				t.Fatalf("valid count %q: %d %s", s, rec.Code, rec.Body)
			case !validCount(s):
				wantError(t, rec, 400, "invalid_count")
			}
		}
	})
}

func validID(s string) bool {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

func FuzzDecodeID(f *testing.F) {
	for _, s := range []string{"0", "1", "9223372036854775807", "9223372036854775808", "-1", "+1", "abc", "1e3", "0x10", " 1", "1/2", "%31"} {
		f.Add(s)
	}
	v := newEnv(f)
	f.Fuzz(func(t *testing.T, s string) {
		rec := rawGet(v.e, "/api/snowflake/decode/"+s, "")
		switch {
		case rec.Code >= 500:
			t.Fatalf("id %q: %d %s", s, rec.Code, rec.Body)
		case validID(s):
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"id":"`) {
				t.Fatalf("valid id %q: %d %s", s, rec.Code, rec.Body)
			}
		case rec.Code == 200:
			t.Fatalf("invalid id %q accepted: %s", s, rec.Body)
		}
	})
}

// FuzzSegmentTag sends a path segment as a client would put it in the
// request line: the tag asked for is that segment percent-decoded exactly
// once, whatever Go's parser and echo's router did with it.
func FuzzSegmentTag(f *testing.F) {
	for _, s := range []string{"orders", "a.b_c:d-E", strings.Repeat("a", 128), strings.Repeat("a", 129), "", "a b", "a/b",
		"ä", "%41", "..", "a?b", "\x00", "%2F", "a%253Ab", "a%3Ab", "%25", "%E8%AE%A2%E5%8D%95", "订单", "%FF", "a#b", "%zz"} {
		f.Add(s)
	}
	seg := newFakeSegments()
	seg.anyTag = true
	v := newEnv(f, func(c *envConfig) { c.Segments = seg })
	f.Fuzz(func(t *testing.T, raw string) {
		for _, route := range []string{"/api/segment/get/", "/api/segment/batch/", "/api/segment/range/"} {
			req, err := readRequest(http.MethodGet+" "+route+raw+"?count=2 HTTP/1.1\r\nHost: leaf\r\n\r\n", nil)
			if err != nil || req.URL.RawQuery != "count=2" {
				return // net/http refuses it before any handler, or the segment held a '?'
			}
			tag, err := url.PathUnescape(raw)
			if tag == "boom" {
				return // the fake's panic trigger
			}
			valid := err == nil && !strings.Contains(raw, "/") && segment.ValidateTag(tag) == nil
			rec := httptest.NewRecorder()
			v.e.ServeHTTP(rec, req)
			switch {
			case rec.Code >= 500:
				t.Fatalf("segment %q: %d %s", raw, rec.Code, rec.Body)
			case valid && rec.Code != 200:
				t.Fatalf("segment %q, tag %q: %d %s", raw, tag, rec.Code, rec.Body)
			case !valid:
				wantError(t, rec, 400, "invalid_tag")
				continue
			}
			if got := seg.lastSeen(); got != tag {
				t.Fatalf("segment %q: allocator asked for %q, want %q", raw, got, tag)
			}
		}
	})
}

// readRequest parses a request as Go's server does, from the raw bytes
// of its request line and headers, followed by body.
func readRequest(head string, body []byte) (*http.Request, error) {
	return http.ReadRequest(bufio.NewReader(io.MultiReader(strings.NewReader(head), bytes.NewReader(body))))
}
