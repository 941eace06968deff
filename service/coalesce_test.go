package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/service"
)

// TestTakeOwnedCoalesces: calls for one tag that wait while a forward is
// under way share the next request; each gets its own numbers, in the
// order the owner gave them, none twice; the owner sees far fewer
// requests than calls; an owner's refusal reaches every call of its
// request; a call that stops waiting leaves the others their numbers.
func TestTakeOwnedCoalesces(t *testing.T) {
	var next atomic.Int64
	var requests atomic.Int64
	var fail atomic.Bool
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get(service.HeaderForwarded) != "1" || !strings.HasPrefix(r.URL.Path, "/api/segment/batch/") {
			http.Error(w, "unexpected", http.StatusTeapot)
			return
		}
		time.Sleep(20 * time.Millisecond) // a round trip to the owner
		if fail.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"unknown_tag","message":"biz tag \"o\" does not exist"}}`))
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("count"))
		first := next.Add(int64(n)) - int64(n) + 1
		ids := make([]string, n)
		for i := range ids {
			ids[i] = strconv.FormatInt(first+int64(i), 10)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ids": ids})
	}))
	defer owner.Close()
	addr := strings.TrimPrefix(owner.URL, "http://")
	reg := prometheus.NewRegistry()
	f := service.NewForwarder(reg, 0, nil)
	ctx := context.Background()

	const calls = 200
	got := make([][]int64, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			n := 1 + i%3
			ids, err := f.TakeOwned(ctx, addr, "/api/segment/batch/o", "ids", n)
			if err != nil || len(ids) != n {
				t.Errorf("call %d: %v, %v", i, ids, err)
			}
			got[i] = ids
		})
	}
	wg.Wait()
	var all []int64
	for _, ids := range got {
		if !slices.IsSorted(ids) {
			t.Errorf("ids not increasing: %v", ids)
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatal("a number handed out twice")
	}
	if r := requests.Load(); r > calls/4 {
		t.Errorf("%d requests to the owner for %d calls, want them coalesced", r, calls)
	}
	t.Logf("%d calls, %d requests to the owner", calls, requests.Load())
	if n := counter(t, reg, "leaf_sequence_forwarded_calls_total"); n != calls {
		t.Errorf("leaf_sequence_forwarded_calls_total = %v, want %d", n, calls)
	}

	// The owner's refusal, to every call of the request.
	fail.Store(true)
	var refused atomic.Int64
	for range 10 {
		wg.Go(func() {
			_, err := f.TakeOwned(ctx, addr, "/api/segment/batch/o", "ids", 1)
			if code(err) == service.UnknownTag && strings.Contains(fmt.Sprint(err), "does not exist") {
				refused.Add(1)
			} else {
				t.Errorf("a refused call: %v", err)
			}
		})
	}
	wg.Wait()
	if refused.Load() != 10 {
		t.Fatalf("%d of 10 calls got the owner's refusal", refused.Load())
	}
	fail.Store(false)

	// A call that stops waiting: an error of its own, and the next calls
	// are served.
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if _, err := f.TakeOwned(short, addr, "/api/segment/batch/o", "ids", 1); err == nil {
		t.Fatal("a call past its deadline got numbers")
	}
	if ids, err := f.TakeOwned(ctx, addr, "/api/segment/batch/o", "ids", 2); err != nil || len(ids) != 2 {
		t.Fatalf("after a call gave up: %v, %v", ids, err)
	}
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			v := 0.0
			for _, m := range mf.GetMetric() {
				v += m.GetCounter().GetValue()
			}
			return v
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
