package containers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// token is the admin token every leaf of these tests is given (the
// compose files' default).
const token = "dev-admin-token-local"

var httpClient = &http.Client{Timeout: 10 * time.Second}

// call sends one request to leaf; body, if not nil, is JSON for the
// admin API.
func call(ctx context.Context, method, url string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// waitReady polls base's /readyz until it answers 200, and returns how
// long that took.
func waitReady(t *testing.T, base string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(within)
	var last string
	for time.Now().Before(deadline) {
		code, body, err := call(context.Background(), http.MethodGet, base+"/readyz", nil)
		if err == nil && code == http.StatusOK {
			return time.Since(start)
		}
		last = fmt.Sprintf("%d %s %v", code, tail(string(body), 300), err)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s not ready within %v: %s", base, within, last)
	return 0
}

// setUp creates the tags and the sequence space the tests take ids of: a
// plain tag, an ordered tag and a space.
func setUp(t *testing.T, base string) {
	t.Helper()
	for _, r := range []struct {
		path string
		body map[string]any
	}{
		{"/api/admin/tags", map[string]any{"tag": "orders"}},
		{"/api/admin/tags", map[string]any{"tag": "payments", "ordered": true}},
		{"/api/admin/sequences", map[string]any{"space": "inbox"}},
	} {
		code, body, err := call(context.Background(), http.MethodPost, base+r.path, r.body)
		if err != nil || code/100 != 2 {
			t.Fatalf("POST %s %v: %d %s %v", r.path, r.body, code, body, err)
		}
	}
}

// kinds are the ids taken from one leaf, by kind: plain, ordered,
// sequence, snowflake.
type kinds map[string][]int64

// routes are where each kind is taken, one id per call.
var routes = map[string]string{
	"plain":     "/api/segment/get/orders",
	"ordered":   "/api/segment/get/payments",
	"sequence":  "/api/sequence/next/inbox/u1",
	"snowflake": "/api/snowflake/get",
}

// take takes n ids of every kind from base, one call each, and fails t on
// any answer but an id.
func take(t *testing.T, base string, n int) kinds {
	t.Helper()
	got := kinds{}
	for kind, route := range routes {
		for range n {
			id, err := getID(context.Background(), base+route)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			got[kind] = append(got[kind], id)
		}
	}
	return got
}

// getID takes one id.
func getID(ctx context.Context, url string) (int64, error) {
	code, body, err := call(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %d %s", url, code, tail(string(body), 300))
	}
	id, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %q is not an id", url, body)
	}
	return id, nil
}

// checkAbove fails t unless every id of after is above every id of the
// same kind in before, and each kind increases within after.
func checkAbove(t *testing.T, step string, before, after kinds) {
	t.Helper()
	for kind, ids := range after {
		if len(ids) == 0 {
			t.Errorf("%s: no %s ids", step, kind)
			continue
		}
		if !slices.IsSorted(ids) {
			t.Errorf("%s: %s ids not increasing: %v", step, kind, ids)
		}
		if prev := before[kind]; len(prev) > 0 && slices.Min(ids) <= slices.Max(prev) {
			t.Errorf("%s: %s id %d not above %d, the highest before", step, kind, slices.Min(ids), slices.Max(prev))
		}
	}
}

// ledger keeps every id issued by kind, from any goroutine, and counts
// those issued twice.
type ledger struct {
	mu   sync.Mutex
	seen map[string]map[int64]int
	n    int
}

func newLedger() *ledger { return &ledger{seen: map[string]map[int64]int{}} }

func (l *ledger) add(kind string, ids ...int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.seen[kind]
	if m == nil {
		m = map[int64]int{}
		l.seen[kind] = m
	}
	for _, id := range ids {
		m[id]++
		l.n++
	}
}

func (l *ledger) addAll(k kinds) {
	for kind, ids := range k {
		l.add(kind, ids...)
	}
}

// twice is how many ids were issued more than once, and a few of them.
func (l *ledger) twice() (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var some []string
	for kind, m := range l.seen {
		for id, c := range m {
			if c > 1 {
				n++
				if len(some) < 5 {
					some = append(some, fmt.Sprintf("%s %d ×%d", kind, id, c))
				}
			}
		}
	}
	return n, some
}

// checkOnce fails t if any id was issued twice.
func (l *ledger) checkOnce(t *testing.T) {
	t.Helper()
	if n, some := l.twice(); n > 0 {
		t.Errorf("%d ids issued twice (of %d): %v", n, l.n, some)
	}
	t.Logf("%d ids, none twice", l.n)
}

// parseIDs reads an answer of one id (text) or of a batch (JSON ids).
func parseIDs(body []byte) ([]int64, error) {
	if id, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64); err == nil {
		return []int64{id}, nil
	}
	var batch struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(body, &batch); err != nil || len(batch.IDs) == 0 {
		return nil, fmt.Errorf("%q holds no id", tail(string(body), 200))
	}
	out := make([]int64, len(batch.IDs))
	for i, s := range batch.IDs {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an id", s)
		}
		out[i] = id
	}
	return out, nil
}
