package faults

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/testkit"
)

// galeraSeqTag is the ordered tag of TestSequencesGalera.
const galeraSeqTag = "ordered"

// TestSequencesGalera runs one leaf instance per node of a real 3-node
// MariaDB Galera cluster, each given its own node first and the others
// after, serving one space of per-key sequences (the scenario space of
// TestSequences: 64 sections, step 100) and an ordered tag, with a lease
// of 3 s. Callers send next, batch and current requests for many keys to
// the three instances in turn, and ask them for ids of the ordered tag,
// recording every number with the times its request began and ended.
// Mid-run the node of the instance that serves the ordered tag is killed
// with SIGKILL; once the others commit again it is restarted and rejoins.
// Meanwhile commits stall on the surviving nodes for about 6 s (Galera's
// eviction of the dead node), so every owner's renewals stall past its
// local deadline and the sections move while the node is down or
// rejoining. For every key, no number may be given twice, and a request
// that began after another ended must get numbers above the other's; ids
// of the ordered tag must increase the same way across instances; no key
// may pass its section's max_seq; the only failures allowed are 503 with
// Retry-After; every section must answer again after the stall.
func TestSequencesGalera(t *testing.T) {
	requireSuite(t)
	mariadbtest.RequireGalera(t)
	var (
		keys     = sized(10_000, 100_000)
		warmup   = 6 * time.Second
		downFor  = time.Second                          // after the others commit again
		minAfter = sized(6*time.Second, 20*time.Second) // of load once the node is back
	)
	const (
		lease          = 3 * time.Second
		workers        = 6
		pace           = 3 * time.Millisecond
		orderedWorkers = 3
	)
	started := time.Now()
	c := mariadbtest.StartGalera(t, galeraNodes)
	synced := time.Since(started)
	nodes := c.Nodes()

	const db = "leaf_seq"
	createDatabase(t, nodes, db)
	leafCommand(t, "migrate", "--mysql-dsn", nodes[0].DSN(db))
	leafCommand(t, "sequence", "add", seqSpace, "--step", strconv.Itoa(seqStep),
		"--sections", strconv.Itoa(seqSections), "--mysql-dsn", nodes[0].DSN(db))
	leafCommand(t, "tag", "add", galeraSeqTag, "--ordered", "--step", "100", "--mysql-dsn", nodes[0].DSN(db))
	setup := syncedDB(t, nodes[0], db)
	mustExec(t, setup, `CREATE TABLE fault_probe (node INT PRIMARY KEY, n BIGINT NOT NULL)`)
	for i := range nodes {
		mustExec(t, setup, `INSERT INTO fault_probe VALUES (?, 0)`, i)
	}
	for _, n := range nodes {
		conn := syncedDB(t, n, db)
		testkit.WaitFor(t, 30*time.Second, "the sections on "+n.Addr(), func() bool {
			var k int
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM leaf_seq_section`).Scan(&k)
			return err == nil && k == seqSections+1
		})
	}

	ins := newInstances(t, "galera-sequences", galeraNodes, func(i int) []string {
		return append(nodeArgs(nodes, i, db), "--snowflake=false", "--sequence-lease", lease.String(),
			"--forward-timeout", "1s", "--store-timeout", "2s")
	})
	for _, in := range ins {
		in.args = append(in.args, "--advertise-addr", in.addr)
	}
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	waitSectionsTaken(t, ins, seqSections)
	l := startSeqLoad(t, clk, ins, keys, workers, pace)
	oc := startOrderedCallers(t, ins, galeraSeqTag, orderedWorkers)
	probes := startStallProbes(t, clk, nodes, db)
	loadStart := clk.now()

	time.Sleep(warmup)
	victim := 1
	for i, in := range ins {
		if len(ownedSectionsOf(in, galeraSeqTag)) > 0 {
			victim = i
		}
	}
	victimSections := len(ownedSections(ins[victim]))
	nl := loseNode(t, c, probes, clk, victim, downFor)
	killAt, restartAt, syncedAt := nl.killAt, nl.restartAt, nl.syncedAt
	time.Sleep(minAfter)
	l.stop()
	ordered := oc.stop()
	stalls := probes.stop()
	end := clk.now()
	ran := end - loadStart
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, "galera_sequences")
	r.add("cluster_synced_ms", synced)
	r.add("instances", len(ins))
	r.add("keys", keys)
	r.add("sections", seqSections)
	r.add("step", seqStep)
	r.add("lease_ms", lease)
	r.add("seconds", ran.Seconds())
	r.add("victim", fmt.Sprintf("node%d", victim))
	r.add("victim_sections", victimSections)
	samples := l.samples()
	checked := l.check.totals()
	r.add("requests", len(samples))
	r.add("numbers", checked.numbers)
	r.add("keys_given_numbers", checked.keys)
	addSeqStatuses(r, l, samples)
	r.add("duplicates", checked.duplicates)
	r.add("decreases", checked.decreases)
	r.bound("duplicates", checked.duplicates == 0, "%d requests got a number another request for the key got too%s",
		checked.duplicates, listed(l.check.examples()))
	r.bound("decreases", checked.decreases == 0, "%d requests got a number not above (current: below) one given for the key by a request that ended before they began%s",
		checked.decreases, listed(l.check.examples()))
	checkSeqHistories(t, r, l, samples)
	above := aboveMaxSeq(t, nodes[0].DSN(db)+"&wsrep_sync_wait=1", l)
	r.add("keys_above_max_seq", above)
	r.bound("max_seq", above == 0, "%d keys got a number above their section's max_seq in the database", above)

	outOfOrder := checkOrdered(ordered.calls)
	r.add("ordered_ids", len(ordered.calls))
	r.add("ordered_503", ordered.unavailable)
	r.add("ordered_failed", ordered.failed)
	r.bound("ordered_ids_in_order", outOfOrder == 0 && len(ordered.calls) > 0,
		"%d of %d ordered ids not above an id whose call ended before theirs began", outOfOrder, len(ordered.calls))
	r.bound("ordered_answers", len(ordered.problems) == 0, "%d answers of the ordered tag other than 200 and 503 with Retry-After%s",
		len(ordered.problems), listed(ordered.problems))

	// The stall of commits on the nodes that stayed up, and how long
	// sections went without a number from the kill on.
	var stallText []string
	var stall time.Duration
	for i, st := range stalls {
		if i == victim {
			continue
		}
		stall = max(stall, st.after(killAt))
		stallText = append(stallText, fmt.Sprintf("node%d:%.0f", i, float64(st.after(killAt))/float64(time.Millisecond)))
	}
	r.add("kill_at_ms", killAt)
	r.add("stall_ms", strings.Join(stallText, "/"))
	r.add("restart_ms", syncedAt-restartAt)
	gaps := longestGaps(samples, l.keySection, killAt, end)
	worst := slices.Max(gaps)
	r.add("section_gap_p50_ms", percentile(gaps, 0.5))
	r.add("section_gap_max_ms", worst)
	// After the stall, each lease still held runs out (a lease) and the
	// section is taken; a few seconds more for the load to ask for it.
	bound := stall + 2*lease + 2*time.Second
	r.bound("sections_answer_again", worst <= bound,
		"the longest time a section went without a number from the kill to the end was %v (section %d); commits stalled %v; want within %v",
		worst.Round(time.Millisecond), slices.Index(gaps, worst), stall.Round(time.Millisecond), bound)
	taken, moves := ownershipMoves(ins, clk, loadStart)
	r.add("sections_taken_before_load", taken)
	r.add("ownership_moves", moves)
	r.print()
}

// orderedCallers ask instances, in turn, for ids of an ordered tag and
// keep every id with the times its call began and ended.
type orderedCallers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	unavailable, failed atomic.Int64
	mu                  sync.Mutex // protects calls and problems
	calls               []orderedCall
	problems            []string
}

func startOrderedCallers(tb testing.TB, targets []*instance, tag string, n int) *orderedCallers {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o := &orderedCallers{cancel: cancel}
	client := &http.Client{Timeout: requestTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	for w := range n {
		o.wg.Go(func() {
			for i := w; ctx.Err() == nil; i++ {
				start := time.Now()
				status, header, body, err := get(ctx, client, targets[i%len(targets)].base()+"/api/segment/get/"+tag, "")
				end := time.Now()
				switch {
				case ctx.Err() != nil:
					return
				case err != nil:
					// No instance is killed: any failure to answer
					// is a problem.
					o.failed.Add(1)
					o.mu.Lock()
					if len(o.problems) < maxExamples {
						o.problems = append(o.problems, err.Error())
					}
					o.mu.Unlock()
					time.Sleep(20 * time.Millisecond)
					continue
				case status == http.StatusServiceUnavailable && header.Get("Retry-After") != "":
					o.unavailable.Add(1)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				id, perr := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
				o.mu.Lock()
				if status != http.StatusOK || perr != nil {
					if len(o.problems) < maxExamples {
						o.problems = append(o.problems, fmt.Sprintf("%d %s", status, body))
					}
				} else {
					o.calls = append(o.calls, orderedCall{id: id, start: start, end: end})
				}
				o.mu.Unlock()
			}
		})
	}
	tb.Cleanup(func() { o.stop() })
	return o
}

// orderedResult is what orderedCallers gathered.
type orderedResult struct {
	calls               []orderedCall
	unavailable, failed int64
	problems            []string
}

// stop ends the calls and returns them.
func (o *orderedCallers) stop() orderedResult {
	o.cancel()
	o.wg.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	return orderedResult{calls: o.calls, unavailable: o.unavailable.Load(), failed: o.failed.Load(), problems: o.problems}
}
