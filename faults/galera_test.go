package faults

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/migrations"
)

// Sizes and bounds of TestGalera.
const (
	galeraNodes = 3
	galeraTags  = 10
	galeraStep  = 100
	// boundNodeDeath bounds how long the instance whose node died goes
	// without answering a segment request 200.
	boundNodeDeath = 2 * time.Second
	// gapWindow is how long after the kill gaps are looked for.
	gapWindow = 20 * time.Second
)

// TestGalera runs one leaf instance per node of a real 3-node MariaDB
// Galera cluster, each given its own node first and the others after. The
// three start at the same moment on a fresh database and are loaded at once
// on ten tags of step 100, so that their range loads conflict between nodes
// (certification conflicts, error 1213) and must be retried. Mid-run one
// node is killed with SIGKILL and later restarted. No id may repeat, no
// request may fail because of a conflict, and the instance whose node died
// must answer again within 2 s. Before each load phase, three instances
// start at once with --migrate on another fresh database, one per node, so
// that the three migrations race on three nodes.
//
// LEAF_GALERA_RUNS repeats the whole on one cluster (default 1).
func TestGalera(t *testing.T) {
	requireSuite(t)
	mariadbtest.RequireGalera(t)
	runs := 1
	if v := os.Getenv(envGaleraRuns); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a whole number of at least 1", envGaleraRuns, v)
		}
		runs = n
	}
	started := time.Now()
	c := mariadbtest.StartGalera(t, galeraNodes)
	t.Logf("%d-node cluster Synced in %v", galeraNodes, time.Since(started).Round(time.Millisecond))

	var sum galeraSummary
	for run := 1; run <= runs; run++ {
		ok := t.Run(fmt.Sprintf("run%02d", run), func(t *testing.T) {
			sum.add(galeraMigrationRace(t, c, run))
			sum.add(galeraLoad(t, c, run))
		})
		if !ok {
			sum.failed++
		}
	}
	fmt.Printf("RESULT scenario=galera_summary runs=%d ids=%d snowflake_ids=%d segment_dup=%d snowflake_dup=%d "+
		"conflict_failures=%d migration_races=%d migration_races_failed=%d runs_failed=%d victim_gap_max_ms=%.1f\n",
		runs, sum.ids, sum.snowIDs, sum.segDups, sum.snowDups, sum.conflictFailures, sum.races, sum.racesFailed,
		sum.failed, float64(sum.victimGapMax)/float64(time.Millisecond))
}

// galeraSummary adds up the runs.
type galeraSummary struct {
	ids, snowIDs, segDups, snowDups, conflictFailures int
	races, racesFailed, failed                        int
	victimGapMax                                      time.Duration
}

// galeraRunResult is what one phase of a run contributes to the summary.
type galeraRunResult struct {
	race, raceFailed                                  bool
	ids, snowIDs, segDups, snowDups, conflictFailures int
	victimGap                                         time.Duration
}

func (s *galeraSummary) add(r galeraRunResult) {
	if r.race {
		s.races++
		if r.raceFailed {
			s.racesFailed++
		}
		return
	}
	s.ids += r.ids
	s.snowIDs += r.snowIDs
	s.segDups += r.segDups
	s.snowDups += r.snowDups
	s.conflictFailures += r.conflictFailures
	s.victimGapMax = max(s.victimGapMax, r.victimGap)
}

// nodeArgs are the store flags of the instance of node i: its own node
// first, then the others in order.
func nodeArgs(nodes []*mariadbtest.Server, i int, db string) []string {
	addrs := []string{nodes[i].Addr()}
	for j := 1; j < len(nodes); j++ {
		addrs = append(addrs, nodes[(i+j)%len(nodes)].Addr())
	}
	return []string{"--mysql-dsn", nodes[i].DSN(db), "--mysql-addrs", strings.Join(addrs, ",")}
}

// syncedDB opens a pool on node's database db whose reads first wait for
// the node to apply every write the cluster committed before them.
func syncedDB(tb testing.TB, node *mariadbtest.Server, db string) *sql.DB {
	tb.Helper()
	return openDB(tb, node.DSN(db)+"&wsrep_sync_wait=1")
}

// createDatabase creates db through node 0 and waits until every node
// has it.
func createDatabase(tb testing.TB, nodes []*mariadbtest.Server, db string) {
	tb.Helper()
	for i, n := range nodes {
		conn := syncedDB(tb, n, "")
		if i == 0 {
			mustExec(tb, conn, "CREATE DATABASE `"+db+"`")
		}
		testkit.WaitFor(tb, 30*time.Second, "database "+db+" on "+n.Addr(), func() bool {
			var one int
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := conn.QueryRowContext(ctx, `SELECT 1 FROM information_schema.schemata WHERE schema_name = ?`, db).Scan(&one)
			return err == nil
		})
	}
}

// galeraMigrationRace starts three instances at once with --migrate on a
// fresh database, one per node: the three migrations race on three nodes.
// The lock row in leaf_migration_lock must let exactly one apply each
// migration.
func galeraMigrationRace(t *testing.T, c *mariadbtest.Cluster, run int) galeraRunResult {
	nodes := c.Nodes()
	db := fmt.Sprintf("leaf_race_%02d", run)
	createDatabase(t, nodes, db)
	ins := newInstances(t, "race", galeraNodes, func(i int) []string {
		return append(nodeArgs(nodes, i, db), "--migrate=true")
	})
	begin := time.Now()
	startErr := startAll(ins)
	took := time.Since(begin)
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, "galera_migration_race")
	r.add("run", run)
	r.bound("all_started", startErr == nil, "three instances started at once with --migrate on three nodes: %v", startErr)
	check := syncedDB(t, nodes[0], db)
	ctx, cancel := context.WithTimeout(context.Background(), sqlTimeout)
	defer cancel()
	var dupVersions, lockRows int
	var latest sql.NullInt64
	err := check.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT version_id FROM `+migrations.VersionTable+
		` WHERE is_applied GROUP BY version_id HAVING COUNT(*) > 1) d`).Scan(&dupVersions)
	if err == nil {
		err = check.QueryRowContext(ctx, `SELECT MAX(version_id) FROM `+migrations.VersionTable+` WHERE is_applied`).Scan(&latest)
	}
	if err == nil {
		err = check.QueryRowContext(ctx, `SELECT COUNT(*) FROM leaf_migration_lock`).Scan(&lockRows)
	}
	want, lerr := migrations.Latest(migrations.MySQL)
	if err = errors.Join(err, lerr); err != nil {
		t.Fatalf("read the migration state of %s: %v", db, err)
	}
	r.add("start_ms", took)
	r.add("schema_version", latest.Int64)
	r.add("versions_applied_twice", dupVersions)
	r.bound("migrations_once", dupVersions == 0 && latest.Int64 == want && lockRows == 0,
		"schema at version %d (want %d), %d versions recorded twice, %d lock rows left", latest.Int64, want, dupVersions, lockRows)
	r.print()
	return galeraRunResult{race: true, raceFailed: len(r.missed) > 0}
}

// galeraLoad is one load phase: a fresh database and tags, three fresh
// instances starting together, a node killed and restarted.
func galeraLoad(t *testing.T, c *mariadbtest.Cluster, run int) galeraRunResult {
	var (
		wantIDs = sized(60_000, 300_000)
		// After a kill -9 the surviving nodes hold every commit until
		// they evict the dead node (evs.suspect_timeout, 5 s): 6.1 to
		// 6.3 s here. The buffers cover that once a segment lasts longer,
		// which the adaptive step brings about after as long of steady
		// load (a segment lasts about as long as the load has run). At
		// 4 s every instance, not only the one whose node died, went 2.5
		// to 4 s without a 200 for some tag; at 12 s none did.
		killAfter = 12 * time.Second
		downFor   = time.Second                         // after the others commit again
		minAfter  = sized(3*time.Second, 5*time.Second) // of load once the node is back
		deadline  = 3 * time.Minute
	)
	nodes := c.Nodes()
	victim := (run - 1) % galeraNodes
	db := fmt.Sprintf("leaf_load_%02d", run)
	createDatabase(t, nodes, db)
	leafCommand(t, "migrate", "--mysql-dsn", nodes[0].DSN(db))
	setup := syncedDB(t, nodes[0], db)
	tags := make([]string, galeraTags)
	for i := range tags {
		tags[i] = fmt.Sprintf("galera-%02d", i)
	}
	createTags(t, setup, galeraStep, tags...)
	mustExec(t, setup, `CREATE TABLE fault_probe (node INT PRIMARY KEY, n BIGINT NOT NULL)`)
	for i := range nodes {
		mustExec(t, setup, `INSERT INTO fault_probe VALUES (?, 0)`, i)
	}
	plain := make([]*sql.DB, len(nodes))
	for i, n := range nodes {
		plain[i] = openDB(t, n.DSN(""))
		conn := syncedDB(t, n, db)
		testkit.WaitFor(t, 30*time.Second, "the tags on "+n.Addr(), func() bool {
			var k int
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM leaf_alloc`).Scan(&k)
			return err == nil && k == galeraTags
		})
	}
	before := certCounters(t, plain)

	ins := newInstances(t, "load", galeraNodes, func(i int) []string {
		return append(nodeArgs(nodes, i, db), "--admin-token", adminToken)
	})
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	l := startLoad(t, clk, loadConfig{
		targets: ins,
		tags:    sameTags(len(ins), tags),
		workers: 2, // 6 in all
		pace:    2 * time.Millisecond,
		mix:     mix{weights: [numOps]int{segGet: 3, segBatch: 3, snowGet: 1, snowBatch: 1}, batch: 100},
	})
	probes := startStallProbes(t, clk, nodes, db)

	time.Sleep(killAfter)
	preKill := certCounters(t, plain[victim:victim+1])
	nl := loseNode(t, c, probes, clk, victim, downFor)
	killAt, restartAt, syncedAt := nl.killAt, nl.restartAt, nl.syncedAt
	for clk.now() < syncedAt+minAfter || l.segIDs.Load() < int64(wantIDs) {
		if clk.now() > deadline {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.stop()
	stalls := probes.stop()
	ran := clk.now()
	after := certCounters(t, plain)
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, "galera")
	r.add("run", run)
	r.add("victim", fmt.Sprintf("node%d", victim))
	r.add("seconds", ran.Seconds())
	samples := l.samples()
	ids := checkDuplicates(r, l)
	addStatuses(r, l, samples)
	r.bound("ids", ids.segIDs >= wantIDs, "%d segment ids, want at least %d", ids.segIDs, wantIDs)
	r.add("kill_at_ms", killAt)
	r.add("restart_ms", syncedAt-restartAt)

	// Conflicts: those the instances retried, as the nodes counted them
	// (certification failures and transactions aborted by a replicated
	// one, started on each node), and those that failed a load.
	retried := 0
	for i := range nodes {
		d := after[i] - before[i]
		if i == victim { // its counters start again at its restart
			d = preKill[0] - before[i] + after[i]
		}
		retried += int(d)
	}
	r.add("conflicts_on_nodes", retried)
	conflictLines, loadFailed, notLogged := 0, 0, int64(0)
	for _, in := range ins {
		for _, ln := range in.logs.withMsg("segment load failed") {
			loadFailed++
			n, _ := ln.num("failures_not_logged")
			notLogged += n
			if e := ln.str("err"); strings.Contains(e, "1213") || strings.Contains(strings.ToLower(e), "deadlock") ||
				strings.Contains(e, "conflict") {
				if conflictLines == 0 {
					t.Logf("instance %s: %s", in.name, ln.text)
				}
				conflictLines++
			}
		}
	}
	r.add("load_failed_lines", loadFailed)
	r.add("load_failures_not_logged", notLogged)
	r.add("conflict_failures", conflictLines)
	r.bound("no_conflict_failure", conflictLines == 0,
		"%d segment loads failed because of a conflict (lines of \"segment load failed\" naming 1213, deadlock or conflict)", conflictLines)
	before503, after503 := 0, 0
	for _, s := range samples {
		if s.status == 503 {
			if s.start < killAt {
				before503++
			} else {
				after503++
			}
		}
	}
	r.add("http_503_before_kill", before503)
	r.add("http_503_after_kill", after503)

	// The stall of commits on the nodes that stayed up, and each
	// instance's longest time without a segment 200 after the kill.
	var stallText []string
	for i, st := range stalls {
		if i == victim {
			continue
		}
		stallText = append(stallText, fmt.Sprintf("node%d:%.0f", i, float64(st.after(killAt))/float64(time.Millisecond)))
	}
	r.add("stall_ms", strings.Join(stallText, "/"))
	var gaps []time.Duration
	for i := range ins {
		gaps = append(gaps, okGap(samples, i, killAt, min(killAt+gapWindow, ran)))
	}
	r.add("gap_ms", joinDurs(gaps))
	r.add("victim_gap_ms", gaps[victim])
	r.bound("victim_answers", gaps[victim] <= boundNodeDeath,
		"instance %s, whose node %d was killed, went %v without a segment 200 after the kill (instances' gaps %s ms; "+
			"commits on the surviving nodes stalled %s ms); want at most %v",
		ins[victim].name, victim, gaps[victim].Round(time.Millisecond), joinDurs(gaps), strings.Join(stallText, "/"), boundNodeDeath)
	r.print()

	return galeraRunResult{ids: ids.segIDs, snowIDs: ids.snowIDs, segDups: ids.segDups, snowDups: ids.snowDups,
		conflictFailures: conflictLines, victimGap: gaps[victim]}
}

// okGap is the longest time within [from, to] during which instance idx
// answered no request 200 for one of its tags: what a client of that tag
// saw. A tag asked for and never answered 200 in the window counts whole.
func okGap(samples []sample, idx int, from, to time.Duration) time.Duration {
	ends := map[int16][]time.Duration{}
	for _, s := range samples {
		if int(s.target) != idx || !s.op.segment() || s.start+s.dur < from || s.start > to {
			continue
		}
		if _, ok := ends[s.tag]; !ok {
			ends[s.tag] = nil
		}
		if end := s.start + s.dur; s.status == 200 && end <= to {
			ends[s.tag] = append(ends[s.tag], end)
		}
	}
	var gap time.Duration
	for _, es := range ends {
		slices.Sort(es)
		last := from
		for _, e := range es {
			gap = max(gap, e-last)
			last = e
		}
		gap = max(gap, to-last)
	}
	return gap
}

// certCounters reads, per node, the conflicts it counted for transactions
// started on it: wsrep_local_cert_failures + wsrep_local_bf_aborts.
func certCounters(tb testing.TB, nodes []*sql.DB) []int64 {
	tb.Helper()
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), sqlTimeout)
		rows, err := n.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN
  ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts')`)
		if err != nil {
			cancel()
			tb.Fatalf("node %d: %v", i, err)
		}
		for rows.Next() {
			var k string
			var v int64
			if err := rows.Scan(&k, &v); err != nil {
				tb.Fatal(err)
			}
			out[i] += v
		}
		rows.Close()
		cancel()
	}
	return out
}

// nodeLoss is when a scenario killed a node, restarted it, and saw it
// Synced again, on the scenario's time line.
type nodeLoss struct{ killAt, restartAt, syncedAt time.Duration }

// loseNode kills node victim of c with SIGKILL, waits until every other
// node has committed again (they have evicted it: a node restarted while
// the others still hold its old self in their view rejoins only after
// evs.inactive_timeout), keeps it down downFor more, and restarts it.
func loseNode(t *testing.T, c *mariadbtest.Cluster, probes *stallProbes, clk clock, victim int, downFor time.Duration) nodeLoss {
	t.Helper()
	var nl nodeLoss
	nl.killAt = clk.now()
	if err := c.Kill(victim); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 60*time.Second, "commits on the surviving nodes", func() bool {
		for i := range probes.got {
			if i != victim && !probes.got[i].committedAfter(nl.killAt) {
				return false
			}
		}
		return true
	})
	time.Sleep(downFor)
	nl.restartAt = clk.now()
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	nl.syncedAt = clk.now()
	return nl
}

// stallProbes commit a one-row update on every node in a loop and record
// how long each took, to measure how long commits stall when a node dies.
type stallProbes struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	got    []stallProbe
}

type stallProbe struct {
	mu    sync.Mutex // protects polls
	polls []poll
}

// committedAfter reports whether a commit that began at or after t has
// completed.
func (p *stallProbe) committedAfter(t time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pl := range p.polls {
		if pl.start >= t && pl.status == 200 {
			return true
		}
	}
	return false
}

// after is the longest commit that ended after t: one in flight at t
// counts whole.
func (p *stallProbe) after(t time.Duration) time.Duration {
	var longest time.Duration
	for _, pl := range p.polls {
		if pl.start+pl.dur > t && pl.status == 200 {
			longest = max(longest, pl.dur)
		}
	}
	return longest
}

func startStallProbes(tb testing.TB, clk clock, nodes []*mariadbtest.Server, db string) *stallProbes {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &stallProbes{cancel: cancel, got: make([]stallProbe, len(nodes))}
	for i, n := range nodes {
		conn := openDB(tb, n.DSN(db))
		conn.SetMaxOpenConns(1)
		p.wg.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				qctx, qcancel := context.WithTimeout(ctx, requestTimeout)
				_, err := conn.ExecContext(qctx, `UPDATE fault_probe SET n = n + 1 WHERE node = ?`, i)
				qcancel()
				if ctx.Err() != nil {
					return
				}
				pl := poll{start: clk.at(start), dur: time.Since(start), status: 200}
				if err != nil {
					pl.status, pl.body = 0, err.Error()
				}
				p.got[i].mu.Lock()
				p.got[i].polls = append(p.got[i].polls, pl)
				p.got[i].mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(50 * time.Millisecond):
				}
			}
		})
	}
	tb.Cleanup(func() { p.stop() })
	return p
}

// stop ends the probes and returns them by node.
func (p *stallProbes) stop() []*stallProbe {
	p.cancel()
	p.wg.Wait()
	out := make([]*stallProbe, len(p.got))
	for i := range p.got {
		out[i] = &p.got[i]
	}
	return out
}
