package httpapi_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/sequence"
)

// TestLimitsInHTTPAPIDoc: the limits docs/http-api.md states are the ones
// the server enforces.
func TestLimitsInHTTPAPIDoc(t *testing.T) {
	doc := readAPIDoc(t)
	found := func(pattern string) []int {
		t.Helper()
		var out []int
		for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(doc, -1) {
			for _, s := range m[1:] {
				n, err := strconv.Atoi(s)
				if err != nil {
					t.Fatalf("%q in %q: %v", s, m[0], err)
				}
				out = append(out, n)
			}
		}
		if len(out) == 0 {
			t.Errorf("%s has nothing like %s", apiDoc, pattern)
		}
		return out
	}
	want := func(what string, got []int, limit int) {
		t.Helper()
		for _, n := range got {
			if n != limit {
				t.Errorf("%s says %d for %s; the server's limit is %d", apiDoc, n, what, limit)
			}
		}
	}

	// The routes' table: one row per batch route, one for the range.
	batches, ranges := 0, 0
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `GET /api/") || !strings.Contains(line, "count=N") {
			continue
		}
		m := regexp.MustCompile(`1 ≤ N ≤ ([0-9]+)`).FindStringSubmatch(line)
		if m == nil {
			t.Errorf("no bounds of N in %.60s…", line)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		switch {
		case strings.Contains(line, "/range/"):
			ranges++
			want("a range", []int{n}, httpapi.MaxRangeCount)
		case strings.Contains(line, "/batch"):
			batches++
			want("a batch", []int{n}, httpapi.MaxCount)
		case strings.Contains(line, "/api/sequence/next/"):
			want("a batch of sequence numbers", []int{n}, sequence.MaxCount)
		default:
			t.Errorf("a count on a route that is neither a batch nor a range: %.60s…", line)
		}
	}
	if batches != 3 || ranges != 1 {
		t.Errorf("the routes' table has %d batch routes and %d range routes with a count, want 3 and 1", batches, ranges)
	}
	// The table of errors.
	counts := found(`outside 1–([0-9]+) \(batches\) or 1–([0-9]+) \(ranges\)`)
	if len(counts) == 2 {
		want("a batch", counts[:1], httpapi.MaxCount)
		want("a range", counts[1:], httpapi.MaxRangeCount)
	}
	want("a request body, in KiB", found(`a request body over ([0-9]+) KiB`), httpapi.MaxBodyBytes>>10)
	if httpapi.MaxBodyBytes%(1<<10) != 0 {
		t.Errorf("the body limit %d is not a whole number of KiB, as %s states it", httpapi.MaxBodyBytes, apiDoc)
	}
}
