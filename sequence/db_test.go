package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// cluster is several Sequencers, each on its own connection pool, on one
// database; the test runs their rounds.
type cluster struct {
	stores []*store.Store
	seqs   []*sequence.Sequencer
	byAddr map[string]*sequence.Sequencer
}

func newCluster(t *testing.T, dialect, dsn string, n int) *cluster {
	t.Helper()
	c := &cluster{byAddr: map[string]*sequence.Sequencer{}}
	for i := range n {
		st := storetest.Open(t, dialect, dsn)
		addr := fmt.Sprintf("instance-%d:8080", i)
		q, err := sequence.New(sequence.Options{Store: st, Addr: addr, Lease: time.Minute, Interval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(context.Background()) })
		c.stores, c.seqs = append(c.stores, st), append(c.seqs, q)
		c.byAddr[addr] = q
	}
	return c
}

// rounds runs three rounds of every live member: to join, to hand over
// and take, and to learn who took what.
func (c *cluster) rounds(t *testing.T, live ...int) {
	t.Helper()
	for range 3 {
		for _, i := range live {
			if err := c.seqs[i].Round(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// next asks instance i, and follows a NotOwnerError once, as the HTTP
// edge forwards.
func (c *cluster) next(ctx context.Context, i int, space, key string, n int) (int64, error) {
	v, err := c.seqs[i].NextN(ctx, space, key, n)
	var no *sequence.NotOwnerError
	if errors.As(err, &no) {
		return c.byAddr[no.Addr].NextN(ctx, space, key, n)
	}
	return v, err
}

// TestInstancesOnOneDatabase: three instances share the sections of a
// space, callers on every instance take numbers of shared keys at once,
// an instance dies and another joins between two bursts: per key no
// number is given twice, and each caller's numbers of a key strictly
// increase.
func TestInstancesOnOneDatabase(t *testing.T) {
	for _, tc := range []struct {
		dialect string
		dsn     func(testing.TB) string
		per     int
	}{
		{store.MySQL, storetest.MySQL, 1500},
		{store.SQLite, storetest.SQLite, 500},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			c := newCluster(t, tc.dialect, tc.dsn(t), 4)
			ctx := context.Background()
			if _, err := c.stores[0].CreateSpace(ctx, sequence.Space{Name: "inbox", Step: 50, Sections: 16}); err != nil {
				t.Fatal(err)
			}
			c.rounds(t, 0, 1, 2)
			owned := 0
			for _, q := range c.seqs[:3] {
				n := q.Stats().SectionsOwned
				if n == 0 {
					t.Fatalf("an instance owns no section: %+v", q.Stats())
				}
				owned += n
			}
			if owned != 16 {
				t.Fatalf("%d sections owned, want 16", owned)
			}

			const workers = 6
			got := make([]map[string][]int64, workers)
			for w := range got {
				got[w] = map[string][]int64{}
			}
			burst := func(live []int) {
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						for i := range tc.per {
							key := fmt.Sprintf("user-%d", (i*7+w)%40)
							n := 1 + i%2
							first, err := c.next(ctx, live[(i+w)%len(live)], "inbox", key, n)
							if err != nil {
								t.Error(err)
								return
							}
							for j := range n {
								got[w][key] = append(got[w][key], first+int64(j))
							}
						}
					})
				}
				wg.Wait()
			}
			burst([]int{0, 1, 2})

			// Instance 2 dies; 3 joins. Once 2's leases ran out, 0, 1
			// and 3 serve every section.
			c.seqs[2].Abandon()
			storetest.ExpireMember(t, c.stores[0], c.seqs[2].ID())
			c.rounds(t, 0, 1, 3)
			owned = 0
			for _, i := range []int{0, 1, 3} {
				owned += c.seqs[i].Stats().SectionsOwned
			}
			if owned != 16 {
				t.Fatalf("%d sections owned after the move, want 16", owned)
			}
			burst([]int{0, 1, 3})
			checkSequences(t, got)
		})
	}
}
