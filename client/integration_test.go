package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// These tests run the client against the real thing: the server's HTTP
// handler, its allocator and snowflake generator, over a real store,
// behind real listeners.

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// server is a leaf server on an httptest listener.
type server struct {
	srv      *httptest.Server
	gen      *snowflake.Generator
	requests atomic.Int64 // every request
	ranges   atomic.Int64 // ranges handed out (200s of the range route)
}

func (s *server) URL() string { return s.srv.URL }

// kill closes the server's listener and its connections, as when its
// process dies.
func (s *server) kill() { s.srv.Close() }

// startServer serves the API over st with snowflake worker id workerID;
// below 0, the server leases its own from st, and leases them to clients.
func startServer(tb testing.TB, st *store.Store, workerID int64) *server {
	tb.Helper()
	alloc := segment.New(st, segment.Options{})
	tb.Cleanup(func() { _ = alloc.Close() })
	sc := service.Config{Segments: alloc}
	settings := snowflake.Settings{WorkerID: workerID}
	if workerID < 0 {
		settings = snowflake.Settings{Leases: st, Holder: fmt.Sprintf("server-%p", st)}
		sc.WorkerLeases = st
	}
	gen, err := snowflake.New(context.Background(), settings)
	if err != nil {
		tb.Fatalf("snowflake: %v", err)
	}
	tb.Cleanup(func() { _ = gen.Close(context.Background()) })
	sc.Snowflake = gen
	h := httpapi.New(httpapi.Config{Service: service.New(sc)})
	s := &server{gen: gen}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		if sw.status == http.StatusOK && strings.HasPrefix(r.URL.Path, "/api/segment/range/") {
			s.ranges.Add(1)
		}
	}))
	tb.Cleanup(s.srv.Close)
	return s
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// twoServers starts two servers sharing one database of dialect, with
// tag (step 1000) created.
func twoServers(tb testing.TB, dialect string, tags ...string) (a, b *server) {
	tb.Helper()
	var dsn string
	switch dialect {
	case store.SQLite:
		dsn = filepath.Join(tb.TempDir(), "leaf.db")
	case store.MySQL:
		dsn = storetest.MySQL(tb)
	}
	st1, st2 := storetest.Open(tb, dialect, dsn), storetest.Open(tb, dialect, dsn)
	for _, tag := range tags {
		if _, err := st1.CreateTag(context.Background(), segment.Tag{Name: tag, Step: 1000, MaxID: 1}); err != nil {
			tb.Fatalf("create tag %s: %v", tag, err)
		}
	}
	return startServer(tb, st1, 1), startServer(tb, st2, 2)
}

// TestMillionIDs: three clients, four goroutines each, take ids from two
// servers over one database; every id is collected and none repeats.
func TestMillionIDs(t *testing.T) {
	total := 1_000_000
	if testing.Short() {
		total = 100_000
	}
	for _, dialect := range []string{store.SQLite, store.MySQL} {
		t.Run(dialect, func(t *testing.T) {
			a, b := twoServers(t, dialect, "orders")
			const clients, workers = 3, 4
			each := (total + clients*workers - 1) / (clients * workers)
			results := make([][]int64, clients*workers)
			start := time.Now()
			var wg sync.WaitGroup
			for i := range clients {
				// Each client lists the servers in its own order.
				eps := []string{a.URL(), b.URL()}
				if i%2 == 1 {
					eps[0], eps[1] = eps[1], eps[0]
				}
				c := newClient(t, client.Config{Endpoints: eps})
				for w := range workers {
					wg.Go(func() {
						ids := make([]int64, 0, each)
						ctx := context.Background()
						for len(ids) < each {
							if len(ids)%1000 == 0 {
								batch, err := c.NextN(ctx, "orders", 10)
								if err != nil {
									t.Error(err)
									return
								}
								ids = append(ids, batch...)
								continue
							}
							id, err := c.Next(ctx, "orders")
							if err != nil {
								t.Error(err)
								return
							}
							ids = append(ids, id)
						}
						results[i*workers+w] = ids
					})
				}
			}
			wg.Wait()
			took := time.Since(start)
			var all []int64
			for _, ids := range results {
				all = append(all, ids...)
			}
			if len(all) < total {
				t.Fatalf("%d ids collected", len(all))
			}
			checkUnique(t, all)
			t.Logf("%d ids in %v, no duplicate; range requests: %d and %d",
				len(all), took.Round(time.Millisecond), a.ranges.Load(), b.ranges.Load())
		})
	}
}

// TestServerKilled: one of two servers dies while ids are taken; callers
// see no error, the other server serves the ranges.
func TestServerKilled(t *testing.T) {
	const tag = "shop/orders v2:ü" // a tag that needs escaping in a path
	a, b := twoServers(t, store.SQLite, tag)
	c := newClient(t, client.Config{Endpoints: []string{a.URL(), b.URL()}, MinRange: 500, MaxRange: 500})

	var (
		taken   atomic.Int64
		stop    atomic.Bool
		mu      sync.Mutex
		all     []int64
		wg      sync.WaitGroup
		errOnce sync.Once
	)
	for range 4 {
		wg.Go(func() {
			var ids []int64
			for !stop.Load() {
				id, err := c.Next(context.Background(), tag)
				if err != nil {
					errOnce.Do(func() { t.Errorf("Next: %v", err) })
					break
				}
				ids = append(ids, id)
				taken.Add(1)
			}
			mu.Lock()
			all = append(all, ids...)
			mu.Unlock()
		})
	}
	testkit.WaitFor(t, 10*time.Second, "20,000 ids", func() bool { return taken.Load() >= 20_000 })
	aBefore := a.ranges.Load()
	a.kill()
	bAfter := b.ranges.Load()
	testkit.WaitFor(t, 10*time.Second, "20 ranges from the other server", func() bool { return b.ranges.Load() >= bAfter+20 })
	stop.Store(true)
	wg.Wait()
	if aBefore == 0 {
		t.Error("the killed server had served no range before it died")
	}
	checkUnique(t, all)
	t.Logf("%d ids; ranges: %d from the killed server, %d from the other", len(all), aBefore, b.ranges.Load())
}

// TestEveryServerDown: the buffered ids are served, exactly, then a clear
// error names every endpoint.
func TestEveryServerDown(t *testing.T) {
	a, b := twoServers(t, store.SQLite, "orders")
	c := newClient(t, client.Config{Endpoints: []string{a.URL(), b.URL()}, MinRange: 1000, MaxRange: 1000})
	ctx := context.Background()
	for range 300 { // past a quarter of the first range: the second is fetched
		if _, err := c.Next(ctx, "orders"); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, 10*time.Second, "the second range", func() bool { return a.ranges.Load()+b.ranges.Load() == 2 })
	a.kill()
	b.kill()

	served := 0
	var err error
	for ; served < 5000; served++ {
		if _, err = c.Next(ctx, "orders"); err != nil {
			break
		}
	}
	if served != 1700 {
		t.Fatalf("%d ids served after the servers died, want the 700 + 1000 buffered", served)
	}
	if !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("Next: %v, want ErrUnavailable", err)
	}
	for _, u := range []string{a.URL(), b.URL()} {
		if !strings.Contains(err.Error(), u+": ") {
			t.Errorf("the error does not name %s: %v", u, err)
		}
	}
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 0 || e.Err == nil {
		t.Errorf("the error's *Error: %#v", e)
	}
	t.Logf("the error: %v", err)
}

func TestServerErrorsAreNotFailedOver(t *testing.T) {
	a, b := twoServers(t, store.SQLite, "orders")
	c := newClient(t, client.Config{Endpoints: []string{a.URL(), b.URL()}})
	tests := []struct {
		tag  string
		want error
	}{
		{"missing", client.ErrUnknownTag},
		{"missing/too?#%", client.ErrUnknownTag},
		{"\xff", client.ErrInvalidTag}, // not UTF-8
		{strings.Repeat("x", 129), client.ErrInvalidTag},
		{"", client.ErrInvalidTag}, // refused without a request
	}
	for _, tt := range tests {
		before := a.requests.Load() + b.requests.Load()
		_, err := c.Next(context.Background(), tt.tag)
		if !errors.Is(err, tt.want) || errors.Is(err, client.ErrUnavailable) {
			t.Errorf("Next(%.20q): %v, want %v", tt.tag, err, tt.want)
		}
		requests := a.requests.Load() + b.requests.Load() - before
		if tt.tag == "" && requests != 0 || tt.tag != "" && requests != 1 {
			t.Errorf("Next(%.20q): %d requests", tt.tag, requests)
		}
	}
	if _, err := c.Next(context.Background(), "orders"); err != nil {
		t.Fatalf("Next: %v", err)
	}
}

// TestSnowflakeIDs: ids from two servers are unique and never older than
// SnowflakeMaxAge when handed out, also when a slow caller lets batches
// age. A batch whose answer itself took longer than that is refused, as
// the client promises: on a loaded machine some are, and they are counted,
// not failed.
func TestSnowflakeIDs(t *testing.T) {
	a, b := twoServers(t, store.SQLite)
	const maxAge = 50 * time.Millisecond
	c := newClient(t, client.Config{Endpoints: []string{a.URL(), b.URL()}, SnowflakeBatch: 50, SnowflakeMaxAge: maxAge})
	var (
		mu      sync.Mutex
		all     []int64
		wg      sync.WaitGroup
		late    atomic.Int64
		tooSlow atomic.Int64
	)
	take := func() {
		called := time.Now()
		id, err := c.Snowflake(context.Background())
		if errors.Is(err, client.ErrUnavailable) && strings.Contains(err.Error(), "longer than SnowflakeMaxAge") {
			tooSlow.Add(1)
			return
		}
		if err != nil {
			t.Error(err)
			return
		}
		d, err := a.gen.Decode(id)
		if err != nil {
			t.Error(err)
			return
		}
		// Handed out after the call began, so an id made more than
		// maxAge before that was older than maxAge when handed out;
		// measured from the call's start, not its return, which a
		// loaded machine may delay. The id's time is its millisecond,
		// rounded down.
		if age := called.Sub(d.Time); age > maxAge+time.Millisecond {
			late.Add(1)
			t.Errorf("snowflake id %d made %v before the call that handed it out", id, age)
		}
		mu.Lock()
		all = append(all, id)
		mu.Unlock()
	}
	for range 4 {
		wg.Go(func() {
			for range 5000 {
				take()
			}
		})
	}
	wg.Wait()
	// A slow caller: one id every 20ms, so each batch ages out long
	// before it is used.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	before := a.requests.Load() + b.requests.Load()
	for range 10 {
		<-tick.C
		take()
	}
	if n := a.requests.Load() + b.requests.Load() - before; n < 4 {
		t.Errorf("%d requests for 10 ids 20ms apart with a max age of 50ms: stale ids were used", n)
	}
	if n := tooSlow.Load(); n > 0 {
		t.Logf("%d of 20,010 ids refused: their batch's answer took longer than %v", n, maxAge)
		if n > 10000 {
			t.Errorf("%d of 20,010 ids refused as too old on arrival", n)
		}
	}
	checkUnique(t, all)
}

// TestSnowflakeLayout: the layout read from a real server decodes its ids
// as the server does, and the bounds of the time around an id, computed
// without a call, hold it and agree with the server's.
func TestSnowflakeLayout(t *testing.T) {
	a, _ := twoServers(t, store.SQLite)
	c := newClient(t, client.Config{Endpoints: []string{a.URL()}})
	ctx := context.Background()
	l, err := c.SnowflakeLayout(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	id, err := c.Snowflake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	want, err := a.gen.Decode(id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Decode(id)
	if err != nil || !got.Time.Equal(want.Time) || got.WorkerID != want.WorkerID || got.Sequence != want.Sequence {
		t.Fatalf("the client decodes %d as %+v, %v; the server as %+v", id, got, err, want)
	}
	lo, hi, err := l.Bounds(before.Add(-time.Minute), after)
	if err != nil || id < lo || id > hi {
		t.Fatalf("bounds of the minute before the call: %d..%d, %v; want them around %d", lo, hi, err, id)
	}
	slo, shi, err := a.gen.Bounds(before.Add(-time.Minute), after)
	if err != nil || slo != lo || shi != hi {
		t.Errorf("the server's bounds %d..%d (%v), the client's %d..%d", slo, shi, err, lo, hi)
	}
	if _, _, err := l.Bounds(after, before); !errors.Is(err, client.ErrInvalidRequest) {
		t.Errorf("an interval backwards: %v, want ErrInvalidRequest", err)
	}
}

// TestLeaseWorker: worker ids leased from two real servers sharing one
// store, for generators in this process: four workers get four ids, none
// a server's own; their ids, made in memory, are unique, increasing per
// worker, and decode to their worker id and the time they were made; a
// worker closed makes no more, and its id goes back to the pool with its
// last time recorded as the floor of the next holder.
func TestLeaseWorker(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "leaf.db")
	a := startServer(t, storetest.Open(t, store.SQLite, dsn), -1)
	b := startServer(t, storetest.Open(t, store.SQLite, dsn), -1)
	c := newClient(t, client.Config{Endpoints: []string{a.URL(), b.URL()}})
	ctx := context.Background()
	var workers []*client.Worker
	ids := map[int64]bool{a.gen.WorkerID(): true, b.gen.WorkerID(): true}
	for i := range 4 {
		w, err := c.LeaseWorker(ctx, fmt.Sprintf("proc-%d", i), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if ids[w.ID()] {
			t.Fatalf("worker id %d leased twice", w.ID())
		}
		ids[w.ID()] = true
		workers = append(workers, w)
	}
	seen := map[int64]bool{}
	lastOf := make([]int64, len(workers))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Go(func() {
			var last int64
			defer func() { lastOf[i] = last }()
			for range 20000 {
				id, err := w.Next()
				if err != nil {
					t.Error(err)
					return
				}
				p, err := w.Layout().Decode(id)
				if err != nil || p.WorkerID != w.ID() || id <= last || time.Since(p.Time) > time.Minute {
					t.Errorf("worker %d: id %d (after %d) decodes as %+v, %v", w.ID(), id, last, p, err)
					return
				}
				last = id
				mu.Lock()
				if seen[id] {
					t.Errorf("id %d made twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 80000 {
		t.Errorf("%d ids, want 80000", len(seen))
	}
	w := workers[0]
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Next(); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Next after Close: %v, want ErrClosed", err)
	}
	again, err := c.LeaseWorker(ctx, "proc-0", 30*time.Second)
	if err != nil || again.ID() != w.ID() {
		t.Fatalf("proc-0 again: %v, %v; want its worker id %d back", again, err, w.ID())
	}
	id, err := again.Next()
	if err != nil || id <= lastOf[0] {
		t.Errorf("the next holder's first id %d (%v): want it above %d, the last one's last", id, err, lastOf[0])
	}
	for _, w := range append(workers[1:], again) {
		_ = w.Close(ctx)
	}
}

// TestLeaseWorkerOfKilledHolder: a holder that dies without releasing
// keeps its worker id until its lease runs out: no one else is given the
// id meanwhile, and the next holder of it makes its ids after the dead
// one's reserve, the latest time it could have made an id at.
func TestLeaseWorkerOfKilledHolder(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "leaf.db")
	srv := startServer(t, storetest.Open(t, store.SQLite, dsn), -1)
	c := newClient(t, client.Config{Endpoints: []string{srv.URL()}})
	ctx := context.Background()
	// The victim: a lease of 3 s taken by hand, never renewed.
	reserve := time.Now().Add(2400 * time.Millisecond).UnixMilli()
	resp, err := http.Post(srv.URL()+"/api/snowflake/leases", "application/json",
		strings.NewReader(fmt.Sprintf(`{"holder":"victim","ttl_ms":3000,"reserve_ms":%d}`, reserve)))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("the victim's lease: %v %v", resp, err)
	}
	var dead struct {
		WorkerID int64 `json:"worker_id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&dead)
	resp.Body.Close()
	live, err := c.LeaseWorker(ctx, "victim", 30*time.Second)
	if err != nil || live.ID() == dead.WorkerID {
		t.Fatalf("while the victim's lease runs: %v, %v; want another id than %d", live, err, dead.WorkerID)
	}
	defer live.Close(ctx)
	time.Sleep(3100 * time.Millisecond)
	heir, err := c.LeaseWorker(ctx, "victim", 30*time.Second)
	if err != nil || heir.ID() != dead.WorkerID {
		t.Fatalf("after the victim's lease ran out: %v, %v; want its id %d", heir, err, dead.WorkerID)
	}
	defer heir.Close(ctx)
	if heir.Floor().UnixMilli() < reserve {
		t.Errorf("the heir's floor %v is below the victim's reserve %v", heir.Floor(), time.UnixMilli(reserve))
	}
	id, err := heir.Next()
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := heir.Layout().Decode(id); p.Time.UnixMilli() <= reserve {
		t.Errorf("the heir's first id is of %v, not after the victim's reserve %v", p.Time, time.UnixMilli(reserve))
	}
}
