package faults

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/testkit"
)

// Sizes and bounds of TestCrashGalera.
const (
	crashTags = 6
	crashStep = 10
	// crashWarm is how long the load runs on a crash's fresh tags before
	// the kill is armed: their steps start at 10 and double with each load,
	// so ranges are still taken every few hundred milliseconds.
	crashWarm = 5 * time.Second
	// crashArmed bounds the wait for a range to be taken once armed.
	crashArmed = 10 * time.Second
	// crashBackWithin bounds how long after the cluster is Synced again
	// every instance answers a segment request 200.
	crashBackWithin = 60 * time.Second
	// crashAfter is how long the load runs once every instance answers.
	crashAfter = 10 * time.Second
)

// jumpMsg begins the ERROR line of the instance that moved every row
// forward after a restart.
const jumpMsg = "the database started again and may have forgotten commits"

// TestCrashGalera crashes a whole 3-node MariaDB Galera cluster under load:
// three instances, one per node (each given every node, its own first),
// ask for ids of six tags of step 10 (fresh tags at each crash, so that
// ranges are taken all the time), and every node is killed with SIGKILL
// at once just after a range was taken (the sum of max_id seen to move on
// a node). The cluster is then started again as an operator does: every
// node's position recovered (mariadbd --wsrep-recover), the most advanced
// one bootstrapped, the others joining it. The load goes on until every
// instance answers again and 10 s more. Every id is kept; none may be
// issued twice.
//
// It runs with innodb_flush_log_at_trx_commit=1 on every node, where a
// commit is on a disk before it is acknowledged, and =0, where the crash
// loses about the last second of commits on every node: the raise of
// max_id behind a range an instance holds in its buffer can be gone, and
// only leaf's check of the database's start (store/restart.go) keeps the
// range from being handed out again. The last crash of =0 is a crash
// loop: the cluster is crashed again as soon as it answers, before the
// move of the rows after its start can be on disk. LEAF_GALERA_CRASHES sets the crashes
// of each (default 3 at the full size, 1 at the short one, which CI runs);
// with LEAF_TEST_GALERA=1. Each crash takes about a minute.
func TestCrashGalera(t *testing.T) {
	requireSuite(t)
	mariadbtest.RequireGalera(t)
	crashes := 3
	if level != "full" {
		crashes = 1
	}
	if v := os.Getenv(envGaleraCrashes); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a whole number of at least 1", envGaleraCrashes, v)
		}
		crashes = n
	}
	for _, flush := range []string{"1", "0"} {
		t.Run("flush"+flush, func(t *testing.T) { galeraCrashes(t, flush, crashes) })
	}
}

// crashSummary adds up the crashes of one setting.
type crashSummary struct {
	crashes, lostAny, ids, snowIDs, segDups, snowDups, jumps int
	lostCommits                                              int64
}

// galeraCrashes runs crashes crashes of a cluster whose every node has
// innodb_flush_log_at_trx_commit=flush, with the same three instances.
func galeraCrashes(t *testing.T, flush string, crashes int) {
	started := time.Now()
	c := mariadbtest.StartGaleraWith(t, galeraNodes, "innodb_flush_log_at_trx_commit="+flush)
	t.Logf("%d-node cluster with innodb_flush_log_at_trx_commit=%s Synced in %v", galeraNodes, flush,
		time.Since(started).Round(time.Millisecond))
	nodes := c.Nodes()
	const db = "leaf_crash"
	createDatabase(t, nodes, db)
	leafCommand(t, "migrate", "--mysql-dsn", nodes[0].DSN(db))
	ins := newInstances(t, "crash", galeraNodes, func(i int) []string { return nodeArgs(nodes, i, db) })
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}
	var sum crashSummary
	for k := 1; k <= crashes; k++ {
		// The last crash of the lazy setting is a crash loop: the cluster
		// is crashed again as soon as every instance answers and a range
		// was taken, the move of the rows after the first start, and the
		// ranges above it, likely still in the nodes' log buffers.
		again := flush == "0" && k == crashes
		sum.add(galeraCrash(t, c, ins, db, flush, k, again))
		if t.Failed() && sum.segDups+sum.snowDups == 0 {
			break // broken otherwise than by a duplicate: say so, do not pile on
		}
	}
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}
	fmt.Printf("RESULT scenario=galera_crash_summary flush=%s crashes=%d crashes_that_lost_commits=%d lost_commits=%d "+
		"ids=%d snowflake_ids=%d segment_dup=%d snowflake_dup=%d restart_jumps=%d\n",
		flush, sum.crashes, sum.lostAny, sum.lostCommits, sum.ids, sum.snowIDs, sum.segDups, sum.snowDups, sum.jumps)
}

func (s *crashSummary) add(r crashResult) {
	s.crashes++
	if r.lost > 0 {
		s.lostAny++
		s.lostCommits += r.lost
	}
	s.ids += r.ids.segIDs
	s.snowIDs += r.ids.snowIDs
	s.segDups += r.ids.segDups
	s.snowDups += r.ids.snowDups
	s.jumps += r.jumps
}

// crashResult is what one crash contributes to the summary.
type crashResult struct {
	ids   idCounts
	lost  int64 // commits acknowledged before the kill that no node kept
	jumps int   // instances' ERROR lines of a jump after the restart
}

// galeraCrash is one crash: fresh tags under load, every node killed just
// after a range was taken, the cluster started again from its most
// advanced node, the load kept on until every instance answers again.
// With again, the cluster is crashed and started the same way a second
// time as soon as every instance answers and a range was taken.
func galeraCrash(t *testing.T, c *mariadbtest.Cluster, ins []*instance, db, flush string, k int, again bool) crashResult {
	nodes := c.Nodes()
	tags := make([]string, crashTags)
	for i := range tags {
		tags[i] = fmt.Sprintf("crash%02d-%02d", k, i)
	}
	setup := syncedDB(t, nodes[0], db)
	createTags(t, setup, crashStep, tags...)
	setup.Close()
	jumpsBefore := countLines(ins, jumpMsg)

	clk := newClock()
	l := startLoad(t, clk, loadConfig{
		targets: ins,
		tags:    sameTags(len(ins), tags),
		workers: 2,
		pace:    5 * time.Millisecond,
		mix:     mix{weights: [numOps]int{segGet: 3, segBatch: 3, snowGet: 1}, batch: 20},
	})
	time.Sleep(crashWarm)
	committed, armedFor := waitForRange(t, nodes[0], db, tags)
	killAt := clk.now()
	killTook, err := c.KillAll()
	if err != nil {
		t.Fatal(err)
	}
	positions, first, err := c.BootstrapMostAdvanced()
	if err != nil {
		t.Fatal(err)
	}
	syncedAt := clk.now()
	backAt := waitAnswering(t, clk, ins, tags[0])
	var againAfter int64
	if again {
		waitForRange(t, nodes[0], db, tags)
		againAfter = (clk.now() - backAt).Milliseconds()
		if _, err := c.KillAll(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.BootstrapMostAdvanced(); err != nil {
			t.Fatal(err)
		}
		backAt = waitAnswering(t, clk, ins, tags[0])
	}
	time.Sleep(crashAfter)
	l.stop()

	r := newReport(t, "galera_crash")
	r.add("flush", flush)
	r.add("crash", k)
	samples := l.samples()
	ids := checkDuplicates(r, l)
	addStatuses(r, l, samples)
	r.add("armed_ms", armedFor)
	r.add("kill_at_ms", killAt)
	r.add("kill_took_ms", killTook)
	if again {
		r.add("crashed_again_after_answering_ms", againAfter)
	}
	r.add("bootstrapped", fmt.Sprintf("node%d", first))
	var pos []string
	best := int64(-1)
	for _, p := range positions {
		pos = append(pos, strconv.FormatInt(p, 10))
		best = max(best, p)
	}
	lost := max(committed-best, 0)
	r.add("committed_before_kill", committed)
	r.add("recovered", strings.Join(pos, "/"))
	r.add("lost_commits", lost)
	r.add("down_ms", syncedAt-killAt)
	r.add("back_after_synced_ms", backAt-syncedAt)
	jumps := countLines(ins, jumpMsg) - jumpsBefore
	r.add("restart_jumps", jumps)
	if flush == "1" {
		r.bound("no_jump_when_durable", jumps == 0, "%d jumps after a restart of a cluster that keeps every commit on disk", jumps)
	}
	r.bound("answers_again", backAt-syncedAt <= crashBackWithin,
		"every instance answered a segment request 200 %v after the cluster was Synced again; want within %v",
		(backAt - syncedAt).Round(time.Millisecond), crashBackWithin)
	r.print()
	return crashResult{ids: ids, lost: lost, jumps: jumps}
}

// waitForRange polls node's leaf_alloc until the sum of the tags' max_id
// moves (a range was just taken), for at most crashArmed, and returns the
// node's wsrep_last_committed read in the same statement, and how long it
// waited.
func waitForRange(tb testing.TB, node *mariadbtest.Server, db string, tags []string) (committed int64, waited time.Duration) {
	tb.Helper()
	conn := openDB(tb, node.DSN(db))
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	q := `SELECT (SELECT COALESCE(SUM(max_id), 0) FROM leaf_alloc WHERE biz_tag LIKE ?),
  (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LAST_COMMITTED')`
	like := strings.TrimSuffix(tags[0], "00") + "%"
	start := time.Now()
	last := int64(-1)
	for {
		var sum int64
		ctx, cancel := context.WithTimeout(context.Background(), sqlTimeout)
		err := conn.QueryRowContext(ctx, q, like).Scan(&sum, &committed)
		cancel()
		if err != nil {
			tb.Fatalf("poll leaf_alloc on %s: %v", node.Addr(), err)
		}
		if (last >= 0 && sum != last) || time.Since(start) > crashArmed {
			return committed, time.Since(start)
		}
		last = sum
		time.Sleep(5 * time.Millisecond)
	}
}

// waitAnswering waits until every instance answers a segment request of
// tag 200, for at most crashBackWithin more than the wait allows, and
// returns when the last did, on clk.
func waitAnswering(tb testing.TB, clk clock, ins []*instance, tag string) time.Duration {
	tb.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	for _, in := range ins {
		testkit.WaitFor(tb, crashBackWithin+30*time.Second, "instance "+in.name+" answers a segment request", func() bool {
			resp, err := client.Get(in.base() + "/api/segment/get/" + tag)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	return clk.now()
}

// countLines counts the log lines of every instance whose message begins
// with prefix.
func countLines(ins []*instance, prefix string) int {
	n := 0
	for _, in := range ins {
		n += len(in.logs.withMsg(prefix))
	}
	return n
}
