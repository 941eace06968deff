package sequence_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
)

// slowRows is an ordered tag's rows a round trip away: each raise takes
// took on the test's clock, and a raise waits for gate while it is set.
type slowRows struct {
	*sequencetest.OrderedTags
	f       *fixture
	took    time.Duration
	gate    atomic.Pointer[chan struct{}]
	raising chan struct{} // told of each raise as it begins
	asked   atomic.Int64  // the atLeast of the last raise
	lose    atomic.Int64  // raises to make and then fail, as if their answers were lost
}

func (r *slowRows) RaiseRow(ctx context.Context, row string, limit, atLeast int64) (int64, int64, error) {
	select {
	case r.raising <- struct{}{}:
	default:
	}
	if g := r.gate.Load(); g != nil {
		select {
		case <-*g:
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
	r.f.clock.Add(r.took)
	r.asked.Store(atLeast)
	first, last, err := r.OrderedTags.RaiseRow(ctx, row, limit, atLeast)
	if err == nil && r.lose.Add(-1) >= 0 {
		return 0, 0, errors.New("connection lost")
	}
	return first, last, err
}

func (f *fixture) slowMember(t *testing.T, rows *slowRows) *sequence.Sequencer {
	t.Helper()
	q, err := sequence.New(sequence.Options{
		Store: f.store, Ordered: rows.OrderedTags, Tags: rows, ID: "a", Addr: "a:8080", Lease: lease, Interval: -1, Now: f.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(context.Background()) })
	round(t, q)
	return q
}

// slowOrdered is a fixture with the ordered tag "orders" of step 100 on
// slow rows.
func slowOrdered(t *testing.T) (*fixture, *slowRows) {
	t.Helper()
	f := newFixture(t)
	rows := &slowRows{OrderedTags: sequencetest.NewOrderedTags(f.store, 100), f: f, raising: make(chan struct{}, 1)}
	rows.Create("orders", true)
	return f, rows
}

// takeOrders takes n ids of "orders" from q and fails unless they are
// first..first+n-1.
func takeOrders(t *testing.T, q *sequence.Sequencer, n int, first int64) {
	t.Helper()
	ids, err := q.NextTag(context.Background(), "orders", n)
	if err != nil || ids[0] != first || ids[n-1] != first+int64(n)-1 {
		t.Fatalf("NextTag(%d) = %v, %v; want %d..%d", n, ids, err, first, first+int64(n)-1)
	}
}

// TestOrderedLoadsAhead: once a tenth of an ordered tag's range is issued,
// its owner takes the next range in the background; callers are served
// from the range in use while that raise is held, and go on into the next
// range with no gap.
func TestOrderedLoadsAhead(t *testing.T) {
	f, rows := slowOrdered(t)
	q := f.slowMember(t, rows)
	ctx := context.Background()
	var last int64
	issue := func(n int) {
		t.Helper()
		for range n {
			ids, err := q.NextTag(ctx, "orders", 1)
			if err != nil || ids[0] != last+1 {
				t.Fatalf("after %d: %v, %v", last, ids, err)
			}
			last = ids[0]
		}
	}
	issue(1)
	<-rows.raising // the first range
	gate := make(chan struct{})
	rows.gate.Store(&gate)
	issue(10) // a tenth of the range: the raise ahead begins
	select {
	case <-rows.raising:
	case <-time.After(5 * time.Second):
		t.Fatal("no raise ahead after a tenth of the range")
	}
	issue(89) // the rest of the range, with the raise ahead held
	if got := rows.Raises(); got != 1 {
		t.Fatalf("%d raises done with the one ahead held, want 1", got)
	}
	go func() { time.Sleep(20 * time.Millisecond); close(gate) }()
	issue(150) // waits for the raise ahead once, then goes on past it
	if got := rows.MaxID("orders"); got <= last {
		t.Fatalf("max_id %d at or below %d issued", got, last)
	}
}

// TestOrderedAheadSizedByRate: once callers waited for a range loaded
// ahead (the numbers outran a raise that takes long), the next range holds
// what the rate just seen issues in a few raises' time, so that a busy tag
// a round trip away does not wait again; while loads arrive in time the
// range stays the row's step (TestOrderedLoadsAhead).
func TestOrderedAheadSizedByRate(t *testing.T) {
	f := newFixture(t)
	rows := &slowRows{OrderedTags: sequencetest.NewOrderedTags(f.store, 100), f: f, took: 100 * time.Millisecond}
	rows.Create("orders", true)
	q := f.slowMember(t, rows)
	ctx := context.Background()
	take := func(n int) {
		t.Helper()
		if _, err := q.NextTag(ctx, "orders", n); err != nil {
			t.Fatal(err)
		}
	}
	take(1)
	gate := make(chan struct{})
	rows.gate.Store(&gate)
	take(19) // the raise ahead begins, at the step, and is held
	take(80)
	go func() { time.Sleep(20 * time.Millisecond); close(gate) }()
	take(1) // waits for it
	if got := rows.asked.Load(); got != 0 {
		t.Fatalf("the first raise ahead asked for %d, want 0 (the step)", got)
	}
	// 20 numbers in 10 ms: 2,000 a second, 800 in four raises of 100 ms.
	f.clock.Add(10 * time.Millisecond)
	take(19)
	waitFor(t, func() bool { return rows.Raises() == 3 })
	if got := rows.asked.Load(); got != 800 {
		t.Fatalf("the raise ahead after a wait asked for %d, want 800", got)
	}
	if got := rows.MaxID("orders"); got != 1+100+100+800 {
		t.Fatalf("max_id %d, want 1001", got)
	}
}

// TestOrderedAheadHandedBack: an owner that stops cleanly with a range
// taken ahead hands back both what is left of the range in use and the
// range ahead, so the next owner goes on with no gap.
func TestOrderedAheadHandedBack(t *testing.T) {
	f := newFixture(t)
	rows := &slowRows{OrderedTags: sequencetest.NewOrderedTags(f.store, 10), f: f}
	rows.Create("orders", true)
	q := f.slowMember(t, rows)
	ctx := context.Background()
	ids, err := q.NextTag(ctx, "orders", 5)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return rows.Raises() == 2 })
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rows.MaxID("orders"); got != ids[4]+1 {
		t.Fatalf("max_id %d after a clean stop at %d, want %d", got, ids[4], ids[4]+1)
	}
}

// TestOrderedAheadPastDeadline: a range whose raise ends after the owner's
// deadline is never issued; the caller waiting for it is told to retry.
func TestOrderedAheadPastDeadline(t *testing.T) {
	f := newFixture(t)
	rows := &slowRows{OrderedTags: sequencetest.NewOrderedTags(f.store, 10), f: f}
	rows.Create("orders", true)
	q := f.slowMember(t, rows)
	rows.took = lease // the raise ends past the deadline
	_, err := q.NextTag(context.Background(), "orders", 1)
	if !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("a range raised past the deadline: %v, want ErrUnavailable", err)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5 s")
		}
	}
}

// gatedMax holds each raise of max_seq while gate is set.
type gatedMax struct {
	*sequencetest.MemStore
	gate atomic.Pointer[chan struct{}]
}

func (g *gatedMax) RaiseMax(ctx context.Context, space string, section int, holder string, by int64) (int64, error) {
	if c := g.gate.Load(); c != nil {
		select {
		case <-*c:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return g.MemStore.RaiseMax(ctx, space, section, holder, by)
}

// TestKeyRaisesAhead: once a tenth of a step past max_seq's last raise is
// issued, the owner raises max_seq again in the background; a hot key is
// served from memory while that raise is held, and waits only when it has
// passed the bound persisted.
func TestKeyRaisesAhead(t *testing.T) {
	f := newFixture(t, sequence.Space{Name: "inbox", Step: 100, Sections: 1})
	store := &gatedMax{MemStore: f.store}
	q, err := sequence.New(sequence.Options{Store: store, ID: "a", Addr: "a:8080", Lease: lease, Interval: -1, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(context.Background()) })
	round(t, q)
	var last int64
	issue := func(n int) {
		t.Helper()
		for range n {
			if got := next(t, q, "inbox", "hot"); got != last+1 {
				t.Fatalf("after %d: %d", last, got)
			}
			last++
		}
	}
	issue(1)
	if r := f.store.Raises(); r != 1 {
		t.Fatalf("%d raises for the first number, want 1", r)
	}
	gate := make(chan struct{})
	store.gate.Store(&gate)
	issue(99) // the raise ahead begins after ten, and is held
	if r := f.store.Raises(); r != 1 {
		t.Fatalf("%d raises done with the one ahead held, want 1", r)
	}
	go func() { time.Sleep(20 * time.Millisecond); close(gate) }()
	issue(150)
	if got := f.store.MaxSeq("inbox", 0); got < last || got > last+200 {
		t.Fatalf("max_seq %d with %d issued: not within two steps ahead", got, last)
	}
}

// TestOrderedStepOneLoadsNothingAhead: a row of step 1 (dense numbers, a
// write each) takes each number when it is asked for and holds none ahead,
// so that an owner killed loses none.
func TestOrderedStepOneLoadsNothingAhead(t *testing.T) {
	f := newFixture(t)
	rows := &slowRows{OrderedTags: sequencetest.NewOrderedTags(f.store, 1), f: f}
	rows.Create("inv", true)
	q := f.slowMember(t, rows)
	for i := int64(1); i <= 20; i++ {
		ids, err := q.NextTag(context.Background(), "inv", 1)
		if err != nil || ids[0] != i {
			t.Fatalf("number %d: %v, %v", i, ids, err)
		}
		if got := rows.MaxID("inv"); got != i+1 {
			t.Fatalf("max_id %d after %d issued: a number held ahead", got, i)
		}
	}
}

// TestRaiseOutlivingTheDeadline: a raise ahead that ends once the owner's
// deadline has passed (a database slow to answer) keeps the range it
// took: nothing of it is issued while the owner may not serve, and once a
// round renews the lease the ids go on through it with no gap. (Dropped,
// it was a hole of a step: the next raise went on above it.)
func TestRaiseOutlivingTheDeadline(t *testing.T) {
	f, rows := slowOrdered(t)
	q := f.slowMember(t, rows)
	ctx := context.Background()
	take := func(n int, first int64) { t.Helper(); takeOrders(t, q, n, first) }
	take(5, 1)
	// Past the deadline (lease less a fifth), within the lease.
	rows.took = lease * 9 / 10
	take(5, 6) // 10% of the range issued: the raise ahead begins
	for rows.Raises() < 2 {
		time.Sleep(time.Millisecond)
	}
	if _, err := q.NextTag(ctx, "orders", 1); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("NextTag past the deadline = %v; want ErrUnavailable", err)
	}
	rows.took = 0
	round(t, q) // renews the lease: serving again
	take(90, 11)
	take(5, 101) // from the range the late raise took
}

// TestLateRaiseHandedBack: an owner that stops (Close) while a raise
// ahead of its ordered tag is held up waits for it only as long as it is
// given; the raise that ends afterwards took numbers no one will issue,
// and hands them back, so the next owner goes on with no gap.
func TestLateRaiseHandedBack(t *testing.T) {
	f, rows := slowOrdered(t)
	a := f.slowMember(t, rows)
	ctx := context.Background()
	take := func(q *sequence.Sequencer, n int, first int64) { t.Helper(); takeOrders(t, q, n, first) }
	take(a, 5, 1)
	select {
	case <-rows.raising: // the first raise's
	default:
	}
	gate := make(chan struct{})
	rows.gate.Store(&gate)
	take(a, 5, 6) // 10% issued: the raise ahead begins, and waits
	<-rows.raising
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	err := a.Close(cctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	close(gate)
	deadline := time.Now().Add(5 * time.Second)
	for rows.MaxID("orders") != 11 {
		if time.Now().After(deadline) {
			t.Fatalf("max_id = %d after the late raise; want 11, every number after the last issued handed back", rows.MaxID("orders"))
		}
		time.Sleep(time.Millisecond)
	}
	b := f.orderedMember(t, "b", rows.OrderedTags)
	round(t, b)
	take(b, 5, 11)
}

// TestLostRaiseKept: a raise of the row that failed to the owner but was
// made (its answer lost) leaves the row a range further on; the owner's
// next raise finds it there, and the numbers between, its own and never
// issued, are issued next: no gap.
func TestLostRaiseKept(t *testing.T) {
	f, rows := slowOrdered(t)
	q := f.slowMember(t, rows)
	takeOrders(t, q, 5, 1)
	rows.lose.Store(1)
	// 10% issued: the raise ahead is made, and fails to the owner.
	takeOrders(t, q, 5, 6)
	deadline := time.Now().Add(5 * time.Second)
	for rows.MaxID("orders") != 201 {
		if time.Now().After(deadline) {
			t.Fatalf("max_id = %d; want 201, the lost raise made", rows.MaxID("orders"))
		}
		time.Sleep(time.Millisecond)
	}
	takeOrders(t, q, 90, 11) // the rest of the first range
	takeOrders(t, q, 100, 101)
	takeOrders(t, q, 5, 201)
}
