package service_test

import (
	"context"
	"fmt"
	"slices"
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
	owner := &slowOwner{}
	reg := prometheus.NewRegistry()
	f := service.NewForwarder(owner, reg, nil)
	ctx := context.Background()
	requests, fail := &owner.requests, &owner.fail

	const calls = 200
	got := make([][]int64, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			n := 1 + i%3
			ids, err := f.TakeOwned(ctx, "owner", "o", n)
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
			_, err := f.TakeOwned(ctx, "owner", "o", 1)
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
	if _, err := f.TakeOwned(short, "owner", "o", 1); err == nil {
		t.Fatal("a call past its deadline got numbers")
	}
	if ids, err := f.TakeOwned(ctx, "owner", "o", 2); err != nil || len(ids) != 2 {
		t.Fatalf("after a call gave up: %v, %v", ids, err)
	}
}

// slowOwner is the owner of the ordered tag o a round trip away: each
// request takes 20 ms, and answers consecutive numbers or, while fail is
// set, its refusal.
type slowOwner struct {
	fakePeer       // for what it does not serve
	next, requests atomic.Int64
	fail           atomic.Bool
}

func (o *slowOwner) TagNumbers(_ context.Context, _, tag string, n int) ([]int64, error) {
	o.requests.Add(1)
	time.Sleep(20 * time.Millisecond)
	if o.fail.Load() {
		return nil, &service.Error{Code: service.UnknownTag, Message: fmt.Sprintf("biz tag %q does not exist", tag)}
	}
	first := o.next.Add(int64(n)) - int64(n) + 1
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = first + int64(i)
	}
	return ids, nil
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
