package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/internal/testkit"
)

// newClient returns a client of cfg, closed when tb ends.
func newClient(tb testing.TB, cfg client.Config) *client.Client {
	tb.Helper()
	c, err := client.New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return c
}

// deadURL is the address of a listener that has been closed: connections
// to it are refused.
func deadURL(tb testing.TB) string {
	tb.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// checkUnique fails tb if ids holds a duplicate or a value below 1. It
// sorts ids.
func checkUnique(tb testing.TB, ids []int64) {
	tb.Helper()
	slices.Sort(ids)
	if len(ids) > 0 && ids[0] < 1 {
		tb.Fatalf("id %d below 1", ids[0])
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			tb.Fatalf("id %d handed out twice (of %d ids)", ids[i], len(ids))
		}
	}
}

func TestNewConfig(t *testing.T) {
	ok := []string{"http://127.0.0.1:1"}
	tests := []struct {
		name string
		cfg  client.Config
		want string // part of the error; empty for none
	}{
		{"defaults", client.Config{Endpoints: ok}, ""},
		{"trailing slash and prefix", client.Config{Endpoints: []string{"https://leaf.example/ids/"}}, ""},
		{"no endpoints", client.Config{}, "no endpoints"},
		{"no scheme", client.Config{Endpoints: []string{"localhost:8080"}}, "http:// or https://"},
		{"no host", client.Config{Endpoints: []string{"http:///x"}}, "no host"},
		{"query", client.Config{Endpoints: []string{"http://a/?x=1"}}, "without user, query or fragment"},
		{"negative timeout", client.Config{Endpoints: ok, RequestTimeout: -time.Second}, "negative RequestTimeout"},
		{"range above the server's", client.Config{Endpoints: ok, MaxRange: client.MaxRange + 1}, "MaxRange"},
		{"min above max", client.Config{Endpoints: ok, MinRange: 500, MaxRange: 100}, "MinRange 500 is above MaxRange 100"},
		{"max below the default min", client.Config{Endpoints: ok, MaxRange: 10}, ""},
		{"batch above the server's", client.Config{Endpoints: ok, SnowflakeBatch: 10_001}, "SnowflakeBatch"},
		{"backoff", client.Config{Endpoints: ok, BackoffMin: time.Second, BackoffMax: time.Millisecond}, "BackoffMin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.New(tt.cfg)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				_ = c.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestNextConsecutive(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}})
	ctx := context.Background()
	// One client of one server gets every id of the tag, in order,
	// through many ranges and switches.
	for want := int64(1); want <= 20_000; want++ {
		id, err := c.Next(ctx, "orders")
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if id != want {
			t.Fatalf("Next = %d, want %d", id, want)
		}
	}
	if n := f.ranges.Load(); n < 2 || n > 20 {
		t.Errorf("%d range requests for 20,000 ids", n)
	}
}

// TestToken: Config.Token is sent as the bearer token of every request,
// as servers with --id-token ask; without it their 401 is the caller's
// error.
func TestToken(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	f.token = "a token of the id routes"
	ctx := context.Background()
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, Token: f.token})
	if id, err := c.Next(ctx, "orders"); err != nil || id != 1 {
		t.Fatalf("with the token: %d, %v", id, err)
	}
	if _, err := c.Snowflake(ctx); err != nil {
		t.Fatalf("a snowflake id with the token: %v", err)
	}
	without := newClient(t, client.Config{Endpoints: []string{f.URL()}})
	if _, err := without.Next(ctx, "orders"); err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("without the token: %v, want the server's unauthorized", err)
	}
}

func TestNextN(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	f.maxRange.Store(70) // ranges end where a segment would
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, MinRange: 100, MaxRange: 100})
	ctx := context.Background()

	ids, err := c.NextN(ctx, "orders", 250)
	if err != nil {
		t.Fatalf("NextN: %v", err)
	}
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("NextN[%d] = %d, want %d", i, id, i+1)
		}
	}
	if id, err := c.Next(ctx, "orders"); err != nil || id != 251 {
		t.Fatalf("Next after NextN = %d, %v; want 251", id, err)
	}
	if ids, err := c.NextN(ctx, "orders", 0); err != nil || len(ids) != 0 {
		t.Fatalf("NextN(0) = %v, %v", ids, err)
	}
	for _, n := range []int{-1, client.MaxN + 1} {
		if _, err := c.NextN(ctx, "orders", n); !errors.Is(err, client.ErrInvalidCount) {
			t.Errorf("NextN(%d): %v, want ErrInvalidCount", n, err)
		}
	}
}

// TestConcurrentUnique takes ids from three clients of two servers in
// many goroutines, with small ranges cut short by the servers, so that
// switches, waits and prefetches race.
func TestConcurrentUnique(t *testing.T) {
	ids := newFakeIDs("orders", "users")
	a, b := newFake(t, ids), newFake(t, ids)
	a.maxRange.Store(37)
	const clients, workers, each = 3, 6, 5000
	var mu sync.Mutex
	all := map[string][]int64{}
	var wg sync.WaitGroup
	for range clients {
		c := newClient(t, client.Config{Endpoints: []string{a.URL(), b.URL()}, MinRange: 1, MaxRange: 64})
		for w := range workers {
			wg.Go(func() {
				tag := []string{"orders", "users"}[w%2]
				got := make([]int64, 0, each)
				for i := 0; len(got) < each; i++ {
					if i%7 == 0 {
						ids, err := c.NextN(context.Background(), tag, 5)
						if err != nil {
							t.Error(err)
							return
						}
						got = append(got, ids...)
						continue
					}
					id, err := c.Next(context.Background(), tag)
					if err != nil {
						t.Error(err)
						return
					}
					got = append(got, id)
				}
				mu.Lock()
				all[tag] = append(all[tag], got...)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	for _, ids := range all {
		checkUnique(t, ids)
	}
}

func TestUnknownTagIsNotFailedOver(t *testing.T) {
	ids := newFakeIDs()
	a, b := newFake(t, ids), newFake(t, ids)
	c := newClient(t, client.Config{Endpoints: []string{a.URL(), b.URL()}})
	for i := 1; i <= 3; i++ {
		_, err := c.Next(context.Background(), "nope")
		if !errors.Is(err, client.ErrUnknownTag) || errors.Is(err, client.ErrUnavailable) {
			t.Fatalf("Next: %v, want ErrUnknownTag only", err)
		}
		var e *client.Error
		if !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Code != "unknown_tag" ||
			(e.Endpoint != a.URL() && e.Endpoint != b.URL()) || !strings.Contains(e.Message, "nope") {
			t.Fatalf("Next: %#v", e)
		}
		// One request per call: a 404 is the answer of every server,
		// and the tag is not remembered.
		if n := a.requests.Load() + b.requests.Load(); n != int64(i) {
			t.Fatalf("%d requests after %d calls", n, i)
		}
	}
	// The tag created meanwhile is served at once.
	ids.mu.Lock()
	ids.next["nope"] = 7
	ids.mu.Unlock()
	if id, err := c.Next(context.Background(), "nope"); err != nil || id != 7 {
		t.Fatalf("Next after the tag was created = %d, %v", id, err)
	}
}

func TestErrorAnswers(t *testing.T) {
	tests := []struct {
		status   int
		code     string
		want     error
		failover bool
	}{
		{400, "invalid_tag", client.ErrInvalidTag, false},
		{400, "invalid_count", client.ErrInvalidCount, false},
		{400, "invalid_request", client.ErrInvalidRequest, false},
		{401, "unauthorized", client.ErrUnauthorized, false},
		{404, "unknown_tag", client.ErrUnknownTag, false},
		{404, "not_found", client.ErrNotFound, false},
		{405, "method_not_allowed", client.ErrMethodNotAllowed, false},
		{410, "tag_exhausted", client.ErrExhausted, false},
		{500, "tag_misconfigured", client.ErrMisconfigured, false},
		{500, "internal", client.ErrInternal, true},
		{503, "unavailable", client.ErrUnavailable, true},
		{502, "", client.ErrUnavailable, true}, // a proxy's own answer
		{429, "", client.ErrUnavailable, true},
		{418, "", client.ErrInvalidRequest, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.status, tt.code), func(t *testing.T) {
			ids := newFakeIDs("orders")
			bad, good := newFake(t, ids), newFake(t, ids)
			bad.failWith(tt.status, tt.code)
			// The failing server first: with a fresh client the
			// rotation starts at the second endpoint.
			c := newClient(t, client.Config{Endpoints: []string{good.URL(), bad.URL()}})
			id, err := c.Next(context.Background(), "orders")
			if tt.failover {
				if err != nil || id != 1 {
					t.Fatalf("Next = %d, %v; want 1 from the other server", id, err)
				}
				if bad.requests.Load() != 1 {
					t.Fatalf("the failing server had %d requests, want 1", bad.requests.Load())
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Next: %v, want %v", err, tt.want)
			}
			var e *client.Error
			if !errors.As(err, &e) || e.Status != tt.status || e.Code != tt.code || e.Endpoint != bad.URL() {
				t.Fatalf("Next: %#v", e)
			}
			if good.requests.Load() != 0 {
				t.Fatalf("failed over to the other server on a %d", tt.status)
			}
		})
	}
}

func TestMalformedAnswers(t *testing.T) {
	tests := []struct{ name, body string }{
		{"not json", `<html>`},
		{"other tag", `{"tag":"users","start":"1","count":10}`},
		{"no ids", `{"tag":"orders","start":"1","count":0}`},
		{"more than asked", `{"tag":"orders","start":"1","count":1000001}`},
		{"start not a number", `{"tag":"orders","start":"x","count":10}`},
		{"start zero", `{"tag":"orders","start":"0","count":10}`},
		{"past int64", `{"tag":"orders","start":"9223372036854775800","count":10}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, client.Config{Endpoints: []string{srv.URL}})
			_, err := c.Next(context.Background(), "orders")
			if !errors.Is(err, client.ErrUnavailable) || !errors.Is(err, client.ErrInternal) || !strings.Contains(err.Error(), "malformed answer") {
				t.Fatalf("Next: %v, want ErrUnavailable and ErrInternal for a malformed answer", err)
			}
		})
	}
}

func TestFailover(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		good := newFake(t, newFakeIDs("orders"))
		c := newClient(t, client.Config{Endpoints: []string{deadURL(t), good.URL()}, MinRange: 10, MaxRange: 10})
		for i := range 200 {
			if _, err := c.Next(context.Background(), "orders"); err != nil {
				t.Fatalf("Next #%d: %v", i, err)
			}
		}
	})
	t.Run("no answer within RequestTimeout", func(t *testing.T) {
		ids := newFakeIDs("orders")
		slow, good := newFake(t, ids), newFake(t, ids)
		slow.hang = make(chan struct{})
		t.Cleanup(func() { close(slow.hang) })
		c := newClient(t, client.Config{Endpoints: []string{good.URL(), slow.URL()}, RequestTimeout: 50 * time.Millisecond})
		start := time.Now()
		if _, err := c.Next(context.Background(), "orders"); err != nil {
			t.Fatalf("Next: %v", err)
		}
		if took := time.Since(start); took < 50*time.Millisecond {
			t.Fatalf("Next took %v: the slow server was not asked first", took)
		}
		if slow.requests.Load() != 1 {
			t.Fatalf("slow server: %d requests", slow.requests.Load())
		}
	})
}

func TestContextEndsWhileWaiting(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	f.hang = make(chan struct{})
	t.Cleanup(func() { close(f.hang) })
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, RequestTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Next(ctx, "orders")
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("Next: %v, want DeadlineExceeded", err)
	}
}

func TestRequestTimeout(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	f.hang = make(chan struct{})
	t.Cleanup(func() { close(f.hang) })
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, RequestTimeout: 30 * time.Millisecond})
	_, err := c.Next(context.Background(), "orders")
	// The endpoint's failure, not the caller's deadline.
	if !errors.Is(err, client.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "no answer within 30ms (RequestTimeout)") {
		t.Fatalf("Next: %v", err)
	}
}

// TestEveryEndpointDown: the buffered ids are handed out, then a clear
// error; service resumes when a server answers again.
func TestEveryEndpointDown(t *testing.T) {
	ids := newFakeIDs("orders")
	a, b := newFake(t, ids), newFake(t, ids)
	c := newClient(t, client.Config{
		Endpoints: []string{a.URL(), b.URL()},
		MinRange:  1000, MaxRange: 1000,
		BackoffMin: time.Millisecond, BackoffMax: 20 * time.Millisecond,
	})
	ctx := context.Background()
	for range 300 { // past a quarter: the second range is fetched
		if _, err := c.Next(ctx, "orders"); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, 10*time.Second, "the second range", func() bool { return a.ranges.Load()+b.ranges.Load() == 2 })
	a.failWith(http.StatusServiceUnavailable, "unavailable")
	b.failWith(http.StatusServiceUnavailable, "unavailable")

	served := 0
	var err error
	for ; served < 5000; served++ {
		if _, err = c.Next(ctx, "orders"); err != nil {
			break
		}
	}
	if served != 1700 {
		t.Fatalf("%d ids served from the buffers, want 700 + 1000", served)
	}
	if !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("Next: %v, want ErrUnavailable", err)
	}
	for _, u := range []string{a.URL(), b.URL()} {
		if !strings.Contains(err.Error(), u+": 503 unavailable: injected") {
			t.Errorf("the error does not give %s's last error: %v", u, err)
		}
	}
	t.Logf("the error: %v", err)

	a.failWith(0, "")
	testkit.WaitFor(t, 10*time.Second, "service to resume", func() bool {
		_, err := c.Next(ctx, "orders")
		return err == nil
	})
}

func TestClosed(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	c, err := client.New(client.Config{Endpoints: []string{f.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Next(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if _, err := c.Next(ctx, "orders"); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if _, err := c.Next(ctx, "other"); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Next of a new tag after Close: %v", err)
	}
	if _, err := c.NextN(ctx, "orders", 3); !errors.Is(err, client.ErrClosed) {
		t.Errorf("NextN after Close: %v", err)
	}
	if _, err := c.Snowflake(ctx); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Snowflake after Close: %v", err)
	}
}

// TestNoGoroutineOutlivesClose closes clients with goroutines in every
// state: a load retrying after failures, a load stuck in a request with a
// caller waiting for it, idle connections.
func TestNoGoroutineOutlivesClose(t *testing.T) {
	ids := newFakeIDs("orders", "users")
	failing, stuck := newFake(t, ids), newFake(t, ids)
	stuck.hang = make(chan struct{})
	t.Cleanup(func() { close(stuck.hang) })
	before := runtime.NumGoroutine()

	retrying, err := client.New(client.Config{Endpoints: []string{failing.URL()}, MinRange: 100, MaxRange: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := retrying.Next(ctx, "users"); err != nil {
		t.Fatal(err)
	}
	if _, err := retrying.Snowflake(ctx); err != nil {
		t.Fatal(err)
	}
	failing.failWith(http.StatusServiceUnavailable, "unavailable")
	for range 40 { // the prefetch fails: the load retries in the background
		if _, err := retrying.Next(ctx, "users"); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, 10*time.Second, "a failed prefetch", func() bool { return failing.requests.Load() >= 3 })

	waiting, err := client.New(client.Config{Endpoints: []string{stuck.URL()}, RequestTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 2)
	go func() { _, err := waiting.Next(ctx, "orders"); got <- err }()
	go func() { _, err := waiting.Snowflake(ctx); got <- err }()
	testkit.WaitFor(t, 10*time.Second, "requests to hang", func() bool { return stuck.requests.Load() == 2 })

	start := time.Now()
	for _, c := range []*client.Client{retrying, waiting} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close took %v", took)
	}
	for range 2 {
		if err := <-got; !errors.Is(err, client.ErrClosed) {
			t.Errorf("a caller waiting through Close got %v, want ErrClosed", err)
		}
	}
	// Right after Close, no goroutine runs the package's code: Close
	// waited for each to say it is done, which it does as it returns, so
	// one may still be leaving its last line; within a second none is.
	deadline := time.Now().Add(time.Second)
	for stacks := clientStacks(); stacks != ""; stacks = clientStacks() {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the client a second after Close:\n%s", stacks)
		}
		time.Sleep(time.Millisecond)
	}
	// ...and the connections' goroutines end with the connections.
	testkit.WaitFor(t, 10*time.Second, "the goroutine count to return", func() bool { return runtime.NumGoroutine() <= before })
}

// clientStacks returns the stacks of the goroutines that are in the
// package's code (not its tests).
func clientStacks() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/leafid/leaf/client.") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

func TestSnowflake(t *testing.T) {
	f := newFake(t, newFakeIDs())
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, SnowflakeBatch: 10})
	var ids []int64
	for range 1000 {
		id, err := c.Snowflake(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if !slices.IsSorted(ids) {
		t.Error("one client of one server: ids out of order")
	}
	checkUnique(t, ids)
	if n := f.requests.Load(); n < 100 || n > 110 {
		t.Errorf("%d requests for 1000 ids in batches of 10", n)
	}
}

func TestSnowflakeMaxAge(t *testing.T) {
	f := newFake(t, newFakeIDs())
	c, err := client.New(client.Config{Endpoints: []string{f.URL()}, SnowflakeBatch: 100, SnowflakeMaxAge: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clock := testkit.NewClock(time.Unix(1e9, 0), 0)
	client.SetNow(c, clock.Now)
	ctx := context.Background()

	first, err := c.Snowflake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(400 * time.Millisecond)
	if id, err := c.Snowflake(ctx); err != nil || id != first+1 {
		t.Fatalf("Snowflake = %d, %v; want %d from the same batch", id, err, first+1)
	}
	if f.requests.Load() != 1 {
		t.Fatalf("%d requests", f.requests.Load())
	}
	// Past the age bound the rest of the batch is dropped: the next id
	// comes from a new batch.
	clock.Add(601 * time.Millisecond)
	id, err := c.Snowflake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id != first+100 {
		t.Fatalf("Snowflake = %d, want %d, the first of the next batch", id, first+100)
	}
	// Half the age: the next batch is fetched ahead, and used once
	// this one is too old.
	clock.Add(501 * time.Millisecond)
	if id, err := c.Snowflake(ctx); err != nil || id != first+101 {
		t.Fatalf("Snowflake = %d, %v", id, err)
	}
	testkit.WaitFor(t, 10*time.Second, "the prefetch", func() bool { return f.requests.Load() == 3 })
	clock.Add(500 * time.Millisecond)
	if id, err := c.Snowflake(ctx); err != nil || id != first+200 {
		t.Fatalf("Snowflake = %d, %v; want %d from the prefetched batch", id, err, first+200)
	}
	if f.requests.Load() != 3 {
		t.Fatalf("%d requests", f.requests.Load())
	}
}

func TestRangeSizes(t *testing.T) {
	type step = client.PlanStep
	cfg := client.Config{Endpoints: []string{"http://127.0.0.1:1"}, MinRange: 100, MaxRange: 100_000}
	tests := []struct {
		name  string
		steps []step
		want  []int64
	}{
		{"steady: about one request per second", []step{
			{Take: 100, After: time.Second}, {Take: 100, After: time.Second},
		}, []int64{100, 100, 100}},
		{"faster traffic grows at most 4x a step", []step{
			{Take: 3000, After: time.Second}, {Take: 3000, After: time.Second}, {Take: 3000, After: time.Second},
		}, []int64{100, 400, 1600, 3000}},
		{"a burst of microseconds", []step{
			{Take: 50, After: time.Microsecond},
		}, []int64{100, 400}},
		{"a lull shrinks, down to MinRange", []step{
			{Take: 3000, After: time.Second}, {Take: 3000, After: time.Second},
			{Take: 1, After: time.Minute}, {Take: 1, After: time.Minute}, {Take: 1, After: time.Minute},
		}, []int64{100, 400, 1600, 400, 100, 100}},
		{"a caller that waited doubles it", []step{
			{Take: 100, After: time.Second, Waited: true}, {Take: 10, After: time.Second, Waited: true},
		}, []int64{100, 200, 400}},
		{"up to MaxRange", []step{
			{Take: 1e6, After: time.Second}, {Take: 1e6, After: time.Second}, {Take: 1e6, After: time.Second},
			{Take: 1e6, After: time.Second}, {Take: 1e6, After: time.Second},
		}, []int64{100, 400, 1600, 6400, 25600, 100_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := client.PlanSizes(cfg, tt.steps)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("sizes %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRangesFollowTraffic(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	// Ranges are sized to last RefillInterval at the rate measured: 30 s
	// of this loop's rate is above MaxRange on any machine that runs it
	// at 34,000 ids a second or more, however loaded, so the sizes it
	// reaches do not depend on the machine's speed.
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, RefillInterval: 30 * time.Second})
	ctx := context.Background()
	// A burst far above MinRange a second: the sizes asked for grow to
	// the maximum within a few requests rather than a request per 100
	// ids.
	for range 1_500_000 {
		if _, err := c.Next(ctx, "orders"); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := f.asked.Load(client.MaxRange); !ok {
		t.Errorf("never asked for %d ids", client.MaxRange)
	}
	if n := f.ranges.Load(); n > 20 {
		t.Errorf("%d range requests for 1,500,000 ids", n)
	}
}

// TestManyTags: each of many tags has its own numbering, including tags
// that share a length and their first and last eight bytes, short tags,
// and multi-byte characters.
func TestManyTags(t *testing.T) {
	tags := []string{"a", "b", "aa", "aaa", "ab", "abb", "ba", "abc", "acb", "cba", "abcd", "abdc", "orders", "订单", "订单:v2"}
	for i := range 40 {
		tags = append(tags, fmt.Sprintf("prefix-%d", i), strings.Repeat("t", i+1))
		tags = append(tags, "same-first8|"+fmt.Sprintf("%03d", i)+"|same-last8", "0123456789abcdef"[:i%16+1]+"x")
	}
	slices.Sort(tags)
	tags = slices.Compact(tags)
	f := newFake(t, newFakeIDs(tags...))
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}})
	ctx := context.Background()
	for round := int64(1); round <= 3; round++ {
		for _, tag := range tags {
			id, err := c.Next(ctx, tag)
			if err != nil || id != round {
				t.Fatalf("Next(%q) = %d, %v; want %d", tag, id, err, round)
			}
		}
	}
	for _, tag := range tags {
		ids, err := c.NextN(ctx, tag, 2)
		if err != nil || !slices.Equal(ids, []int64{4, 5}) {
			t.Fatalf("NextN(%q) = %v, %v", tag, ids, err)
		}
	}
}
