package faults

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/tcpproxy"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store/storetest"
)

// adminToken is the admin API's token in every scenario.
const adminToken = "fault-suite-token"

// TestDatabaseCut: two instances reach the database through a proxy that,
// after a warm-up, closes every connection and refuses new ones (a host
// gone away), then passes again.
func TestDatabaseCut(t *testing.T) { testOutage(t, "cut") }

// TestDatabaseBlackhole: the same with a proxy that holds every connection
// and forwards nothing (a network that drops every packet): nothing fails,
// everything waits, and only deadlines end the waits.
func TestDatabaseBlackhole(t *testing.T) { testOutage(t, "blackhole") }

// Bounds of the outage scenarios.
const (
	outageStoreTimeout = 2 * time.Second
	// bound503 bounds every 503 once an instance has answered its first
	// one: with the buffers empty and the store known down, the answer
	// involves no database.
	bound503 = 50 * time.Millisecond
	// boundRecovery bounds the time from the database's return to the
	// first 200 of each kind of request that failed during the outage.
	boundRecovery = time.Second
	// boundReadyz bounds every /readyz answer during the outage.
	boundReadyz = 100 * time.Millisecond
	// boundAdmin bounds every admin API answer during the outage.
	boundAdmin = outageStoreTimeout + 500*time.Millisecond
)

func testOutage(t *testing.T, mode string) {
	requireSuite(t)
	var (
		// The warm-up sets how long the buffers last once the database
		// is gone: the step doubles at each load while a segment lasts
		// under 15 minutes, so under steady load the buffers hold 0.8 to
		// 2.6 times the time the load has run, whatever its rate (the
		// current segment lasts about as long as all before it, and the
		// next one, loaded at 10% of it, twice as long). 2 s of warm-up
		// empties them 1.6 to 5.2 s into the short outage of 6 s.
		warmup = sized(2*time.Second, 3*time.Second)
		down   = sized(6*time.Second, 20*time.Second)
		after  = 5 * time.Second
		// leaseAge, when set, is how long before the outage the
		// instances renew their worker leases for the last time: an
		// instance stops issuing snowflake ids 25 s after its last
		// renewal, so with 9 s the full outage of 20 s outlasts the lease
		// by 4 s and snowflake fails and recovers too.
		leaseAge = sized(0, 9*time.Second)
	)

	dsn := storetest.MySQL(t)
	leafCommand(t, "migrate", "--mysql-dsn", dsn)
	tags := []string{"outage-a", "outage-b"}
	db := openDB(t, dsn)
	createTags(t, db, 100, tags...)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.Start(t, cfg.Addr)
	proxied := withAddr(t, dsn, proxy.Addr())
	// The ranges by the doubling alone (--ride-through 0): the buffers run
	// out within the outage, whose 503s are what the scenario measures.
	// With the default they hold 30 s at the rate of the load and outlast
	// it (RELIABILITY.md).
	ins := newInstances(t, "outage", 2, func(int) []string {
		return []string{"--mysql-dsn", proxied, "--store-timeout", outageStoreTimeout.String(), "--admin-token", adminToken,
			"--ride-through", "0"}
	})
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}
	if leaseAge > 0 {
		waitLeaseRenewals(t, db, len(ins))
		time.Sleep(leaseAge - warmup)
	}

	clk := newClock()
	readyz := pollReadyz(t, clk, ins)
	l := startLoad(t, clk, loadConfig{
		targets: ins,
		tags:    [][]string{tags, tags},
		workers: 4,
		pace:    10 * time.Millisecond,
		mix:     mix{weights: [numOps]int{segGet: 4, segBatch: 3, snowGet: 2, snowBatch: 1}, batch: 20},
	})
	time.Sleep(warmup)

	buffered := make([]int64, len(ins))
	for i, in := range ins {
		buffered[i] = bufferedIDs(t, in)
	}
	cutAt := clk.now()
	if mode == "cut" {
		proxy.Cut()
	} else {
		proxy.Blackhole()
	}
	admin := make([]*poller, len(ins))
	for i, in := range ins {
		admin[i] = startPoller(t, clk, in.base()+"/api/admin/tags", adminToken, 250*time.Millisecond)
	}
	time.Sleep(down)
	adminPolls := make([][]poll, len(ins))
	for i := range ins {
		adminPolls[i] = admin[i].stop()
	}
	passAt := clk.now()
	proxy.Pass()
	time.Sleep(after)
	l.stop()
	readyPolls := make([][]poll, len(ins))
	for i := range ins {
		readyPolls[i] = readyz[i].stop()
	}
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, mode)
	r.add("instances", len(ins))
	r.add("outage_s", down.Seconds())
	samples := l.samples()
	checkDuplicates(r, l)
	addStatuses(r, l, samples)
	o := outageFigures{clk: clk, cutAt: cutAt, passAt: passAt, tags: l.tagNames}
	for i, in := range ins {
		o.instance(r, in, i, samples, buffered[i], readyPolls[i], adminPolls[i])
	}
	o.report(r)
	r.print()
}

// outageFigures measures each instance against the bounds of an outage and
// gathers the worst figures over the instances.
type outageFigures struct {
	clk            clock
	cutAt, passAt  time.Duration
	tags           []string
	buffered       []int64
	drain, notice  []time.Duration
	noticedFirst   int // instances whose store was known down before the buffers ran out
	max503, p99503 time.Duration
	slow503, n503  int
	segRecovery    time.Duration
	snowRecovery   time.Duration
	snowFailed     int
	afterRecovery  int
	readyzMax      time.Duration
	readyzBad      int
	readyzPolls    int
	readyzAfterBad int
	adminMax       time.Duration
	adminBad       int
	adminPolls     int
}

func (o *outageFigures) instance(r *report, in *instance, idx int, all []sample, buffered int64, ready, admin []poll) {
	r.tb.Helper()
	name := in.name
	var mine []sample
	for _, s := range all {
		if int(s.target) == idx {
			mine = append(mine, s)
		}
	}
	o.buffered = append(o.buffered, buffered)

	// The buffers were empty when the first segment request that was
	// answered 503 during the outage began; the fast 503s are those that
	// began after the first 503 answer.
	drained, first503 := time.Duration(-1), time.Duration(-1)
	for _, s := range mine {
		if s.status == 503 && s.op.segment() && s.start >= o.cutAt && s.start < o.passAt {
			if drained < 0 || s.start < drained {
				drained = s.start
			}
			if end := s.start + s.dur; first503 < 0 || end < first503 {
				first503 = end
			}
		}
	}
	r.bound("buffers_drained_"+name, first503 >= 0,
		"instance %s answered a segment request 503 during the outage: the buffers (%d ids at the start of the outage) ran out", name, buffered)
	notice := time.Duration(-1)
	down := in.logs.withMsg("store not answering")
	if len(down) > 0 {
		notice = o.clk.at(down[0].at) - o.cutAt
	}
	if first503 >= 0 {
		o.drain = append(o.drain, drained-o.cutAt)
		o.notice = append(o.notice, notice)
		if notice >= 0 && notice <= drained-o.cutAt {
			o.noticedFirst++
		}

		var lat []time.Duration
		slow := 0
		for _, s := range mine {
			if s.status == 503 && s.start >= first503 {
				lat = append(lat, s.dur)
				if s.dur > bound503 {
					slow++
				}
			}
		}
		o.n503 += len(lat)
		o.slow503 += slow
		o.max503 = max(o.max503, maxDur(lat))
		o.p99503 = max(o.p99503, percentile(lat, 0.99))
		r.bound("fast_503_"+name, slow == 0,
			"instance %s: %d of %d answers 503 after its first took longer than %v (max %v)",
			name, slow, len(lat), bound503, maxDur(lat).Round(time.Microsecond))
	}

	// Recovery, per kind of request (each tag, and snowflake): the first
	// 200 after the database is back, then nothing but 200s.
	streams := map[string][]sample{}
	for _, s := range mine {
		key := "snowflake"
		if s.op.segment() {
			key = o.tags[s.tag]
		}
		streams[key] = append(streams[key], s)
	}
	for _, key := range slices.Sorted(maps.Keys(streams)) {
		ss := streams[key]
		failed := 0
		for _, s := range ss {
			if s.status != 200 && s.start+s.dur >= o.cutAt && s.start < o.passAt {
				failed++
			}
		}
		if key == "snowflake" {
			o.snowFailed += failed
		}
		if failed == 0 {
			continue
		}
		firstOK := time.Duration(-1)
		for _, s := range ss {
			if end := s.start + s.dur; s.status == 200 && end >= o.passAt && (firstOK < 0 || end < firstOK) {
				firstOK = end
			}
		}
		if firstOK < 0 {
			r.bound("recovery_"+name+"_"+key, false, "instance %s: no 200 for %s after the database came back", name, key)
			continue
		}
		rec := firstOK - o.passAt
		if key == "snowflake" {
			o.snowRecovery = max(o.snowRecovery, rec)
		} else {
			o.segRecovery = max(o.segRecovery, rec)
		}
		r.bound("recovery_"+name+"_"+key, rec <= boundRecovery,
			"instance %s: first 200 for %s %v after the database came back (%d failed during the outage), want within %v",
			name, key, rec.Round(time.Millisecond), failed, boundRecovery)
		bad := map[int]int{}
		n := 0
		for _, s := range ss {
			if s.start >= firstOK && s.status != 200 {
				bad[int(s.status)]++
				n++
			}
		}
		o.afterRecovery += n
		r.bound("after_recovery_"+name+"_"+key, n == 0,
			"instance %s: %d requests for %s failed after its first 200 once the database was back (by status: %v)", name, n, key, bad)
	}

	// /readyz during the outage: 200, fast, every time.
	bad := 0
	var lat []time.Duration
	for _, p := range ready {
		if p.start < o.cutAt || p.start >= o.passAt {
			if p.start >= o.passAt && p.status != 200 {
				o.readyzAfterBad++
			}
			continue
		}
		lat = append(lat, p.dur)
		if p.status != 200 || p.dur > boundReadyz {
			if bad == 0 {
				r.tb.Logf("instance %s: /readyz at %v: %d in %v: %s", name, p.start.Round(time.Millisecond), p.status, p.dur, p.body)
			}
			bad++
		}
	}
	o.readyzPolls += len(lat)
	o.readyzBad += bad
	o.readyzMax = max(o.readyzMax, maxDur(lat))
	r.bound("readyz_"+name, bad == 0 && len(lat) > 0,
		"instance %s: %d of %d /readyz polls during the outage were not 200 within %v (max %v)",
		name, bad, len(lat), boundReadyz, maxDur(lat).Round(time.Microsecond))

	// The admin API during the outage: 503 with Retry-After, in time.
	bad = 0
	lat = lat[:0]
	for _, p := range admin {
		if p.start+p.dur >= o.passAt {
			continue
		}
		lat = append(lat, p.dur)
		if p.status != 503 || !p.retryAfter || p.dur > boundAdmin {
			if bad == 0 {
				r.tb.Logf("instance %s: admin at %v: %d in %v (Retry-After %v): %s", name, p.start.Round(time.Millisecond),
					p.status, p.dur, p.retryAfter, p.body)
			}
			bad++
		}
	}
	o.adminPolls += len(lat)
	o.adminBad += bad
	o.adminMax = max(o.adminMax, maxDur(lat))
	r.bound("admin_"+name, bad == 0 && len(lat) > 0,
		"instance %s: %d of %d GET /api/admin/tags during the outage were not 503 with Retry-After within %v (max %v)",
		name, bad, len(lat), boundAdmin, maxDur(lat).Round(time.Millisecond))

	// One line when the store stops answering, one when it answers again.
	up := in.logs.withMsg("store answering again")
	r.bound("log_lines_"+name, len(down) == 1 && len(up) == 1,
		`instance %s logged "store not answering" %d times and "store answering again" %d times, want once each`,
		name, len(down), len(up))
}

func (o *outageFigures) report(r *report) {
	r.add("buffered_ids", joinInts(o.buffered))
	r.add("drain_ms", joinDurs(o.drain))
	r.add("notice_ms", joinDurs(o.notice))
	r.add("noticed_before_drain", o.noticedFirst)
	r.add("http_503_after_first", o.n503)
	r.add("max_503_ms", o.max503)
	r.add("p99_503_ms", o.p99503)
	r.add("slow_503", o.slow503)
	r.add("recovery_ms", o.segRecovery)
	r.add("snowflake_failed", o.snowFailed)
	r.add("snowflake_recovery_ms", o.snowRecovery)
	r.add("after_recovery_non2xx", o.afterRecovery)
	r.add("readyz_polls", o.readyzPolls)
	r.add("readyz_max_ms", o.readyzMax)
	r.add("readyz_bad", o.readyzBad)
	r.add("readyz_non200_after", o.readyzAfterBad)
	r.add("admin_polls", o.adminPolls)
	r.add("admin_max_ms", o.adminMax)
	r.add("admin_bad", o.adminBad)
}

// waitLeaseRenewals waits until n worker leases have been renewed since
// they were taken (the heartbeat renews every 10 s).
func waitLeaseRenewals(tb testing.TB, db *sql.DB, n int) {
	tb.Helper()
	first := leaseExpiries(tb, db)
	if len(first) != n {
		tb.Fatalf("%d worker leases, want %d", len(first), n)
	}
	testkit.WaitFor(tb, 30*time.Second, "the worker leases to be renewed", func() bool {
		for id, exp := range leaseExpiries(tb, db) {
			if exp <= first[id] {
				return false
			}
		}
		return true
	})
}

// bufferedIDs is how many segment ids the instance holds in its buffers,
// read from the admin API.
func bufferedIDs(tb testing.TB, in *instance) int64 {
	tb.Helper()
	var v struct {
		Segments []struct {
			Segments [2]*struct {
				Remaining string `json:"remaining"`
			} `json:"segments"`
		} `json:"segments"`
	}
	fetchJSON(tb, in, "/api/admin/segments", &v)
	var n int64
	for _, b := range v.Segments {
		for _, s := range b.Segments {
			if s != nil {
				k, _ := strconv.ParseInt(s.Remaining, 10, 64)
				n += k
			}
		}
	}
	return n
}

// fetchJSON GETs path from the instance with the admin token and decodes
// the 200 answer into v.
func fetchJSON(tb testing.TB, in *instance, path string, v any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	status, _, body, err := get(ctx, http.DefaultClient, in.base()+path, adminToken)
	if err != nil || status != 200 {
		tb.Fatalf("instance %s: GET %s: %d %v %s", in.name, path, status, err, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		tb.Fatalf("instance %s: GET %s: %v", in.name, path, err)
	}
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, "/")
}

func joinDurs(v []time.Duration) string {
	s := make([]string, len(v))
	for i, d := range v {
		s[i] = fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
	}
	return strings.Join(s, "/")
}
