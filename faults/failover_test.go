package faults

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/tcpproxy"
)

// TestStaleFailover: two instances reach server A through a proxy. Under
// load, the leaf database is copied from A to server B; the load goes on
// against A for a while (the lost window), then the proxy sends every new
// connection to B, as a failover to an asynchronous replica that missed
// the last writes would. B's rows are behind ranges the instances already
// handed out: each instance must fence (find the row behind the highest
// max_id it received, move it forward, log an ERROR) and no id may repeat.
// TestReplicaPromoted runs the same scenario on a real replica of MySQL.
//
// The lost window lasts until every instance has taken a range past the
// copy on each of its tags and renewed its worker lease on A: an instance
// whose last range came before the lost window cannot know that B is
// behind, which docs/high-availability.md states as the fence's limit.
// Each instance also asks for a tag of its own: on a shared tag the first
// instance to load from B moves the row past every mark, and the other then
// finds nothing to fence, so only a tag of its own shows that every
// instance fences.
func TestStaleFailover(t *testing.T) {
	requireSuite(t)
	mariadbtest.Require(t)
	a := mariadbtest.StartServer(t)
	b := mariadbtest.StartServer(t)
	mustExec(t, openDB(t, a.DSN("")), "CREATE DATABASE leaf")
	var proxy *tcpproxy.Proxy
	dbA := openDB(t, a.DSN("leaf"))
	staleFailover(t, failoverShape{
		name:       "stale_failover",
		primary:    a.DSN("leaf"),
		standbyDSN: b.DSN("leaf"),
		proxied:    func(p *tcpproxy.Proxy) { proxy = p },
		lag:        func(t *testing.T) { copyDatabase(t, a, b, "leaf") },
		failover: func(t *testing.T) map[string]int64 {
			proxy.Retarget(b.Addr())
			return maxIDs(t, dbA) // final: no instance reaches A any more
		},
	})
}

// failoverShape is how the database behind the instances fails over, for
// staleFailover.
type failoverShape struct {
	name       string
	primary    string // DSN of leaf's database on the server written to first
	standbyDSN string // DSN of leaf's database on the server failed over to
	// proxied is given the proxy the instances reach the primary through.
	proxied func(*tcpproxy.Proxy)
	// lag has the standby stop where it is: what the primary commits from
	// then on, the standby lacks. Nil when the standby lacks no
	// acknowledged commit (semi-synchronous replication): then no
	// instance may find a row gone back.
	lag func(*testing.T)
	// failover sends the instances to the standby, writable, and returns
	// the rows' max_id on the primary when it was left.
	failover func(*testing.T) map[string]int64
}

// staleFailover runs the failover scenario on a shape (TestStaleFailover).
func staleFailover(t *testing.T, sh failoverShape) {
	var (
		warmup  = 3 * time.Second
		minLost = 3 * time.Second
		maxLost = 25 * time.Second
		after   = sized(10*time.Second, 15*time.Second)
		// After a lease regression an instance issues no snowflake id
		// for the lease TTL less its margin (25 s). The full run goes on
		// past that, so that ids issued after it are checked too.
		afterLease = sized(2*time.Second, 28*time.Second)
		maxLease   = 15 * time.Second // the regression comes at the next renewal, within 10 s
	)
	// The tag refresh looks for rows gone back even when no load is due;
	// at 2 s instead of the default 60 s it does so within the scenario.
	const tagRefresh = 2 * time.Second
	// With the default --ride-through (30 s) a range lasts 30 s at least,
	// so an instance may take its next one up to 30 s after the copy and
	// the lost window would outlast maxLost; at 2 s each instance loads
	// past the copy within seconds. The fence does not depend on it.
	const rideThrough = 2 * time.Second
	lossy := sh.lag != nil

	dsnA := sh.primary
	leafCommand(t, "migrate", "--mysql-dsn", dsnA)
	dbA := openDB(t, dsnA)
	shared := []string{"stale-shared-1", "stale-shared-2"}
	own := []string{"stale-own-a", "stale-own-b"}
	createTags(t, dbA, 100, append(shared, own...)...)

	cfgA, err := mysql.ParseDSN(dsnA)
	if err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.Start(t, cfgA.Addr)
	sh.proxied(proxy)
	proxied := withAddr(t, dsnA, proxy.Addr())
	ins := newInstances(t, "failover", 2, func(int) []string {
		return []string{"--mysql-dsn", proxied, "--admin-token", adminToken, "--tag-refresh", tagRefresh.String(),
			"--ride-through", rideThrough.String()}
	})
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}
	workerIDs := make([]int64, len(ins))
	for i, in := range ins {
		lines := in.logs.withMsg("snowflake ready")
		id, ok := int64(-1), false
		if len(lines) > 0 {
			id, ok = lines[0].num("worker_id")
		}
		if !ok {
			t.Fatalf("instance %s logged no worker id:\n%s", in.name, in.logs.tail(logTail))
		}
		workerIDs[i] = id
	}
	tagsOf := make([][]string, len(ins))
	for i := range ins {
		tagsOf[i] = append([]string{own[i]}, shared...)
	}

	clk := newClock()
	readyz := pollReadyz(t, clk, ins)
	l := startLoad(t, clk, loadConfig{
		targets: ins,
		tags:    tagsOf,
		workers: 3,
		pace:    10 * time.Millisecond,
		mix:     mix{weights: [numOps]int{segGet: 4, segBatch: 3, snowGet: 2, snowBatch: 1}, batch: 20},
	})
	time.Sleep(warmup)

	copyAt := clk.now()
	dbB := openDB(t, sh.standbyDSN)
	var atCopy map[string]int64
	if lossy {
		sh.lag(t)
	}
	copied := clk.now()
	if lossy {
		atCopy = maxIDs(t, dbB)
		leasesAtCopy := leaseExpiries(t, dbB)
		// The lost window: writes B will never see.
		var waiting string
		for {
			waiting = lostWindowOpen(t, ins, tagsOf, atCopy, workerIDs, leasesAtCopy, leaseExpiries(t, dbA))
			if waiting == "" && clk.now()-copied >= minLost {
				break
			}
			if clk.now()-copied > maxLost {
				t.Fatalf("after %v of lost window: %s", maxLost, waiting)
			}
			time.Sleep(200 * time.Millisecond)
		}
	} else {
		time.Sleep(minLost)
	}
	retargetAt := clk.now()
	atFailover := sh.failover(t)
	if !lossy {
		atCopy = atFailover
	}
	failoverTook := clk.now() - retargetAt
	time.Sleep(after)
	leaseRegressed := func() bool {
		for _, in := range ins {
			if len(in.logs.withMsg("snowflake: the database went back in time")) == 0 {
				return false
			}
		}
		return true
	}
	for end := time.Now().Add(maxLease); lossy && !leaseRegressed() && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(afterLease)

	segRegressions := make([]float64, len(ins))
	leaseRegressions := make([]float64, len(ins))
	for i, in := range ins {
		m := scrapeMetrics(t, in)
		segRegressions[i] = m["leaf_segment_regressions_total"]
		leaseRegressions[i] = m["leaf_snowflake_lease_regressions_total"]
	}
	l.stop()
	readyPolls := make([][]poll, len(ins))
	for i := range ins {
		readyPolls[i] = readyz[i].stop()
	}
	final := maxIDs(t, dbB)
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, sh.name)
	r.add("instances", len(ins))
	r.add("copy_ms", copied-copyAt)
	r.add("lost_window_ms", retargetAt-copied)
	r.add("failover_ms", failoverTook)
	samples := l.samples()
	checkDuplicates(r, l)
	addStatuses(r, l, samples)

	// What B missed: the ranges [copy, failover) of each tag, and the ids
	// of them that were issued.
	var lostRange, lostIssued int64
	for _, tag := range l.tagNames {
		lo, hi := atCopy[tag], atFailover[tag]
		lostRange += hi - lo
		for _, ref := range l.segRefs(tag) {
			if ref.id >= lo && ref.id < hi {
				lostIssued++
			}
		}
	}
	r.add("lost_window_range", lostRange)
	r.add("lost_window_ids", lostIssued)

	// How far the rows were moved: from each regression logged, and from
	// the rows themselves.
	var moves []string
	for i, in := range ins {
		lines := in.logs.withMsg("segment: the database went back in time")
		for _, ln := range lines {
			found, _ := ln.num("max_id_found")
			moved, _ := ln.num("new_max_id")
			moves = append(moves, fmt.Sprintf("%s:%s:%d->%d(+%d)", in.name, ln.str("tag"), found, moved, moved-found))
			if ln.str("err") != "" {
				t.Logf("instance %s could not move %s forward: %s", in.name, ln.str("tag"), ln.str("err"))
			}
		}
		r.add("regression_lines_"+in.name, len(lines))
		if len(lines) > 0 {
			r.add("regression_after_failover_ms_"+in.name, clk.at(lines[0].at)-retargetAt)
		}
		r.add("regressions_metric_"+in.name, segRegressions[i])
		if lossy {
			r.bound("regression_logged_"+in.name, len(lines) > 0 && segRegressions[i] > 0,
				"instance %s logged %d segment regression ERRORs, leaf_segment_regressions_total = %v; want both above 0",
				in.name, len(lines), segRegressions[i])
		} else {
			r.bound("no_regression_"+in.name, len(lines) == 0 && segRegressions[i] == 0,
				"instance %s logged %d segment regression ERRORs, leaf_segment_regressions_total = %v; "+
					"want none: the standby lacked no acknowledged commit", in.name, len(lines), segRegressions[i])
		}
	}
	t.Logf("rows moved: %s", strings.Join(moves, " "))
	var beyond []string
	for _, tag := range l.tagNames {
		beyond = append(beyond, fmt.Sprintf("%s:+%d", tag, final[tag]-atFailover[tag]))
	}
	r.add("rows_past_lost_window", strings.Join(beyond, ","))

	// Snowflake: a renewal on B finds the lease older than the holder left
	// it; the holder stops issuing for the lease TTL less the margin.
	snow503, segAfter := 0, 0
	for _, s := range samples {
		if s.start < retargetAt || s.status == 200 {
			continue
		}
		if s.op.segment() {
			segAfter++
		} else if s.status == 503 {
			snow503++
		}
	}
	r.add("snowflake_503_after_failover", snow503)
	r.add("segment_non2xx_after_failover", segAfter)
	for i, in := range ins {
		lines := in.logs.withMsg("snowflake: the database went back in time")
		r.add("lease_regression_lines_"+in.name, len(lines))
		r.add("lease_regressions_metric_"+in.name, leaseRegressions[i])
		if !lossy {
			r.bound("no_lease_regression_"+in.name, len(lines) == 0,
				"instance %s logged %d lease regressions; want none", in.name, len(lines))
		}
		if len(lines) == 0 {
			continue
		}
		// How long the instance issued no snowflake id: from the
		// regression to its next snowflake 200.
		at := clk.at(lines[0].at)
		resumed := time.Duration(-1)
		for _, s := range samples {
			if int(s.target) == i && !s.op.segment() && s.status == 200 && s.start > at {
				resumed = s.start + s.dur
				break
			}
		}
		r.add("lease_regression_after_failover_ms_"+in.name, at-retargetAt)
		if resumed >= 0 {
			r.add("snowflake_quiet_ms_"+in.name, resumed-at)
		} else {
			r.add("snowflake_quiet_ms_"+in.name, "until_end")
		}
	}

	// /readyz all along.
	bad, polls := 0, 0
	var lat []time.Duration
	var spans []string
	for i, in := range ins {
		first, last, n := time.Duration(-1), time.Duration(0), 0
		for _, p := range readyPolls[i] {
			polls++
			lat = append(lat, p.dur)
			if p.status == 200 {
				continue
			}
			if n == 0 {
				first = p.start
				t.Logf("instance %s: /readyz at %v (%v after the failover): %d %s", in.name,
					p.start.Round(time.Millisecond), (p.start - retargetAt).Round(time.Millisecond), p.status, p.body)
			}
			last = p.start + p.dur
			n++
		}
		bad += n
		if n > 0 {
			spans = append(spans, fmt.Sprintf("instance %s: %d polls not 200 from %v to %v after the failover",
				in.name, n, (first-retargetAt).Round(time.Millisecond), (last-retargetAt).Round(time.Millisecond)))
		}
	}
	r.add("readyz_polls", polls)
	r.add("readyz_non200", bad)
	r.add("readyz_max_ms", maxDur(lat))
	r.bound("readyz", bad == 0, "%d of %d /readyz polls were not 200%s", bad, polls, listed(spans))
	r.print()
}

// lostWindowOpen says what the lost window still waits for, or "": every
// instance has received a max_id past the copy for each of its tags, and
// has renewed its worker lease on A since the copy.
func lostWindowOpen(tb testing.TB, ins []*instance, tagsOf [][]string, atCopy map[string]int64,
	workerIDs []int64, leasesAtCopy, leasesNow map[int64]int64) string {
	tb.Helper()
	for i, in := range ins {
		if waiting := rangesPastCopy(tb, in, tagsOf[i], atCopy); waiting != "" {
			return waiting
		}
		if w := workerIDs[i]; leasesNow[w] <= leasesAtCopy[w] {
			return fmt.Sprintf("instance %s has not renewed the lease of worker id %d since the copy", in.name, w)
		}
	}
	return ""
}

// rangesPastCopy says which of tags the instance has taken no range of
// past the copy yet, or "": the highest max_id it received for each is above
// the row's max_id in the copy.
func rangesPastCopy(tb testing.TB, in *instance, tags []string, atCopy map[string]int64) string {
	tb.Helper()
	var v struct {
		Segments []struct {
			Tag       string `json:"tag"`
			HighMaxID string `json:"high_max_id"`
		} `json:"segments"`
	}
	fetchJSON(tb, in, "/api/admin/segments", &v)
	high := map[string]int64{}
	for _, s := range v.Segments {
		high[s.Tag], _ = strconv.ParseInt(s.HighMaxID, 10, 64)
	}
	for _, tag := range tags {
		if high[tag] <= atCopy[tag] {
			return fmt.Sprintf("instance %s has taken no range of %s past the copy (max_id %d, copy %d)",
				in.name, tag, high[tag], atCopy[tag])
		}
	}
	return ""
}

// copyDatabase copies database db from server a to server b with
// mariadb-dump (one consistent snapshot) and the mariadb client.
func copyDatabase(tb testing.TB, a, b *mariadbtest.Server, db string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	conn := func(s *mariadbtest.Server) []string {
		host, port, _ := strings.Cut(s.Addr(), ":")
		return []string{"--protocol=tcp", "--host=" + host, "--port=" + port, "--user=root"}
	}
	dump := exec.CommandContext(ctx, "mariadb-dump", append(conn(a), "--single-transaction", "--databases", db)...)
	var out, errs bytes.Buffer
	dump.Stdout, dump.Stderr = &out, &errs
	if err := dump.Run(); err != nil {
		tb.Fatalf("mariadb-dump: %v\n%s", err, errs.String())
	}
	load := exec.CommandContext(ctx, "mariadb", conn(b)...)
	load.Stdin = &out
	if msg, err := load.CombinedOutput(); err != nil {
		tb.Fatalf("mariadb < dump: %v\n%s", err, msg)
	}
}

// scrapeMetrics reads the instance's /metrics and sums each metric over its
// labels.
func scrapeMetrics(tb testing.TB, in *instance) map[string]float64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	status, _, body, err := get(ctx, http.DefaultClient, in.base()+"/metrics", "")
	if err != nil || status != 200 {
		tb.Fatalf("instance %s: GET /metrics: %d %v", in.name, status, err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(name, '{'); i >= 0 {
			_, rest, _ = strings.Cut(line[i:], "} ")
			name = line[:i]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			out[name] += v
		}
	}
	return out
}
