package client_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
)

// TestSourceBlocks: a Source reserves blocks of 1, 2, 4, … consecutive
// ids, one after the other, and Client.Next takes the ids after them: a
// Source's ids increase, but it hands out ids below those Client.Next
// handed out before.
func TestSourceBlocks(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, MinRange: 100_000, MaxRange: 100_000})
	ctx := context.Background()
	src := c.Source("orders")
	steps := []struct {
		name string
		next func(context.Context) (int64, error)
		want int64
	}{
		{"Source", src.Next, 1}, // the block [1]
		{"Next", nextOf(c, "orders"), 2},
		{"Source", src.Next, 3}, // the block [3, 4]
		{"Next", nextOf(c, "orders"), 5},
		{"Source", src.Next, 4},
		{"Source", src.Next, 6}, // the block [6, 9]
		{"Next", nextOf(c, "orders"), 10},
		{"Source", src.Next, 7},
	}
	for i, s := range steps {
		if id, err := s.next(ctx); err != nil || id != s.want {
			t.Fatalf("step %d: %s = %d, %v; want %d", i, s.name, id, err, s.want)
		}
	}
}

func nextOf(c *client.Client, tag string) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) { return c.Next(ctx, tag) }
}

// TestSourceAlone: one Source of the only client of a server gets every
// id of the tag in order, through many ranges, small ones cut short
// included, and the blocks of their ends.
func TestSourceAlone(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	f.maxRange.Store(700)
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}})
	src := c.Source("orders")
	for want := int64(1); want <= 50_000; want++ {
		id, err := src.Next(context.Background())
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if id != want {
			t.Fatalf("Next = %d, want %d", id, want)
		}
	}
	if n := f.ranges.Load(); n < 50_000/700 {
		t.Fatalf("%d range requests: the ranges were not cut to 700", n)
	}
}

// TestSourceUnique takes ids from three clients of two servers in many
// goroutines, most through a Source of their own and some through
// Client.Next and NextN, with small ranges cut short by the servers, so
// that blocks, switches, waits and prefetches race. Every id is unique,
// and each goroutine's ids increase (the servers share one counter, as
// servers of one database do, so a later range is higher).
func TestSourceUnique(t *testing.T) {
	ids := newFakeIDs("orders")
	a, b := newFake(t, ids), newFake(t, ids)
	a.maxRange.Store(37)
	const clients, workers, each = 3, 8, 20_000
	got := make([][]int64, clients*workers)
	var wg sync.WaitGroup
	for ci := range clients {
		c := newClient(t, client.Config{Endpoints: []string{a.URL(), b.URL()}, MinRange: 1, MaxRange: 5000})
		for w := range workers {
			wg.Go(func() {
				ctx := context.Background()
				src := c.Source("orders")
				mine := make([]int64, 0, each)
				for len(mine) < each {
					switch {
					case w == 0:
						id, err := c.Next(ctx, "orders")
						if err != nil {
							t.Error(err)
							return
						}
						mine = append(mine, id)
					case w == 1:
						batch, err := c.NextN(ctx, "orders", min(13, each-len(mine)))
						if err != nil {
							t.Error(err)
							return
						}
						mine = append(mine, batch...)
					default:
						id, err := src.Next(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						mine = append(mine, id)
					}
				}
				got[ci*workers+w] = mine
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var all []int64
	for g, mine := range got {
		for i := 1; i < len(mine); i++ {
			if mine[i] <= mine[i-1] {
				t.Fatalf("goroutine %d: id %d after %d", g, mine[i], mine[i-1])
			}
		}
		all = append(all, mine...)
	}
	checkUnique(t, all)
	t.Logf("%d ids, %d + %d range requests", len(all), a.ranges.Load(), b.ranges.Load())
}

func TestSourceErrors(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}})
	ctx := context.Background()
	if _, err := c.Source("nope").Next(ctx); !errors.Is(err, client.ErrUnknownTag) {
		t.Errorf("Next of an unknown tag: %v, want ErrUnknownTag", err)
	}
	if _, err := c.Source("").Next(ctx); !errors.Is(err, client.ErrInvalidTag) {
		t.Errorf("Next of an empty tag: %v, want ErrInvalidTag", err)
	}

	hung := newFake(t, newFakeIDs("orders"))
	hung.hang = make(chan struct{})
	t.Cleanup(func() { close(hung.hang) })
	c = newClient(t, client.Config{Endpoints: []string{hung.URL()}, RequestTimeout: time.Minute})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Source("orders").Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next waiting for a server that does not answer: %v, want DeadlineExceeded", err)
	}
}

// TestSourceAtTheInt64Maximum: a range may end at the int64 maximum; the
// Source hands out its last id and then an error, never a wrapped id.
func TestSourceAtTheInt64Maximum(t *testing.T) {
	ids := newFakeIDs("orders")
	ids.next["orders"] = math.MaxInt64 - 99
	f := newFake(t, ids)
	f.maxRange.Store(100) // the range [max-99, max]; the next is malformed
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, MinRange: 100, MaxRange: 100})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	src := c.Source("orders")
	for want := int64(math.MaxInt64 - 99); ; want++ {
		id, err := src.Next(ctx)
		if err != nil || id != want {
			t.Fatalf("Next = %d, %v; want %d", id, err, want)
		}
		if want == math.MaxInt64 {
			break
		}
	}
	if id, err := src.Next(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next past the int64 maximum = %d, %v; want the servers' error", id, err)
	} else {
		t.Logf("past the maximum: %v", err)
	}
}

// TestSourceClosed: after Close a Source returns ErrClosed, although its
// block has ids left.
func TestSourceClosed(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	c, err := client.New(client.Config{Endpoints: []string{f.URL()}, MinRange: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := c.Source("orders")
	for range 10 { // blocks of 1, 2, 4 and 8 ids: 5 are left
		if _, err := src.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if id, err := src.Next(ctx); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("Source.Next after Close = %d, %v; want ErrClosed", id, err)
	}
	if _, err := c.Source("orders").Next(ctx); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("a new Source's Next after Close: %v, want ErrClosed", err)
	}
}

func TestSourceAllocatesNothing(t *testing.T) {
	f := newFake(t, newFakeIDs("orders"))
	c := newClient(t, client.Config{Endpoints: []string{f.URL()}, MinRange: client.MaxRange})
	ctx := context.Background()
	src := c.Source("orders")
	if _, err := src.Next(ctx); err != nil {
		t.Fatal(err)
	}
	// 10,000 ids: blocks growing to their largest, no prefetch.
	if n := testing.AllocsPerRun(10_000, func() { _, _ = src.Next(ctx) }); n != 0 {
		t.Fatalf("%v allocations per id", n)
	}
}
