package snowflake_test

// The generator against real worker-id leases in MySQL (through package
// store), as several service instances on one database would run it.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// dbTimeout bounds every call that talks to the database.
const dbTimeout = 30 * time.Second

// epochMs is the epoch of every generator here (the default).
const epochMs = snowflake.DefaultEpochMs

// idMs is the Unix millisecond of a snowflake id of the default epoch.
func idMs(id int64) int64 { return id>>22 + epochMs }

// idWorker is the worker id inside a snowflake id.
func idWorker(id int64) int64 { return id >> 12 & snowflake.MaxWorkerID }

// mysqlStores opens n stores, each its own connection pool, on one fresh
// MySQL database, as n processes would.
func mysqlStores(tb testing.TB, n int) []*store.Store {
	tb.Helper()
	dsn := storetest.MySQL(tb)
	sts := make([]*store.Store, n)
	for i := range sts {
		sts[i] = storetest.Open(tb, store.MySQL, dsn)
	}
	return sts
}

// newGenerator starts a generator and closes it when tb ends.
func newGenerator(tb testing.TB, s snowflake.Settings) *snowflake.Generator {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	g, err := snowflake.New(ctx, s)
	if err != nil {
		tb.Fatalf("New(holder %q): %v", s.Holder, err)
	}
	tb.Cleanup(func() { closeGenerator(tb, g) })
	return g
}

// closeGenerator closes g, which releases its lease.
func closeGenerator(tb testing.TB, g *snowflake.Generator) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	if err := g.Close(ctx); err != nil {
		tb.Errorf("Close: %v", err)
	}
}

// issue takes n ids from g, one by one and in batches, and checks that they
// increase and carry g's worker id.
func issue(tb testing.TB, g *snowflake.Generator, n int) []int64 {
	tb.Helper()
	ids, err := issueIDs(g, n)
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}

// issueIDs is issue for goroutines other than the test's: it returns the
// first problem instead of failing.
func issueIDs(g *snowflake.Generator, n int) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	ids := make([]int64, 0, n)
	for len(ids) < n {
		if len(ids)%2 == 0 {
			id, err := g.Next(ctx)
			if err != nil {
				return nil, fmt.Errorf("Next after %d ids: %w", len(ids), err)
			}
			ids = append(ids, id)
			continue
		}
		batch, err := g.NextN(ctx, min(97, n-len(ids)))
		if err != nil {
			return nil, fmt.Errorf("NextN after %d ids: %w", len(ids), err)
		}
		ids = append(ids, batch...)
	}
	w := g.WorkerID()
	for i, id := range ids {
		if i > 0 && id <= ids[i-1] {
			return nil, fmt.Errorf("id %d (%d) is not above the previous one %d", i, id, ids[i-1])
		}
		if got := idWorker(id); got != w {
			return nil, fmt.Errorf("id %d carries worker id %d, want %d", id, got, w)
		}
	}
	return ids, nil
}

// leaseRow is a row of leaf_worker_lease, read behind the store's back.
type leaseRow struct {
	WorkerID        int64  `db:"worker_id"`
	Holder          string `db:"holder"`
	ExpiresMS       int64  `db:"expires_ms"`
	LastTimestampMS int64  `db:"last_timestamp_ms"`
}

func readLease(tb testing.TB, st *store.Store, workerID int64) leaseRow {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	var r leaseRow
	err := st.DB().GetContext(ctx, &r,
		"SELECT worker_id, holder, expires_ms, last_timestamp_ms FROM leaf_worker_lease WHERE worker_id = ?", workerID)
	if err != nil {
		tb.Fatalf("read the lease of worker id %d: %v", workerID, err)
	}
	return r
}

func readLeases(tb testing.TB, st *store.Store) []leaseRow {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	var rows []leaseRow
	err := st.DB().SelectContext(ctx, &rows,
		"SELECT worker_id, holder, expires_ms, last_timestamp_ms FROM leaf_worker_lease ORDER BY worker_id")
	if err != nil {
		tb.Fatalf("read the leases: %v", err)
	}
	return rows
}

// dbNowMs is the database's clock in Unix milliseconds, the clock that
// lease expiry is judged by.
func dbNowMs(tb testing.TB, st *store.Store) int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	var ms int64
	err := st.DB().GetContext(ctx, &ms,
		"SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000")
	if err != nil {
		tb.Fatalf("read the database clock: %v", err)
	}
	return ms
}

// diesOnRelease is a lease store whose holder dies instead of releasing:
// Release does nothing, so the lease stays as the last heartbeat left it.
type diesOnRelease struct{ snowflake.LeaseStore }

func (diesOnRelease) Release(context.Context, snowflake.Lease, int64) error { return nil }

// TestLeasedGeneratorsOnOneDatabase starts 32 generators at once, each with
// its own connection pool, and has all of them issue ids at once.
func TestLeasedGeneratorsOnOneDatabase(t *testing.T) {
	const (
		n        = 32
		perGen   = 2000
		issuers  = 2 // goroutines per generator
		perGorou = perGen / issuers
	)
	sts := mysqlStores(t, n)

	gens := make([]*snowflake.Generator, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
			defer cancel()
			<-start
			gens[i], errs[i] = snowflake.New(ctx, snowflake.Settings{Leases: sts[i], Holder: fmt.Sprintf("instance-%02d", i)})
		})
	}
	close(start)
	wg.Wait()
	for i, g := range gens {
		if g != nil {
			t.Cleanup(func() { closeGenerator(t, g) })
		}
		if errs[i] != nil {
			t.Errorf("New(instance-%02d): %v", i, errs[i])
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	holderOf := map[int64]int{}
	for i, g := range gens {
		w := g.WorkerID()
		if j, ok := holderOf[w]; ok {
			t.Errorf("instance-%02d and instance-%02d both hold worker id %d", j, i, w)
		}
		holderOf[w] = i
	}
	var got []int64
	for w := range holderOf {
		got = append(got, w)
	}
	slices.Sort(got)
	// On an empty table every holder takes the lowest id never used.
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i)
	}
	if !slices.Equal(got, want) {
		t.Errorf("worker ids = %v, want %v", got, want)
	}
	rows := readLeases(t, sts[0])
	if len(rows) != n {
		t.Errorf("leaf_worker_lease has %d rows, want %d", len(rows), n)
	}
	for _, r := range rows {
		if i, ok := holderOf[r.WorkerID]; !ok || r.Holder != fmt.Sprintf("instance-%02d", i) {
			t.Errorf("row of worker id %d is held by %q", r.WorkerID, r.Holder)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	results := make([][]int64, n*issuers)
	issueErrs := make([]error, n*issuers)
	start = make(chan struct{})
	for i := range n * issuers {
		wg.Go(func() {
			<-start
			results[i], issueErrs[i] = issueIDs(gens[i/issuers], perGorou)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(issueErrs...); err != nil {
		t.Fatal(err)
	}

	seen := make(map[int64]struct{}, n*perGen)
	dups := 0
	for _, ids := range results {
		for _, id := range ids {
			if _, ok := seen[id]; ok {
				dups++
				if dups <= 5 {
					t.Errorf("id %d (worker %d) issued twice", id, idWorker(id))
				}
			}
			seen[id] = struct{}{}
		}
	}
	if dups != 0 || len(seen) != n*perGen {
		t.Fatalf("%d distinct ids and %d duplicates, want %d distinct and none", len(seen), dups, n*perGen)
	}
	for i, g := range gens {
		if s := g.Stats(); s.Issued != perGen || s.WorkerID != g.WorkerID() {
			t.Errorf("instance-%02d: stats %+v, want %d issued", i, s, perGen)
		}
	}
}

// TestLeaseSameHolderRestart stops a generator and starts it again under
// the same holder name: it gets its worker id back and carries on above
// every id it issued before.
func TestLeaseSameHolderRestart(t *testing.T) {
	tests := []struct {
		name     string
		newStore bool // the restarted generator uses a new pool, as a new process would
	}{
		{"same store", false},
		{"new process", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := mysqlStores(t, 2)
			st := sts[0]
			ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
			defer cancel()

			// Another holder takes id 0 and releases it before the restarting
			// holder stops: the longest-expired id, the one a new holder
			// would get, so getting the old id back is the holder's own.
			other, err := st.Acquire(ctx, "other", (snowflake.MaxWorkerID + 1), time.Minute)
			if err != nil {
				t.Fatal(err)
			}

			const holder = "restarting"
			g1 := newGenerator(t, snowflake.Settings{Leases: st, Holder: holder})
			w := g1.WorkerID()
			if w == other.WorkerID {
				t.Fatalf("both holders got worker id %d", w)
			}
			ids := issue(t, g1, 5000)
			last := ids[len(ids)-1]
			if err := st.Release(ctx, other, 0); err != nil {
				t.Fatal(err)
			}
			closeGenerator(t, g1)

			r := readLease(t, st, w)
			if r.Holder != holder || r.LastTimestampMS < idMs(last) {
				t.Fatalf("after Close the row is %+v, want holder %q and last timestamp >= %d", r, holder, idMs(last))
			}
			if now := dbNowMs(t, st); r.ExpiresMS > now {
				t.Fatalf("after Close the lease expires at %d, after the database's now %d: not released", r.ExpiresMS, now)
			}

			st2 := st
			if tt.newStore {
				st2 = sts[1]
			}
			g2 := newGenerator(t, snowflake.Settings{Leases: st2, Holder: holder})
			if got := g2.WorkerID(); got != w {
				t.Fatalf("after the restart worker id = %d, want %d back", got, w)
			}
			first := issue(t, g2, 1)[0]
			if first <= last || idMs(first) <= idMs(last) {
				t.Fatalf("first id after the restart %d (ms %d) is not above the last before %d (ms %d)",
					first, idMs(first), last, idMs(last))
			}
		})
	}
}

// TestLeaseExpiryAndReclaim lets a holder die without releasing its worker
// id; once the lease has expired, another holder takes the id and issues
// only above the last timestamp recorded for it.
func TestLeaseExpiryAndReclaim(t *testing.T) {
	const deadTTL = 2 * time.Second
	tests := []struct {
		name string
		// die leaves worker id w with an expired lease and returns the
		// ids the dead holder issued (possibly none) and the last
		// timestamp it recorded.
		die func(t *testing.T, st *store.Store) (w int64, issued []int64, recorded int64)
	}{
		{"generator dies, lease runs out", func(t *testing.T, st *store.Store) (int64, []int64, int64) {
			return dieAfterIssuing(t, st, deadTTL, func(w int64) {
				testkit.WaitFor(t, 2*deadTTL+5*time.Second, "the dead holder's lease to run out", func() bool {
					return readLease(t, st, w).ExpiresMS <= dbNowMs(t, st)
				})
			})
		}},
		{"generator dies, lease expired early, heir starts once the reserved time has passed", func(t *testing.T, st *store.Store) (int64, []int64, int64) {
			return dieAfterIssuing(t, st, deadTTL, func(w int64) {
				storetest.ExpireLease(t, st, w)
				// The holder recorded how far ahead it might issue;
				// before that time an heir is refused (see
				// TestLeaseRecordedTimestampAhead).
				reserved := readLease(t, st, w).LastTimestampMS
				testkit.WaitFor(t, 2*deadTTL, "the reserved time to pass", func() bool {
					return time.Now().UnixMilli() > reserved
				})
			})
		}},
		{"holder dies right after recording a timestamp", func(t *testing.T, st *store.Store) (int64, []int64, int64) {
			ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
			defer cancel()
			l, err := st.Acquire(ctx, "dead", (snowflake.MaxWorkerID + 1), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			// A few ms ahead of the local clock, within the tolerance:
			// without the floor the next holder would issue at or below it.
			recorded := time.Now().UnixMilli() + 3
			if _, err := st.Renew(ctx, l, recorded, time.Minute); err != nil {
				t.Fatal(err)
			}
			storetest.ExpireLease(t, st, l.WorkerID)
			return l.WorkerID, nil, recorded
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := mysqlStores(t, 2)
			st := sts[0]
			w, issued, recorded := tt.die(t, st)

			r := readLease(t, st, w)
			if r.LastTimestampMS != recorded {
				t.Fatalf("row of worker id %d records last timestamp %d, want %d", w, r.LastTimestampMS, recorded)
			}
			if n := len(issued); n > 0 && recorded < idMs(issued[n-1]) {
				t.Fatalf("recorded last timestamp %d is below the dead holder's last id's ms %d", recorded, idMs(issued[n-1]))
			}

			g := newGenerator(t, snowflake.Settings{Leases: sts[1], Holder: "heir"})
			if got := g.WorkerID(); got != w {
				t.Fatalf("the heir got worker id %d, want the expired %d", got, w)
			}
			if r := readLease(t, st, w); r.Holder != "heir" {
				t.Fatalf("row of worker id %d is held by %q, want heir", w, r.Holder)
			}
			ids := issue(t, g, 3000)
			if ms := idMs(ids[0]); ms <= recorded {
				t.Fatalf("the heir's first id %d is at ms %d, not above the recorded %d", ids[0], ms, recorded)
			}
			seen := make(map[int64]bool, len(issued))
			for _, id := range issued {
				seen[id] = true
			}
			for _, id := range ids {
				if seen[id] {
					t.Fatalf("the heir issued %d, which the dead holder had issued", id)
				}
			}
		})
	}
}

// dieAfterIssuing runs a generator with lease TTL ttl on st, issues ids,
// waits for a heartbeat to record them and "kills" it: it stops renewing
// and never releases. expire then makes the lease expired.
func dieAfterIssuing(t *testing.T, st *store.Store, ttl time.Duration, expire func(w int64)) (int64, []int64, int64) {
	t.Helper()
	g := newGenerator(t, snowflake.Settings{Leases: diesOnRelease{st}, Holder: "doomed", LeaseTTL: ttl})
	w := g.WorkerID()
	ids := issue(t, g, 3000)
	lastMs := idMs(ids[len(ids)-1])
	testkit.WaitFor(t, 3*ttl, "a heartbeat to record the last id's timestamp", func() bool {
		return readLease(t, st, w).LastTimestampMS >= lastMs
	})
	closeGenerator(t, g) // stops the heartbeat; the release is lost

	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	// While the dead holder's lease lives, nobody may take its id.
	if l, err := st.Acquire(ctx, "early", w+1, time.Minute); !errors.Is(err, snowflake.ErrNoWorkerID) {
		t.Fatalf("Acquire in 0..%d while the dead holder's lease lives = %+v, %v; want ErrNoWorkerID", w, l, err)
	}
	expire(w)
	r := readLease(t, st, w)
	if r.Holder != "doomed" {
		t.Fatalf("row of worker id %d is held by %q, want doomed", w, r.Holder)
	}
	return w, ids, r.LastTimestampMS
}

// TestLeaseRecordedTimestampAhead: a worker id whose recorded last
// timestamp is ahead of the local clock by more than the tolerance is
// refused; within the tolerance, the generator waits until it has passed.
func TestLeaseRecordedTimestampAhead(t *testing.T) {
	tests := []struct {
		name      string
		ahead     time.Duration
		tolerance time.Duration
		refused   bool
	}{
		{"10s ahead is refused", 10 * time.Second, 0, true},
		{"1s ahead is refused with a 500ms tolerance", time.Second, 500 * time.Millisecond, true},
		{"300ms ahead is waited out with a 2s tolerance", 300 * time.Millisecond, 2 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mysqlStores(t, 1)[0]
			ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
			defer cancel()
			// The only row, expired: the id any new holder takes.
			dead, err := st.Acquire(ctx, "dead", (snowflake.MaxWorkerID + 1), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			recorded := time.Now().Add(tt.ahead).UnixMilli()
			if _, err := st.Renew(ctx, dead, recorded, time.Minute); err != nil {
				t.Fatal(err)
			}
			storetest.ExpireLease(t, st, dead.WorkerID)

			s := snowflake.Settings{Leases: st, Holder: "heir", Tolerance: tt.tolerance}
			if !tt.refused {
				g := newGenerator(t, s)
				if g.WorkerID() != dead.WorkerID {
					t.Fatalf("worker id = %d, want %d", g.WorkerID(), dead.WorkerID)
				}
				if id := issue(t, g, 1)[0]; idMs(id) <= recorded {
					t.Fatalf("first id %d is at ms %d, not above the recorded %d", id, idMs(id), recorded)
				}
				return
			}

			g, err := snowflake.New(ctx, s)
			if err == nil {
				closeGenerator(t, g)
				t.Fatalf("New took worker id %d whose last timestamp is %v ahead", g.WorkerID(), tt.ahead)
			}
			msg := err.Error()
			for _, want := range []string{fmt.Sprintf("worker id %d", dead.WorkerID), "ahead of the local clock", "tolerance"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			// The refused id is left free and its timestamp untouched.
			r := readLease(t, st, dead.WorkerID)
			if r.LastTimestampMS != recorded {
				t.Errorf("last timestamp after the refusal = %d, want %d", r.LastTimestampMS, recorded)
			}
			if now := dbNowMs(t, st); r.ExpiresMS > now {
				t.Errorf("the refused id is held by %q until %d (now %d)", r.Holder, r.ExpiresMS, now)
			}
		})
	}
}

// TestLeaseExhaustion holds all 1024 worker ids: New fails with
// ErrNoWorkerID until one is released.
func TestLeaseExhaustion(t *testing.T) {
	st := mysqlStores(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()

	// Squatters take every id, a few at a time to keep it quick.
	const squatters = 8
	taken := make([][]snowflake.Lease, squatters)
	errs := make([]error, squatters)
	start := time.Now()
	var wg sync.WaitGroup
	for s := range squatters {
		wg.Go(func() {
			for i := s; i < (snowflake.MaxWorkerID + 1); i += squatters {
				l, err := st.Acquire(ctx, fmt.Sprintf("squatter-%04d", i), (snowflake.MaxWorkerID + 1), time.Minute)
				if err != nil {
					errs[s] = err
					return
				}
				taken[s] = append(taken[s], l)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d leases taken in %v", (snowflake.MaxWorkerID + 1), time.Since(start))
	leases := make([]snowflake.Lease, (snowflake.MaxWorkerID + 1))
	for _, l := range slices.Concat(taken...) {
		if leases[l.WorkerID].Holder != "" {
			t.Fatalf("worker id %d was handed to %q and %q", l.WorkerID, leases[l.WorkerID].Holder, l.Holder)
		}
		leases[l.WorkerID] = l
	}
	for w, l := range leases {
		if l.Holder == "" {
			t.Fatalf("worker id %d was not handed out", w)
		}
	}

	s := snowflake.Settings{Leases: st, Holder: "latecomer"}
	g, err := snowflake.New(ctx, s)
	if !errors.Is(err, snowflake.ErrNoWorkerID) {
		if g != nil {
			closeGenerator(t, g)
		}
		t.Fatalf("New with every id held = %v, want an error wrapping ErrNoWorkerID", err)
	}
	if !strings.Contains(err.Error(), "latecomer") {
		t.Errorf("error %q does not name the holder", err)
	}

	const freed = 700
	if err := st.Release(ctx, leases[freed], 0); err != nil {
		t.Fatal(err)
	}
	g = newGenerator(t, s)
	if got := g.WorkerID(); got != freed {
		t.Fatalf("after releasing %d, New got worker id %d", freed, got)
	}
	if g, err := snowflake.New(ctx, snowflake.Settings{Leases: st, Holder: "another"}); !errors.Is(err, snowflake.ErrNoWorkerID) {
		if g != nil {
			closeGenerator(t, g)
		}
		t.Fatalf("New with every id held again = %v, want ErrNoWorkerID", err)
	}
}

// TestLeaseSharedHolderName: a second process that shares the first's
// holder name (same host and port, say) gets another worker id, and its
// release does not free the first's, so no third holder can take it while
// the first still issues.
func TestLeaseSharedHolderName(t *testing.T) {
	sts := mysqlStores(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
	defer cancel()
	a := newGenerator(t, snowflake.Settings{Leases: sts[0], Holder: "host:8080"})
	issue(t, a, 100)

	b, err := snowflake.New(ctx, snowflake.Settings{Leases: sts[1], Holder: "host:8080"})
	if err != nil {
		t.Fatal(err)
	}
	if b.WorkerID() == a.WorkerID() {
		t.Fatalf("a second holder named host:8080 got the live worker id %d", a.WorkerID())
	}
	if err := b.Close(ctx); err != nil { // as when its listener fails to bind
		t.Fatal(err)
	}

	c := newGenerator(t, snowflake.Settings{Leases: sts[2], Holder: "otherhost:8080"})
	if c.WorkerID() == a.WorkerID() {
		t.Fatalf("holder otherhost:8080 got worker id %d, which host:8080 still holds", a.WorkerID())
	}
	if r := readLease(t, sts[0], a.WorkerID()); r.ExpiresMS <= dbNowMs(t, sts[0]) {
		t.Fatalf("the first holder's lease of worker id %d was ended by the second's release", a.WorkerID())
	}
	if err := a.Ready(); err != nil {
		t.Fatalf("the first holder stopped: %v", err)
	}
}

// partitioned is a lease store that can be cut off from renewals, as a
// holder is by a network partition.
type partitioned struct {
	snowflake.LeaseStore
	cut atomic.Bool
}

func (p *partitioned) Renew(ctx context.Context, l snowflake.Lease, last int64, ttl time.Duration) (snowflake.Lease, error) {
	if p.cut.Load() {
		return snowflake.Lease{}, errors.New("network partition")
	}
	return p.LeaseStore.Renew(ctx, l, last, ttl)
}

func (p *partitioned) Release(context.Context, snowflake.Lease, int64) error { return nil }

// TestLeaseSkewedHolderPartitioned: a holder whose clock runs ahead of the
// next holder's by more than the safety margin is cut off from the
// database. It issues until its own deadline; the next holder of its id,
// after the lease expired, must not repeat any of its ids: the renewals
// recorded how far ahead the first holder could go.
func TestLeaseSkewedHolderPartitioned(t *testing.T) {
	sts := mysqlStores(t, 2)
	const ttl = 6 * time.Second // margin 1s
	const skew = 2 * time.Second
	zero := func() int64 { return 0 }
	cut := &partitioned{LeaseStore: sts[0]}
	a := newGenerator(t, snowflake.Settings{Leases: cut, Holder: "ahead", LeaseTTL: ttl, SeqOffset: zero,
		Now: func() time.Time { return time.Now().Add(skew) }, Tolerance: 3 * time.Second})
	w := a.WorkerID()
	testkit.WaitFor(t, 2*ttl, "a heartbeat to renew the lease", func() bool { return a.Stats().LeaseRenewals >= 2 })
	cut.cut.Store(true)
	ctx := context.Background()
	issuedA := map[int64]bool{}
	for {
		id, err := a.Next(ctx)
		if errors.Is(err, snowflake.ErrLeaseLost) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		issuedA[id] = true
		time.Sleep(200 * time.Microsecond)
	}
	testkit.WaitFor(t, 3*ttl, "the partitioned holder's lease to expire", func() bool {
		return readLease(t, sts[1], w).ExpiresMS <= dbNowMs(t, sts[1])
	})
	reserved := readLease(t, sts[1], w).LastTimestampMS
	testkit.WaitFor(t, 3*ttl, "the reserved time to pass", func() bool { return time.Now().UnixMilli() > reserved })

	b := newGenerator(t, snowflake.Settings{Leases: sts[1], Holder: "heir", LeaseTTL: ttl, SeqOffset: zero})
	if b.WorkerID() != w {
		t.Fatalf("the heir got worker id %d, want the expired %d", b.WorkerID(), w)
	}
	repeats := 0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
		id, err := b.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if issuedA[id] {
			repeats++
		}
		time.Sleep(200 * time.Microsecond)
	}
	if repeats > 0 {
		t.Errorf("the heir repeated %d of the %d ids the partitioned holder issued on worker id %d", repeats, len(issuedA), w)
	}
}

// TestLeaseSixteenWorkerBits: with sonyflake's layout (16 worker bits, the
// sequence above the worker id, units of 10 ms) the pool is 65,536 ids.
// Once ids 0..1023 are held, holders lease ids above them, on MySQL and on
// SQLite; their ids carry the worker id in the low 16 bits, and a release
// records the start of the last id's unit for the next holder.
func TestLeaseSixteenWorkerBits(t *testing.T) {
	layout := snowflake.Layout{Unit: 10 * time.Millisecond, TimeBits: 39, WorkerBits: 16, SequenceBits: 8,
		Order: snowflake.TimeSequenceWorker}
	const sonyflakeEpochMs = 1_409_529_600_000
	for _, dialect := range []string{store.MySQL, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			var st *store.Store
			if dialect == store.MySQL {
				st = mysqlStores(t, 1)[0]
			} else {
				st = storetest.SQLiteStore(t)
			}
			storetest.HoldLeases(t, st, 0, 1024)
			settings := func(holder string) snowflake.Settings {
				return snowflake.Settings{Layout: layout, EpochMs: sonyflakeEpochMs, Leases: st, Holder: holder, LeaseTTL: 10 * time.Second}
			}
			gens := []*snowflake.Generator{newGenerator(t, settings("host-a")), newGenerator(t, settings("host-b"))}
			var lastMs, releasedMs int64
			for i, g := range gens {
				if want := int64(1024 + i); g.WorkerID() != want {
					t.Fatalf("holder %d has worker id %d, want %d", i, g.WorkerID(), want)
				}
				ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
				ids, err := g.NextN(ctx, 600) // past 256 ids per unit
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				for j, id := range ids {
					d, err := g.Decode(id)
					if err != nil || d.WorkerID != g.WorkerID() || id&(1<<16-1) != g.WorkerID() || (j > 0 && id <= ids[j-1]) {
						t.Fatalf("id %d (%d) decodes to %+v, %v; want worker id %d in the low 16 bits", j, id, d, err, g.WorkerID())
					}
					lastMs = d.TimestampMs()
				}
				if i == 0 {
					closeGenerator(t, g)
					releasedMs = readLease(t, st, 1024).LastTimestampMS
					if releasedMs != lastMs {
						t.Fatalf("released with last timestamp %d, want %d, the start of the last id's unit", releasedMs, lastMs)
					}
				}
			}
			// The next holder of 1024 starts in a later unit.
			g := newGenerator(t, settings("host-a"))
			if g.WorkerID() != 1024 {
				t.Fatalf("host-a came back as worker id %d, want 1024", g.WorkerID())
			}
			ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
			defer cancel()
			id, err := g.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if d, _ := g.Decode(id); d.TimestampMs() <= releasedMs || d.WorkerID != 1024 {
				t.Fatalf("first id after the restart %+v: not after the released unit at %d", d, releasedMs)
			}
		})
	}
}
