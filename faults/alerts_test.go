package faults

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/tcpproxy"
	"github.com/leafid/leaf/internal/testkit"
)

// Alerts the scenario waits for, as named in the rules file.
const (
	alertStoreDown  = "LeafStoreDown"
	alertRegression = "LeafSegmentRegression"
)

// Bounds of TestAlerts, on top of the rule's own for.
const (
	// boundStoreDownFire bounds the time from the kill of the database to
	// LeafStoreDown firing, less the rule's for: an instance on which
	// nothing calls the store notices within 5 s (its probe), Prometheus
	// at its next scrape and its next evaluation (1 s each).
	boundStoreDownFire = 10 * time.Second
	// boundStoreDownResolve bounds the time from the database answering
	// again to LeafStoreDown gone: the probe of a store that is down runs
	// every 200 ms, then a scrape and an evaluation.
	boundStoreDownResolve = 5 * time.Second
	// boundRegressionFire bounds the time from the failover to
	// LeafSegmentRegression firing (it has no for): the instance fences
	// at its next load or tag refresh (2 s here), then a scrape and an
	// evaluation.
	boundRegressionFire = 10 * time.Second
)

// TestAlerts runs the alert rules users deploy (deploy/prometheus/
// leaf-alerts.yml, unchanged) in a real Prometheus server that scrapes two
// instances and evaluates the rules every second. Two instances reach
// server A through a proxy, under a light load. While all is well, no alert
// may be pending or firing. Then A is killed with SIGKILL: LeafStoreDown
// must fire for each instance once the rule's for has passed, and be gone
// soon after A is started again. Last, a failover to server B, a copy of A
// that missed the last writes, as in TestStaleFailover: each instance fences
// its tag and LeafSegmentRegression must fire for it. Every alert seen is
// logged with when it was first pending, first firing and last seen;
// LEAF_FAULTS_ALERTS_AFTER keeps the load on after the database's return,
// to watch the alerts whose windows outlive the outage.
func TestAlerts(t *testing.T) {
	requireSuite(t)
	mariadbtest.Require(t)
	promBin := requirePrometheus(t)
	var after time.Duration
	if v := os.Getenv(envAlertsAfter); v != "" {
		var err error
		if after, err = time.ParseDuration(v); err != nil || after < 0 {
			t.Fatalf("%s=%q: want a duration such as 16m", envAlertsAfter, v)
		}
	}
	var (
		quiet   = sized(15*time.Second, 45*time.Second)
		warmup  = 3 * time.Second
		minLost = 2 * time.Second
		maxLost = 25 * time.Second
	)
	// As in TestStaleFailover: the tag refresh finds rows gone back even
	// when no load is due.
	const tagRefresh = 2 * time.Second
	ldMix := mix{weights: [numOps]int{segGet: 4, segBatch: 3, snowGet: 2, snowBatch: 1}, batch: 20}

	a := mariadbtest.StartServer(t)
	mustExec(t, openDB(t, a.DSN("")), "CREATE DATABASE leaf")
	dsnA := a.DSN("leaf")
	leafCommand(t, "migrate", "--mysql-dsn", dsnA)
	// The tags of the outage, and one tag per instance for the failover,
	// asked for only from then on: under load the step grows at each
	// load, and a tag loaded since the start would hold more ids than the
	// lost window can wait for.
	shared := []string{"alerts-1", "alerts-2"}
	own := []string{"alerts-own-a", "alerts-own-b"}
	createTags(t, openDB(t, dsnA), 100, append(shared, own...)...)

	proxy := tcpproxy.Start(t, a.Addr())
	proxied := withAddr(t, dsnA, proxy.Addr())
	ins := newInstances(t, "alerts", 2, func(int) []string {
		return []string{"--mysql-dsn", proxied, "--admin-token", adminToken, "--tag-refresh", tagRefresh.String()}
	})
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}

	names := map[string]string{} // instance label -> instance name
	for _, in := range ins {
		names[in.addr] = in.name
	}
	clk := newClock()
	prom := startPrometheus(t, promBin, ins)
	watch := watchAlerts(t, clk, prom, 250*time.Millisecond)
	r := newReport(t, "alerts")
	r.add("instances", len(ins))

	// All is well.
	outageLoad := startLoad(t, clk, loadConfig{
		targets: ins, tags: [][]string{shared, shared}, workers: 2, pace: 20 * time.Millisecond, mix: ldMix,
	})
	testkit.WaitFor(t, 30*time.Second, "Prometheus to scrape every instance and evaluate every rule", func() bool {
		up := prom.query(t, "leaf_store_up")
		for _, in := range ins {
			if up[in.addr] != "1" {
				return false
			}
		}
		for _, rule := range prom.rules(t) {
			if rule.LastEvaluation.IsZero() {
				return false
			}
		}
		return true
	})
	quietFrom := clk.now()
	time.Sleep(quiet)
	quietTo := clk.now()
	rules := checkRules(r, prom.rules(t), clk, quietFrom)
	checkQuiet(r, prom, watch.between(quietFrom, quietTo), quiet, names)

	// The database dies.
	killAt := clk.now()
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	// Server B, for the failover, starts while the alert waits.
	b := mariadbtest.StartServer(t)
	downFor := rules[alertStoreDown]
	watch.waitFor(killAt, downFor+boundStoreDownFire+10*time.Second, func(al []promAlert) bool {
		return allInstances(ins, func(in *instance) bool {
			return hasAlert(al, alertStoreDown, "firing", map[string]string{"instance": in.addr})
		})
	})
	restartAt := clk.now()
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	backAt := clk.now()
	watch.waitFor(backAt, boundStoreDownResolve+10*time.Second, func(al []promAlert) bool {
		return !hasAlert(al, alertStoreDown, "", nil)
	})
	if after > 0 {
		t.Logf("the load goes on for %v after the database's return (%s)", after, envAlertsAfter)
		time.Sleep(after)
	}
	outageLoad.stop()
	r.add("store_down_for_s", downFor.Seconds())
	r.add("restart_ms", backAt-restartAt)
	for _, in := range ins {
		storeDownFigures(r, watch, clk, in, downFor, killAt, backAt)
	}

	// A failover to a copy that missed the last writes.
	failoverLoad := startLoad(t, clk, loadConfig{
		targets: ins, tags: [][]string{{own[0]}, {own[1]}}, workers: 2, pace: 10 * time.Millisecond, mix: ldMix,
	})
	time.Sleep(warmup)
	copyDatabase(t, a, b, "leaf")
	copied := clk.now()
	atCopy := maxIDs(t, openDB(t, b.DSN("leaf")))
	for {
		waiting := ""
		for i, in := range ins {
			if waiting = rangesPastCopy(t, in, own[i:i+1], atCopy); waiting != "" {
				break
			}
		}
		if waiting == "" && clk.now()-copied >= minLost {
			break
		}
		if clk.now()-copied > maxLost {
			t.Fatalf("after %v of lost window: %s", maxLost, waiting)
		}
		time.Sleep(200 * time.Millisecond)
	}
	retargetAt := clk.now()
	proxy.Retarget(b.Addr())
	r.add("lost_window_ms", retargetAt-copied)
	watch.waitFor(retargetAt, boundRegressionFire+10*time.Second, func(al []promAlert) bool {
		for i, in := range ins {
			if !hasAlert(al, alertRegression, "firing", map[string]string{"instance": in.addr, "tag": own[i]}) {
				return false
			}
		}
		return true
	})
	failoverLoad.stop()
	watch.stop()
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}
	for i, in := range ins {
		regressionFigures(r, watch, clk, in, own[i], retargetAt)
	}

	seen := map[string]bool{}
	for _, s := range watch.between(0, clk.now()) {
		for _, al := range s.alerts {
			seen[al.name()] = true
		}
	}
	r.add("alerts_seen", strings.Join(slices.Sorted(maps.Keys(seen)), ","))
	t.Logf("alerts (seconds on the scenario's clock; quiet %.1f to %.1f, A killed at %.1f and back at %.1f, failover at %.1f):\n  %s",
		quietFrom.Seconds(), quietTo.Seconds(), killAt.Seconds(), backAt.Seconds(), retargetAt.Seconds(),
		strings.Join(watch.history(names), "\n  "))
	r.print()

	for _, ld := range []struct {
		name string
		l    *load
	}{{"alerts_outage_load", outageLoad}, {"alerts_failover_load", failoverLoad}} {
		lr := newReport(t, ld.name)
		checkDuplicates(lr, ld.l)
		addStatuses(lr, ld.l, ld.l.samples())
		lr.print()
	}
}

// checkRules checks that Prometheus loaded the rules the scenario waits
// for and evaluated every rule without error since from, and returns the
// for of each alerting rule by name.
func checkRules(r *report, rules []promRule, clk clock, from time.Duration) map[string]time.Duration {
	r.tb.Helper()
	fors := map[string]time.Duration{}
	var bad []string
	for _, rule := range rules {
		if rule.Type != "alerting" {
			continue
		}
		fors[rule.Name] = time.Duration(rule.Duration * float64(time.Second))
		switch {
		case rule.Health != "ok":
			bad = append(bad, fmt.Sprintf("%s: health %s: %s", rule.Name, rule.Health, rule.LastError))
		case clk.at(rule.LastEvaluation) < from:
			bad = append(bad, fmt.Sprintf("%s: last evaluated %v, before the quiet phase",
				rule.Name, rule.LastEvaluation.Format(time.RFC3339Nano)))
		}
	}
	for _, name := range []string{alertStoreDown, alertRegression} {
		if _, ok := fors[name]; !ok {
			bad = append(bad, name+": not loaded")
		}
	}
	r.add("alert_rules", len(fors))
	r.bound("rules_evaluated", len(bad) == 0, "%d alerting rules loaded from %s; %d not evaluated as they should be%s",
		len(fors), alertRulesFile, len(bad), listed(bad))
	if len(bad) > 0 {
		r.tb.FailNow()
	}
	return fors
}

// checkQuiet checks that no alert was pending or firing in any answer of
// the quiet phase, that the phase was watched all along, and that every
// scrape of every instance in it succeeded: rules that saw no samples
// would be quiet too.
func checkQuiet(r *report, prom *promServer, snaps []alertSnap, quiet time.Duration, names map[string]string) {
	r.tb.Helper()
	failed := 0
	var seen []string
	for _, s := range snaps {
		if s.err != nil {
			failed++
			continue
		}
		for _, al := range s.alerts {
			if k := al.key(names) + " " + al.State; !slices.Contains(seen, k) {
				seen = append(seen, k)
			}
		}
	}
	// The polls run every 250 ms: at least half of them.
	enough := len(snaps) >= int(quiet/(500*time.Millisecond))
	r.add("quiet_s", quiet.Seconds())
	r.add("quiet_polls", len(snaps))
	r.add("quiet_alerts", len(seen))
	r.bound("quiet", len(seen) == 0 && failed == 0 && enough,
		"%d polls of /api/v1/alerts in %v of normal service, %d failed; alerts pending or firing: %d%s",
		len(snaps), quiet, failed, len(seen), listed(seen))

	// Scrapes, every promInterval: at least 80% of them, all successful.
	window := fmt.Sprintf("[%ds]", int(quiet.Seconds()))
	scrapes := prom.query(r.tb, "count_over_time(up{job=\"leaf\"}"+window+")")
	ok := prom.query(r.tb, "sum_over_time(up{job=\"leaf\"}"+window+")")
	want := int(0.8 * float64(quiet/promInterval))
	var bad []string
	addrs := slices.SortedFunc(maps.Keys(names), func(a, b string) int { return strings.Compare(names[a], names[b]) })
	for _, addr := range addrs {
		name := names[addr]
		n, _ := strconv.Atoi(scrapes[addr])
		if n < want || ok[addr] != scrapes[addr] {
			bad = append(bad, fmt.Sprintf("instance %s: %s scrapes, %s successful", name, scrapes[addr], ok[addr]))
		}
		r.add("quiet_scrapes_"+name, n)
	}
	r.bound("quiet_scraped", len(bad) == 0, "every instance scraped at least %d times in the last %v, every scrape successful%s",
		want, quiet, listed(bad))
}

// storeDownFigures measures LeafStoreDown on one instance: first pending
// and first firing after the kill, gone after the database's return.
func storeDownFigures(r *report, w *alertWatch, clk clock, in *instance, downFor, killAt, backAt time.Duration) {
	r.tb.Helper()
	on := map[string]string{"instance": in.addr}
	pending := w.first(killAt, func(al []promAlert) bool { return hasAlert(al, alertStoreDown, "pending", on) })
	firing := w.first(killAt, func(al []promAlert) bool { return hasAlert(al, alertStoreDown, "firing", on) })
	gone := w.first(backAt, func(al []promAlert) bool { return !hasAlert(al, alertStoreDown, "", on) })
	if lines := in.logs.withMsg("store not answering"); len(lines) > 0 {
		r.add("store_noticed_ms_"+in.name, clk.at(lines[0].at)-killAt)
	}
	r.add("store_down_pending_ms_"+in.name, since(pending, killAt))
	r.add("store_down_firing_ms_"+in.name, since(firing, killAt))
	r.add("store_down_gone_ms_"+in.name, since(gone, backAt))
	fire := firing - killAt
	r.bound("store_down_fired_"+in.name, firing >= 0 && fire >= downFor && fire <= downFor+boundStoreDownFire,
		"instance %s: %s firing %s after the database was killed, want between its for (%v) and %v",
		in.name, alertStoreDown, sinceText(firing, killAt), downFor, downFor+boundStoreDownFire)
	r.bound("store_down_gone_"+in.name, gone >= 0 && gone-backAt <= boundStoreDownResolve,
		"instance %s: %s gone %s after the database answered again, want within %v",
		in.name, alertStoreDown, sinceText(gone, backAt), boundStoreDownResolve)
}

// regressionFigures measures LeafSegmentRegression on one instance's own
// tag: firing after the failover, and the regression ERROR it follows.
func regressionFigures(r *report, w *alertWatch, clk clock, in *instance, tag string, retargetAt time.Duration) {
	r.tb.Helper()
	on := map[string]string{"instance": in.addr, "tag": tag}
	firing := w.first(retargetAt, func(al []promAlert) bool { return hasAlert(al, alertRegression, "firing", on) })
	if lines := in.logs.withMsg("segment: the database went back in time"); len(lines) > 0 {
		r.add("regression_logged_ms_"+in.name, clk.at(lines[0].at)-retargetAt)
	}
	r.add("regression_firing_ms_"+in.name, since(firing, retargetAt))
	r.bound("regression_fired_"+in.name, firing >= 0 && firing-retargetAt <= boundRegressionFire,
		"instance %s: %s for tag %s firing %s after the failover, want within %v",
		in.name, alertRegression, tag, sinceText(firing, retargetAt), boundRegressionFire)
}

// since is at-from for the report, or "never" when at is -1.
func since(at, from time.Duration) any {
	if at < 0 {
		return "never"
	}
	return at - from
}

// sinceText is at-from for a message, or "never" when at is -1.
func sinceText(at, from time.Duration) string {
	if at < 0 {
		return "never"
	}
	return (at - from).Round(time.Millisecond).String()
}

// allInstances reports whether cond holds for every instance.
func allInstances(ins []*instance, cond func(*instance) bool) bool {
	for _, in := range ins {
		if !cond(in) {
			return false
		}
	}
	return true
}
