// Package testkit holds the few helpers that tests across the project
// share: waiting for a condition, a log sink safe for concurrent writers,
// plain HTTP GETs, a clock that the test moves (Clock), and what the tests
// that hold the documents to the code read of Markdown (Anchors, Section,
// Links). Reads of the database belong to store/storetest.
package testkit

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wait is how long WaitFor waits unless told otherwise: long enough for a
// background goroutine on a loaded two-core machine, short enough that a
// condition that never holds fails the test quickly.
const Wait = 15 * time.Second

// WaitFor polls cond until it holds, failing tb after timeout (Wait when
// 0). It is for the effects of goroutines and other processes, not for a
// test's own clock.
func WaitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if timeout <= 0 {
		timeout = Wait
	}
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// SyncBuffer collects output, a server's log say, from concurrent writers.
type SyncBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Get requests url, with a bearer token unless it is empty, and returns
// the status and body. A request that fails returns status 0 and the
// error's text as the body, so callers that poll need not stop.
func Get(url, token string) (int, string) {
	return Do(http.MethodGet, url, token, "")
}

// Post is Get with the method POST and body.
func Post(url, token, body string) (int, string) {
	return Do(http.MethodPost, url, token, body)
}

// Patch is Get with the method PATCH and body.
func Patch(url, token, body string) (int, string) {
	return Do(http.MethodPatch, url, token, body)
}

// Do requests url by method with body (none when empty), as Get does.
func Do(method, url, token, body string) (int, string) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

// MustGet is Get failing tb when the request itself fails.
func MustGet(tb testing.TB, url string) (int, string) {
	tb.Helper()
	code, body := Get(url, "")
	if code == 0 {
		tb.Fatalf("GET %s: %s", url, body)
	}
	return code, body
}

// FreePort is a port free on 127.0.0.1 now, for a server a test starts.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
