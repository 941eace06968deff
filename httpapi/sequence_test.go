package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/fleettest"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// newSequencer is a Sequencer on st whose rounds the test runs.
func newSequencer(tb testing.TB, st sequence.Store, addr string) *sequence.Sequencer {
	tb.Helper()
	q, err := sequence.New(sequence.Options{Store: st, Addr: addr, Lease: time.Hour, Interval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = q.Close(context.Background()) })
	return q
}

// newSequenceEnv is newEnv with sequences served from an in-memory store
// holding the space inbox (step 100, 4 sections), all owned here.
func newSequenceEnv(tb testing.TB) (*env, *sequencetest.MemStore) {
	tb.Helper()
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 100, Sections: 4}); err != nil {
		tb.Fatal(err)
	}
	q := newSequencer(tb, st, "self:1")
	if err := q.Round(context.Background()); err != nil {
		tb.Fatal(err)
	}
	v := newEnv(tb, func(c *envConfig) { c.Sequences, c.Spaces = q, st })
	return v, st
}

func TestSequenceRoutes(t *testing.T) {
	v, _ := newSequenceEnv(t)
	for i := 1; i <= 3; i++ {
		rec := v.do(t, http.MethodGet, "/api/sequence/next/inbox/alice", nil)
		if rec.Code != http.StatusOK || rec.Body.String() != strconv.Itoa(i) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Fatalf("next = %d %q %q", rec.Code, rec.Body, rec.Header().Get("Content-Type"))
		}
	}
	rec := v.do(t, http.MethodGet, "/api/sequence/current/inbox/alice", nil)
	if rec.Code != http.StatusOK || rec.Body.String() != "3" {
		t.Fatalf("current = %d %q", rec.Code, rec.Body)
	}
	rec = v.do(t, http.MethodGet, "/api/sequence/next/inbox/alice?count=3", nil)
	if rec.Code != http.StatusOK || rec.Body.String() != `{"space":"inbox","key":"alice","seqs":["4","5","6"]}` {
		t.Fatalf("batch = %d %s", rec.Code, rec.Body)
	}
	// A key of any UTF-8, percent-encoded, slashes too.
	rec = v.do(t, http.MethodGet, "/api/sequence/next/inbox/"+"%E4%BC%9A%E8%AF%9D%2F1", nil)
	if rec.Code != http.StatusOK || rec.Body.String() != "1" {
		t.Fatalf("encoded key = %d %s", rec.Code, rec.Body)
	}
	rec = v.do(t, http.MethodGet, "/api/sequence/current/inbox/%E4%BC%9A%E8%AF%9D%2F1", nil)
	if rec.Code != http.StatusOK || rec.Body.String() != "1" {
		t.Fatalf("current of encoded key = %d %s", rec.Code, rec.Body)
	}
}

func TestSequenceBadInput(t *testing.T) {
	v, _ := newSequenceEnv(t)
	long := strings.Repeat("k", sequence.MaxKeyLen+1)
	for _, tc := range []struct {
		name, target string
		status       int
		code         string
	}{
		{"key too long", "/api/sequence/next/inbox/" + long, 400, "invalid_key"},
		{"key not utf-8", "/api/sequence/next/inbox/a%FFb", 400, "invalid_key"},
		{"empty key", "/api/sequence/next/inbox/", 400, "invalid_key"},
		{"no key", "/api/sequence/next/inbox", 400, "invalid_key"},
		{"no space", "/api/sequence/next/", 400, "invalid_space"},
		{"unknown space", "/api/sequence/next/outbox/k", 404, "unknown_space"},
		{"unknown space, current", "/api/sequence/current/outbox/k", 404, "unknown_space"},
		{"count 0", "/api/sequence/next/inbox/k?count=0", 400, "invalid_count"},
		{"count too big", "/api/sequence/next/inbox/k?count=10001", 400, "invalid_count"},
		{"current with a query", "/api/sequence/current/inbox/k?count=2", 400, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, v.do(t, http.MethodGet, tc.target, nil), tc.status, tc.code)
		})
	}
	if rec := v.do(t, http.MethodGet, "/api/sequence/next/inbox/"+long[1:], nil); rec.Code != http.StatusOK {
		t.Fatalf("a key of 256 bytes: %d %s", rec.Code, rec.Body)
	}
	wantError(t, v.do(t, http.MethodPost, "/api/sequence/next/inbox/k", nil), 405, "method_not_allowed")
}

func TestSequenceAdmin(t *testing.T) {
	v, st := newSequenceEnv(t)
	rec := v.admin(t, http.MethodPost, "/api/admin/sequences", `{"space":"outbox","step":500,"sections":8}`)
	if rec.Code != http.StatusCreated || rec.Body.String() != `{"space":"outbox","step":500,"sections":8}`+"\n" {
		t.Fatalf("create = %d %s", rec.Code, rec.Body)
	}
	rec = v.admin(t, http.MethodPost, "/api/admin/sequences", `{"space":"defaults"}`)
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"step":10000,"sections":64`) {
		t.Fatalf("create with defaults = %d %s", rec.Code, rec.Body)
	}
	// The section count of a space never changes: creating it again with
	// another is a conflict, and the space stays as it was.
	wantError(t, v.admin(t, http.MethodPost, "/api/admin/sequences", `{"space":"outbox","sections":16}`), 409, "space_exists")
	if sp, _ := st.Space(context.Background(), "outbox"); sp.Sections != 8 {
		t.Fatalf("sections = %d after a second create, want 8", sp.Sections)
	}
	for _, tc := range []struct{ name, body, code string }{
		{"no space", `{"step":5}`, "invalid_space"},
		{"step 0", `{"space":"a","step":0}`, "invalid_request"},
		{"sections 0", `{"space":"a","sections":0}`, "invalid_request"},
		{"sections too many", `{"space":"a","sections":4097}`, "invalid_request"},
		{"sections huge", `{"space":"a","sections":99999999999}`, "invalid_request"},
		{"unknown field", `{"space":"a","max_seq":5}`, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, v.admin(t, http.MethodPost, "/api/admin/sequences", tc.body), 400, tc.code)
		})
	}
	rec = v.admin(t, http.MethodGet, "/api/admin/sequences", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `{"space":"inbox","step":100,"sections":4}`) {
		t.Fatalf("list = %d %s", rec.Code, rec.Body)
	}
	rec = v.admin(t, http.MethodGet, "/api/admin/sequences/outbox", "")
	if rec.Code != http.StatusOK || rec.Body.String() != `{"space":"outbox","step":500,"sections":8}`+"\n" {
		t.Fatalf("get = %d %s", rec.Code, rec.Body)
	}
	wantError(t, v.admin(t, http.MethodGet, "/api/admin/sequences/nope", ""), 404, "unknown_space")
	wantError(t, v.do(t, http.MethodGet, "/api/admin/sequences", nil), 401, "unauthorized")
}

func TestSequencesOff(t *testing.T) {
	v := newEnv(t)
	wantError(t, v.do(t, http.MethodGet, "/api/sequence/next/inbox/k", nil), 404, "not_found")
	wantError(t, v.admin(t, http.MethodPost, "/api/admin/sequences", `{"space":"a"}`), 404, "not_found")
}

// instance is one HTTP server with its own Sequencer on a shared store.
type instance struct {
	q   *sequence.Sequencer
	srv *httptest.Server
	reg *prometheus.Registry
}

func startInstance(t *testing.T, st sequence.Store) *instance {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{q: newSequencer(t, st, ln.Addr().String()), reg: prometheus.NewRegistry()}
	h := httpapi.New(httpapi.Config{Service: service.New(service.Config{Sequences: in.q, Peer: httpapi.NewPeer(0, nil), Metrics: in.reg, Logger: slog.New(slog.DiscardHandler)}), Registry: in.reg, Logger: slog.New(slog.DiscardHandler)})
	in.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	in.srv.Start()
	t.Cleanup(in.srv.Close)
	return in
}

func get(t *testing.T, url string, header ...string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestSequenceForwarding: any instance answers for any key, forwarding to
// the owner once; a forwarded request that reaches a non-owner is a 503
// with Retry-After, never forwarded again.
func TestSequenceForwarding(t *testing.T) {
	st := sequencetest.NewMemStore(time.Now)
	// 32 sections, so that both random member ids win some (see
	// TestSequenceRoutesTable).
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 10, Sections: 32}); err != nil {
		t.Fatal(err)
	}
	a, b := startInstance(t, st), startInstance(t, st)
	for range 3 {
		for _, in := range []*instance{a, b} {
			if err := in.q.Round(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a.q.Stats().SectionsOwned == 0 || b.q.Stats().SectionsOwned == 0 {
		t.Fatalf("sections not spread: a %+v, b %+v", a.q.Stats(), b.q.Stats())
	}
	for k := range 20 {
		key := "user-" + strconv.Itoa(k)
		for i := 1; i <= 4; i++ {
			in := []*instance{a, b}[i%2]
			code, body, _ := get(t, in.srv.URL+"/api/sequence/next/inbox/"+key)
			if code != 200 || body != strconv.Itoa(i) {
				t.Fatalf("key %s, call %d: %d %s", key, i, code, body)
			}
		}
		// current and its JSON form, through either instance: the
		// owner's number, forwarded as current's path and written as
		// JSON by the instance asked.
		for _, in := range []*instance{a, b} {
			if code, body, _ := get(t, in.srv.URL+"/api/sequence/current/inbox/"+key); code != 200 || body != "4" {
				t.Fatalf("current of %s: %d %s", key, code, body)
			}
			want := `{"space":"inbox","key":"` + key + `","seq":"4"}`
			if code, body, _ := get(t, in.srv.URL+"/api/sequence/key/inbox/"+key); code != 200 || body != want {
				t.Fatalf("the key %s as JSON: %d %s, want %s", key, code, body, want)
			}
		}
	}
	// Find a key a does not own, and send it to a as if forwarded.
	var foreign string
	for k := range 100 {
		key := "x-" + strconv.Itoa(k)
		if _, err := a.q.Current(context.Background(), "inbox", key); err != nil {
			foreign = key
			break
		}
	}
	code, body, h := get(t, a.srv.URL+"/api/sequence/next/inbox/"+foreign, httpapi.HeaderForwarded, "1")
	if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(body, `"unavailable"`) {
		t.Fatalf("forwarded to a non-owner: %d %s %v", code, body, h)
	}
	// The owner gone (and not answering), a forward fails with a 503.
	owner := b
	owner.srv.Close()
	code, _, h = get(t, a.srv.URL+"/api/sequence/next/inbox/"+foreign)
	if code != 503 || h.Get("Retry-After") == "" {
		t.Fatalf("forward to a dead owner: %d %v", code, h)
	}
}

func TestSequenceStatusJSON(t *testing.T) {
	v, _ := newSequenceEnv(t)
	v.do(t, http.MethodGet, "/api/sequence/next/inbox/alice", nil)
	rec := v.do(t, http.MethodGet, "/status.json", nil)
	var out struct {
		Sequence *struct {
			Spaces        int   `json:"spaces"`
			Sections      int   `json:"sections"`
			SectionsOwned int   `json:"sections_owned"`
			KeysInMemory  int64 `json:"keys_in_memory"`
			Taken         int64 `json:"sections_taken"`
			Forwards      int64 `json:"forwards"`
		} `json:"sequence"`
	}
	decodeBody(t, rec, &out)
	if s := out.Sequence; s == nil || s.Spaces != 1 || s.Sections != 4 || s.SectionsOwned != 4 || s.KeysInMemory != 1 || s.Taken != 4 {
		t.Fatalf("status.json sequence = %+v; body %s", out.Sequence, rec.Body)
	}
}

// TestForwardedAsSent: a key or tag holding a "/" (sent as %2F) next to a
// byte the client did not percent-encode is the same name to the owner
// when a request is forwarded: Go's re-encoding of the decoded path would
// have sent the "/" as a separator, and the owner refused the name.
func TestForwardedAsSent(t *testing.T) {
	fl := fleettest.New(t)
	for i := range 4 {
		tag := fmt.Sprintf("é/%d", i)
		body := `{"tag":"` + tag + `","ordered":true}`
		req := httptest.NewRequest(http.MethodPost, "/api/admin/tags", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fleettest.Token)
		rec := httptest.NewRecorder()
		fl.A.HTTP.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Fatalf("create %q: %d %s", tag, rec.Code, rec.Body)
		}
	}
	for i := range 8 {
		for _, in := range []*fleettest.Instance{fl.A, fl.B} {
			for _, target := range []string{
				fmt.Sprintf("/api/sequence/next/inbox/\xc3\xa9%%2F%d", i),
				fmt.Sprintf("/api/segment/get/\xc3\xa9%%2F%d", i%4),
			} {
				req, err := readRequest("GET "+target+" HTTP/1.1\r\nHost: leaf\r\n\r\n", nil)
				if err != nil {
					t.Fatal(err)
				}
				rec := httptest.NewRecorder()
				in.HTTP.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s to %s: %d %s", target, in.Name, rec.Code, rec.Body)
				}
			}
		}
	}
	if got := fl.Ledger.Reached(); got["forward:sequence"] == 0 || got["forward:"+fleettest.KindOrdered] == 0 {
		t.Fatalf("nothing forwarded: %v", got)
	}
}
