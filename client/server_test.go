package client_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/sequence"
)

// The client speaks to the server without importing it
// (TestStandardLibraryOnly), so it keeps copies of the server's error codes
// and limits. These tests, which may import the server, hold the copies to
// the originals in httpapi.

// TestCodesMatchServer: every error code of the server has a sentinel of
// its own here, and the client knows no code the server does not send.
func TestCodesMatchServer(t *testing.T) {
	server := httpapi.ErrorCodes()
	known := client.Sentinels()
	for _, code := range server {
		if known[code] == nil {
			t.Errorf("the server's code %s has no sentinel in the client", code)
		}
	}
	owner := map[error]string{}
	for code, sentinel := range known {
		if !slices.Contains(server, code) {
			t.Errorf("the client knows the code %s, which the server does not send", code)
		}
		if other, dup := owner[sentinel]; dup {
			t.Errorf("the codes %s and %s share the sentinel %v", code, other, sentinel)
		}
		owner[sentinel] = code
		// A status that would say otherwise: the code decides.
		if err := (&client.Error{Status: 418, Code: code}); !errors.Is(err, sentinel) {
			t.Errorf("an answer with the code %s is not %v", code, sentinel)
		}
	}
}

// TestLimitsMatchServer: the client's copies of the server's limits are
// the server's.
func TestLimitsMatchServer(t *testing.T) {
	if client.MaxRange != httpapi.MaxRangeCount {
		t.Errorf("client.MaxRange is %d, the server's largest range %d", client.MaxRange, httpapi.MaxRangeCount)
	}
	if client.MaxSnowflakeBatch != httpapi.MaxCount {
		t.Errorf("client.MaxSnowflakeBatch is %d, the server's largest batch %d", client.MaxSnowflakeBatch, httpapi.MaxCount)
	}
}

// TestRoutesMatchServer: the client computes a key's section as the
// server does, under the scheme the server names, and reads the version
// from the header the server sets.
func TestRoutesMatchServer(t *testing.T) {
	if client.RouteScheme != sequence.RouteScheme {
		t.Errorf("the client computes %q, the server names %q", client.RouteScheme, sequence.RouteScheme)
	}
	if client.HeaderRoutesVersion != httpapi.HeaderRoutesVersion {
		t.Errorf("the client reads the header %q, the server sets %q", client.HeaderRoutesVersion, httpapi.HeaderRoutesVersion)
	}
	keys := []string{"k", "user-42", "会话/1", strings.Repeat("x", 256), "\x00"}
	for i := range 1000 {
		keys = append(keys, "key-"+strconv.Itoa(i))
	}
	for _, k := range keys {
		for _, n := range []int{1, 2, 7, 64, 4096} {
			if got, want := client.SectionOf(k, n), sequence.SectionOf(k, n); got != want {
				t.Fatalf("section of %q among %d: client %d, server %d", k, n, got, want)
			}
		}
	}
}
