package segment_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// slowClock advances an hour at every reading, so that every segment seems
// to have lasted long and the step stays near the row's: many loads. (A
// load seems to take an hour too, so the ramp-up's floor, holdStep, lifts
// some steps a little above the row's.)
func slowClock() func() time.Time {
	var hours atomic.Int64
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(hours.Add(1)) * time.Hour) }
}

// TestInstancesSharingADatabaseNeverRepeat runs three allocators, each on
// its own connection pool, against one real database, with a step small
// enough to force thousands of loads, and checks every id issued.
func TestInstancesSharingADatabaseNeverRepeat(t *testing.T) {
	tests := []struct {
		name       string
		dialect    string
		dsn        func(testing.TB) string
		goroutines int // per instance
		each       int // ids per goroutine
	}{
		{"mysql", store.MySQL, storetest.MySQL, 4, 17_000},   // 204,000 ids
		{"sqlite", store.SQLite, storetest.SQLite, 2, 5_000}, // 30,000 ids
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const instances, step = 3, 100
			dsn := tt.dsn(t)
			var allocs []*segment.Allocator
			for i := range instances {
				st := storetest.Open(t, tt.dialect, dsn)
				if i == 0 {
					if _, err := st.CreateTag(context.Background(), segment.Tag{Name: "shared", MaxID: 1, Step: step}); err != nil {
						t.Fatal(err)
					}
				}
				a := segment.New(st, segment.Options{Now: slowClock(), RefreshInterval: -1, LoadTimeout: 30 * time.Second})
				t.Cleanup(func() { _ = a.Close() })
				allocs = append(allocs, a)
			}

			got := issueConcurrently(t, func(g int) *segment.Allocator { return allocs[g%instances] },
				"shared", instances*tt.goroutines, tt.each, 3, 250)
			n := checkUnique(t, got)
			var loads uint64
			for _, a := range allocs {
				loads += state(t, a, "shared").Loads
			}
			if want := uint64(n / (2 * step)); loads < want {
				t.Fatalf("%d loads for %d ids: the step grew, the test does not force loads", loads, n)
			}
			t.Logf("%d distinct ids from %d instances, %d loads, no duplicate", n, instances, loads)
		})
	}
}

// TestManyTagsSharingADatabaseNeverRepeat runs three allocators on one
// real database with many tags asked for at once, so that first loads go
// in batches (store.AllocateBatch) beside the single loads of tags that
// run out, and checks every id of every tag.
func TestManyTagsSharingADatabaseNeverRepeat(t *testing.T) {
	for _, b := range []struct {
		dialect string
		dsn     func(testing.TB) string
	}{{store.MySQL, storetest.MySQL}, {store.SQLite, storetest.SQLite}} {
		t.Run(b.dialect, func(t *testing.T) {
			const instances, goroutines, tags, each = 3, 8, 400, 300
			dsn := b.dsn(t)
			var allocs []*segment.Allocator
			for i := range instances {
				st := storetest.Open(t, b.dialect, dsn)
				if i == 0 {
					rows := make([]string, tags)
					for k := range rows {
						rows[k] = fmt.Sprintf("('tag-%d', 1, 5)", k)
					}
					if _, err := st.DB().ExecContext(context.Background(),
						"INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES "+strings.Join(rows, ",")); err != nil {
						t.Fatal(err)
					}
				}
				a := segment.New(st, segment.Options{Now: slowClock(), RefreshInterval: -1, LoadTimeout: 30 * time.Second})
				t.Cleanup(func() { _ = a.Close() })
				allocs = append(allocs, a)
			}
			var (
				mu  sync.Mutex
				ids = map[string]map[int64]bool{}
				wg  sync.WaitGroup
			)
			for g := range instances * goroutines {
				a := allocs[g%instances]
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 2))
					for range each {
						tag := fmt.Sprintf("tag-%d", r.IntN(tags))
						got, err := a.NextN(context.Background(), tag, 1+r.IntN(4))
						if err != nil {
							t.Errorf("NextN(%q): %v", tag, err)
							return
						}
						mu.Lock()
						if ids[tag] == nil {
							ids[tag] = map[int64]bool{}
						}
						for _, id := range got {
							if ids[tag][id] {
								t.Errorf("%q: id %d issued twice", tag, id)
							}
							ids[tag][id] = true
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			n := 0
			for _, m := range ids {
				n += len(m)
			}
			t.Logf("%d distinct ids of %d tags from %d instances", n, len(ids), instances)
		})
	}
}

// leafDDL is the leaf_alloc table exactly as Meituan Leaf's README creates it.
const leafDDL = "CREATE TABLE `leaf_alloc` (" +
	"`biz_tag` varchar(128)  NOT NULL DEFAULT ''," +
	"`max_id` bigint(20) NOT NULL DEFAULT '1'," +
	"`step` int(11) NOT NULL," +
	"`description` varchar(256)  DEFAULT NULL," +
	"`update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP," +
	"PRIMARY KEY (`biz_tag`)" +
	") ENGINE=InnoDB"

// TestContinuesAnExistingLeafDatabase points the service at a database that
// Java Leaf has been using: its ids continue above where Leaf stopped.
func TestContinuesAnExistingLeafDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	st, err := store.OpenMySQL(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, q := range []string{leafDDL,
		"INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('leaf-segment-test', 5000000, 2000, 'Test leaf Segment Mode Get Id')"} {
		if _, err := st.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrations on an existing Leaf database: %v", err)
	}
	a := newAllocator(t, st, newClock())
	ids, err := a.NextN(ctx, "leaf-segment-test", 5000) // spans three segments
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if id != 5_000_000+int64(i) {
			t.Fatalf("id %d = %d, want %d: ids must continue at Leaf's max_id", i, id, 5_000_000+int64(i))
		}
	}
}
