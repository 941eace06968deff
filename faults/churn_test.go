package faults

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestChurn runs three instances on one database under load and kills one
// of them with SIGKILL every 2 s, round robin, restarting it at once: each
// start takes new ranges and a new worker id while the ranges and lease of
// the killed process are abandoned. No id may be issued twice.
func TestChurn(t *testing.T) { testChurn(t, "churn", (*instance).kill) }

// TestCleanRestarts is TestChurn with SIGTERM instead of SIGKILL, as an
// orchestrator rolls a deployment: each stop hands the unused tail of its
// last ranges back to the rows where no other instance took a range since,
// so fewer of the ids taken from the database are thrown away.
func TestCleanRestarts(t *testing.T) { testChurn(t, "clean-restarts", (*instance).stop) }

func testChurn(t *testing.T, name string, stop func(*instance) error) {
	requireSuite(t)
	var (
		wantIDs  = sized(100_000, 1_000_000)
		minRun   = sized(12*time.Second, 30*time.Second)
		deadline = sized(2*time.Minute, 8*time.Minute)
	)
	const killEvery = 2 * time.Second

	dsn := storetest.MySQL(t)
	leafCommand(t, "migrate", "--mysql-dsn", dsn)
	tags := []string{"churn-a", "churn-b", "churn-c"}
	for _, tag := range tags {
		leafCommand(t, "tag", "add", tag, "--step", "1000", "--mysql-dsn", dsn)
	}
	ins := newInstances(t, name, 3, func(int) []string { return []string{"--mysql-dsn", dsn} })
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}

	clk := newClock()
	l := startLoad(t, clk, loadConfig{
		targets: ins,
		tags:    [][]string{tags, tags, tags},
		workers: 4,
		pace:    4 * time.Millisecond,
		mix:     mix{weights: [numOps]int{segGet: 3, segBatch: 4, snowGet: 2, snowBatch: 1}, batch: 40},
	})

	// The killer: every killEvery, the next instance is killed and
	// started again at once.
	type kill struct {
		victim   string
		at, down time.Duration // down: from the kill until it serves again
		err      error
	}
	var (
		kills []kill
		wg    sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wg.Go(func() {
		tick := time.NewTicker(killEvery)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			in := ins[n%len(ins)]
			k := kill{victim: in.name, at: clk.now()}
			k.err = stop(in)
			if k.err == nil {
				k.err = in.start()
			}
			k.down = clk.now() - k.at
			kills = append(kills, k)
			if k.err != nil {
				return
			}
		}
	})
	stopKiller := sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stopKiller)

	// Run until enough ids and enough time, bounded by the deadline.
	for clk.now() < minRun || l.segIDs.Load() < int64(wantIDs) {
		if clk.now() > deadline {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	stopKiller()
	l.stop()
	ran := clk.now()
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, name)
	r.add("instances", len(ins))
	r.add("seconds", ran.Seconds())
	samples := l.samples()
	segIDs := checkDuplicates(r, l).segIDs
	addStatuses(r, l, samples)
	var downs []time.Duration
	failed := 0
	for _, k := range kills {
		if k.err != nil {
			failed++
			t.Errorf("kill %s at %v: %v", k.victim, k.at, k.err)
			continue
		}
		downs = append(downs, k.down)
	}
	r.add("kills", len(kills))
	r.add("restart_p50_ms", percentile(downs, 0.5))
	r.add("restart_max_ms", maxDur(downs))
	r.add("ids_per_s", float64(segIDs)/ran.Seconds())
	// Ids taken from the database and never handed out: thrown away by
	// the stops (and the buffers left at the end, handed back by stopAll).
	st := storetest.Open(t, store.MySQL, dsn)
	var taken int64
	for _, tag := range tags {
		row, err := st.Tag(context.Background(), tag)
		if err != nil {
			t.Fatal(err)
		}
		taken += row.MaxID - 1
	}
	r.add("ids_taken_from_db", taken)
	if taken > 0 {
		r.add("pct_thrown_away", 100*(1-float64(segIDs)/float64(taken)))
	}
	r.bound("ids", segIDs >= wantIDs, "%d segment ids, want at least %d", segIDs, wantIDs)
	r.bound("restarts", failed == 0 && len(kills) >= int(minRun/killEvery)-1,
		"%d kills, %d restarts failed, want at least %d kills and no failure", len(kills), failed, int(minRun/killEvery)-1)
	r.print()
}
