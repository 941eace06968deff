package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// testJump is the jump of the tests: small, so that the ranges after it
// are easy to read.
const testJump = 1_000_000

func TestPlanRestart(t *testing.T) {
	r := func(node string, started int64, durable bool) store.StartReading {
		return store.StartReading{Node: node, Started: started, Durable: durable}
	}
	tests := []struct {
		name     string
		record   map[string][2]int64 // node -> started, durable
		readings []store.StartReading
		runs     map[string][2]string // node -> the recorded run id, the read one
		write    []string
		jump     bool
	}{
		{name: "first sight, durable", readings: []store.StartReading{r("a", 100, true)}, write: []string{"a"}},
		{name: "first sight, can forget", readings: []store.StartReading{r("a", 100, false)}, write: []string{"a"}, jump: true},
		{name: "same start", record: map[string][2]int64{"a": {100, 0}}, readings: []store.StartReading{r("a", 101, false)}},
		{name: "same start, within the tolerance", record: map[string][2]int64{"a": {100, 0}}, readings: []store.StartReading{r("a", 98, false)}},
		{name: "restarted, durable then and now", record: map[string][2]int64{"a": {100, 1}},
			readings: []store.StartReading{r("a", 200, true)}, write: []string{"a"}},
		{name: "restarted, could forget before", record: map[string][2]int64{"a": {100, 0}},
			readings: []store.StartReading{r("a", 200, true)}, write: []string{"a"}, jump: true},
		{name: "restarted, can forget now", record: map[string][2]int64{"a": {100, 1}},
			readings: []store.StartReading{r("a", 200, false)}, write: []string{"a"}, jump: true},
		{name: "settings changed, no restart", record: map[string][2]int64{"a": {100, 0}},
			readings: []store.StartReading{r("a", 100, true)}, write: []string{"a"}},
		{name: "a node never seen beside one that could forget", record: map[string][2]int64{"a": {100, 0}},
			readings: []store.StartReading{r("c", 300, true)}, write: []string{"c"}, jump: true},
		{name: "a node never seen beside durable ones", record: map[string][2]int64{"a": {100, 1}},
			readings: []store.StartReading{r("a", 100, true), r("c", 300, true)}, write: []string{"c"}},
		{name: "restarted within the tolerance: another run", record: map[string][2]int64{"a": {100, 0}},
			readings: []store.StartReading{r("a", 101, false)}, runs: map[string][2]string{"a": {"run1", "run2"}},
			write: []string{"a"}, jump: true},
		{name: "same run, its start read a second apart", record: map[string][2]int64{"a": {100, 0}},
			readings: []store.StartReading{r("a", 101, false)}, runs: map[string][2]string{"a": {"run1", "run1"}}},
		{name: "same run, its start moved by a clock step", record: map[string][2]int64{"a": {100, 0}},
			readings: []store.StartReading{r("a", 160, false)}, runs: map[string][2]string{"a": {"run1", "run1"}}},
		{name: "a run id first read: recorded, no jump", record: map[string][2]int64{"a": {100, 0}},
			readings: []store.StartReading{r("a", 100, false)}, runs: map[string][2]string{"a": {"", "run1"}}, write: []string{"a"}},
		{name: "a run id first read after a restart", record: map[string][2]int64{"a": {100, 0}},
			readings: []store.StartReading{r("a", 200, false)}, runs: map[string][2]string{"a": {"", "run1"}}, write: []string{"a"}, jump: true},
		{name: "every node of a cluster restarted", record: map[string][2]int64{"a": {100, 0}, "b": {100, 0}, "c": {100, 0}},
			readings: []store.StartReading{r("a", 500, false), r("b", 510, false), r("c", 520, false)},
			write:    []string{"a", "b", "c"}, jump: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write, jump := store.PlanRestart(tt.record, tt.readings, tt.runs)
			if !slices.Equal(write, tt.write) || jump != tt.jump {
				t.Errorf("PlanRestart = %q, jump %v; want %q, jump %v", write, jump, tt.write, tt.jump)
			}
		})
	}
}

// restartStores opens n stores with the check of the database's start on
// one database of dialect (migrated), each counting the jumps it made.
func restartStores(t *testing.T, dialect string, n int, sqliteSync string) ([]*store.Store, *atomic.Int64, string) {
	t.Helper()
	dsn := storetest.SQLite(t)
	if dialect == store.MySQL {
		dsn = storetest.MySQL(t)
	}
	setup := storetest.Open(t, dialect, dsn)
	if _, err := setup.CreateTag(context.Background(), segment.Tag{Name: "t", Step: 10, MaxID: 1}); err != nil {
		t.Fatal(err)
	}
	var jumps atomic.Int64
	out := make([]*store.Store, n)
	for i := range out {
		out[i] = openRestartStore(t, dialect, dsn, sqliteSync, &jumps)
	}
	return out, &jumps, dsn
}

func openRestartStore(t *testing.T, dialect, dsn, sqliteSync string, jumps *atomic.Int64) *store.Store {
	t.Helper()
	ctx := context.Background()
	opts := store.Options{RestartJump: testJump, OnRestartJump: func(j store.RestartJump) {
		jumps.Add(1)
		t.Logf("jump: %+v", j)
	}}
	var (
		s   *store.Store
		err error
	)
	if dialect == store.MySQL {
		s, err = store.OpenMySQL(ctx, dsn, opts)
	} else {
		s, err = store.OpenSQLiteSynchronous(ctx, dsn, opts, sqliteSync)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// restartAll makes every store see the database started again an hour
// later, durable or not. A MySQL store keeps running, its connections
// dropped as a restart breaks them; a SQLite file's "start" is the boot of
// its machine, which leaf does not outlive: each store is opened again.
func restartAll(t *testing.T, dialect, dsn, sqliteSync string, ss []*store.Store, durable bool, jumps *atomic.Int64) []*store.Store {
	t.Helper()
	out := make([]*store.Store, len(ss))
	for i, s := range ss {
		if dialect == store.SQLite {
			s.Close()
			s = openRestartStore(t, dialect, dsn, sqliteSync, jumps)
		}
		store.SeeStarts(s, func(_ string, started int64, _ bool) (int64, bool) { return started + 3600, durable })
		store.DropConnections(s)
		out[i] = s
	}
	return out
}

// allocateAll takes a range of tag t from every store at once.
func allocateAll(t *testing.T, ss []*store.Store) []segment.Allocation {
	t.Helper()
	out := make([]segment.Allocation, len(ss))
	errs := make([]error, len(ss))
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out[i], errs[i] = s.Allocate(ctx, "t", 10)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestartJumpsOnce: two instances racing on a database that started
// again while it could forget commits: exactly one moves every row forward
// by the jump, before either takes a range, and the ranges after it are
// above the jump and disjoint. The next loads do not jump again.
func TestRestartJumpsOnce(t *testing.T) {
	for _, dialect := range []string{store.MySQL, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			ss, jumps, dsn := restartStores(t, dialect, 2, "NORMAL")
			first := allocateAll(t, ss)
			if dialect == store.SQLite {
				// synchronous=NORMAL can forget: the first sight jumps.
				if got := jumps.Load(); got != 1 {
					t.Fatalf("%d jumps at the first sight of a database that can forget, want 1", got)
				}
				jumps.Store(0)
				// Nothing says a worker id was leased before: none is held back.
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				if _, err := ss[0].Acquire(ctx, "h", 1024, time.Minute); err != nil {
					t.Fatalf("Acquire after the first sight's jump: %v", err)
				}
			} else if got := jumps.Load(); got != 0 {
				t.Fatalf("%d jumps at the first sight of a durable database, want 0", got)
			}
			high := max(first[0].MaxID, first[1].MaxID)
			ss = restartAll(t, dialect, dsn, "NORMAL", ss, false, jumps)
			after := allocateAll(t, ss)
			if got := jumps.Load(); got != 1 {
				t.Fatalf("%d jumps after one restart, want exactly 1", got)
			}
			for i, a := range after {
				if a.Start() <= high+testJump-1 {
					t.Errorf("store %d took %d..%d after the restart, want above %d + the jump %d", i, a.Start(), a.MaxID-1, high, testJump)
				}
			}
			if after[0].Start() < after[1].MaxID && after[1].Start() < after[0].MaxID {
				t.Errorf("ranges overlap: %+v", after)
			}
			again := allocateAll(t, ss)
			if got := jumps.Load(); got != 1 || again[0].Start() > high+testJump+100 {
				t.Errorf("%d jumps after more loads (want 1); ranges %+v", got, again)
			}
		})
	}
}

// TestRestartDurable: a database that started again with settings that
// keep every commit, then and now, loses nothing: no jump.
func TestRestartDurable(t *testing.T) {
	for _, dialect := range []string{store.MySQL, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			ss, jumps, dsn := restartStores(t, dialect, 2, "FULL")
			first := allocateAll(t, ss)
			ss = restartAll(t, dialect, dsn, "FULL", ss, true, jumps)
			after := allocateAll(t, ss)
			if got := jumps.Load(); got != 0 {
				t.Fatalf("%d jumps on a durable database, want 0", got)
			}
			high := max(first[0].MaxID, first[1].MaxID)
			for i, a := range after {
				if a.Start() != high && a.Start() != high+10 {
					t.Errorf("store %d took %d..%d, want the next range after %d", i, a.Start(), a.MaxID-1, high)
				}
			}
		})
	}
}

// TestRestartAfterLeafRestart: an instance started after the restart,
// which remembers nothing, still jumps: the record is in the database.
// Sequence sections move forward too, and no worker id is leased until a
// lease's length after the jump.
func TestRestartAfterLeafRestart(t *testing.T) {
	ctx := context.Background()
	ss, jumps, dsn := restartStores(t, store.MySQL, 1, "")
	first := allocateAll(t, ss)
	if _, err := ss[0].DB().ExecContext(ctx, `INSERT INTO leaf_seq_space (space, step, sections) VALUES ('s', 10, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := ss[0].DB().ExecContext(ctx, `INSERT INTO leaf_seq_section (space, section, max_seq) VALUES ('s', 0, 42)`); err != nil {
		t.Fatal(err)
	}
	ss[0].Close()

	fresh := openRestartStore(t, store.MySQL, dsn, "", jumps)
	store.SeeStarts(fresh, func(_ string, started int64, _ bool) (int64, bool) { return started + 3600, false })
	store.DropConnections(fresh)
	a := allocateAll(t, []*store.Store{fresh})[0]
	if jumps.Load() != 1 || a.Start() < first[0].MaxID+testJump {
		t.Fatalf("%d jumps, range from %d; want 1 jump and a range from %d", jumps.Load(), a.Start(), first[0].MaxID+testJump)
	}
	var seq int64
	if err := fresh.DB().GetContext(ctx, &seq, `SELECT max_seq FROM leaf_seq_section WHERE space = 's'`); err != nil || seq != 42+testJump {
		t.Fatalf("max_seq = %d, %v; want %d", seq, err, 42+testJump)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := fresh.Acquire(short, "h", 1024, time.Minute)
	if !errors.Is(err, store.ErrAfterRestart) || !errors.Is(err, segment.ErrStoreUnavailable) {
		t.Fatalf("Acquire a minute's lease within a second, right after the jump: %v, want ErrAfterRestart", err)
	}
	begin := time.Now()
	if _, err := fresh.Acquire(ctx, "h", 1024, 1500*time.Millisecond); err != nil || time.Since(begin) > 2*time.Second {
		t.Fatalf("Acquire a lease of 1.5 s, with time to wait: %v after %v", err, time.Since(begin))
	}
}
