package httpapi_test

import (
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

func FuzzSegmentTag(f *testing.F) {
	for _, s := range []string{"orders", "a.b_c:d-E", strings.Repeat("a", 128), strings.Repeat("a", 129), "", "a b", "a/b", "ä", "%41", "..", "a?b", "\x00"} {
		f.Add(s)
	}
	seg := newFakeSegments()
	seg.anyTag = true
	v := newEnv(f, func(c *httpapi.Config) { c.Segments = seg })
	f.Fuzz(func(t *testing.T, tag string) {
		if tag == "boom" {
			return // the fake's panic trigger
		}
		for _, path := range []string{"/api/segment/get/" + tag, "/api/segment/batch/" + tag} {
			rec := rawGet(v.e, path, "count=2")
			valid := segment.ValidateTag(unescaped(tag)) == nil
			switch {
			case rec.Code >= 500:
				t.Fatalf("tag %q: %d %s", tag, rec.Code, rec.Body)
			case valid && rec.Code != 200:
				t.Fatalf("valid tag %q: %d %s", tag, rec.Code, rec.Body)
			case !valid && rec.Code == 200:
				t.Fatalf("invalid tag %q accepted: %s", tag, rec.Body)
			}
		}
		seg.mu.Lock()
		defer seg.mu.Unlock()
		for _, got := range seg.seen {
			if err := segment.ValidateTag(got); err != nil {
				t.Fatalf("allocator saw invalid tag %q", got)
			}
		}
		seg.seen = seg.seen[:0]
	})
}

// unescaped is the tag a request path segment names: escapes decoded, or
// an invalid name when they cannot be.
func unescaped(segment string) string {
	if !strings.Contains(segment, "%") {
		return segment
	}
	u, err := url.PathUnescape(segment)
	if err != nil {
		return "%"
	}
	return u
}
