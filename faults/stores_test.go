package faults

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/tcpproxy"
)

// TestStores runs one number space on three independent MariaDB servers
// (package storeset): the set is made with `leaf store init`, and three
// instances are each given all three stores, each preferring another, so
// that each takes its ranges from its own store. Four tags are loaded from
// the first second. Then, in order:
//
//  1. the server of store a is killed with SIGKILL and, a few seconds
//     later, started again;
//  2. store b is restored from a dump taken at least 10 s earlier: its
//     instances' connections are cut, the dump is loaded into the server,
//     so that its leaf_alloc and leaf_marks go back in time, and a fresh
//     instance D (preferring b) starts while b is still cut, before the
//     connections pass again;
//  3. a fourth store d is added with `leaf store add`;
//  4. store c is retired with `leaf store retire`;
//  5. every instance is restarted, one after another, with the new list
//     of stores.
//
// No id may be issued twice; no segment request may be answered 503, since
// a store can always serve; and for each instance and tag, ids handed out
// at least 1 s apart must be in the order they were handed out.
func TestStores(t *testing.T) {
	requireSuite(t)
	mariadbtest.Require(t)
	testStoresScenario(t, false)
}

// TestStoresGalera is TestStores with store a a 3-node Galera cluster: step
// 1 kills the node that store a's instances use first, and restarts it
// once the others commit again. Full size only (make faults): the cluster
// takes 15 s to start and a killed node stalls its commits for 6 s.
func TestStoresGalera(t *testing.T) {
	requireSuite(t)
	if level != "full" {
		t.Skipf("runs at the full size only (%s=full, make faults)", envLevel)
	}
	mariadbtest.RequireGalera(t)
	testStoresScenario(t, true)
}

// Bounds and sizes of the stores scenarios.
const (
	storesDB   = "leaf"
	storesStep = 100
	// orderGap: ids handed out at least this far apart by one instance,
	// of one tag, must be in the order they were handed out.
	orderGap = time.Second
	// dumpAge is how much older than the restore the dump must be.
	dumpAge = 10 * time.Second
	// maxLostWindow bounds the wait, after the dump, for store b to hand
	// out a range of every tag past it.
	maxLostWindow = 40 * time.Second
)

// setStore is one store of the set: a standalone server reached by the
// instances through a proxy, or a Galera cluster reached directly.
type setStore struct {
	name    string
	server  *mariadbtest.Server  // nil for a cluster
	cluster *mariadbtest.Cluster // nil for a standalone server
	proxy   *tcpproxy.Proxy      // standalone only
}

func startSetStore(tb testing.TB, name string) *setStore {
	tb.Helper()
	s := &setStore{name: name, server: mariadbtest.StartServer(tb)}
	mustExec(tb, openDB(tb, s.server.DSN("")), "CREATE DATABASE "+storesDB)
	s.proxy = tcpproxy.Start(tb, s.server.Addr())
	return s
}

func galeraSetStore(tb testing.TB, name string) *setStore {
	tb.Helper()
	started := time.Now()
	c := mariadbtest.StartGalera(tb, galeraNodes)
	tb.Logf("%d-node cluster Synced in %v", galeraNodes, time.Since(started).Round(time.Millisecond))
	createDatabase(tb, c.Nodes(), storesDB)
	return &setStore{name: name, cluster: c}
}

// first is the server the store's DSN names: the server, or node 0.
func (s *setStore) first() *mariadbtest.Server {
	if s.cluster != nil {
		return s.cluster.Nodes()[0]
	}
	return s.server
}

// command are the flags giving the store to a one-shot leaf command:
// direct, not through the proxy.
func (s *setStore) command() []string {
	out := []string{"--store", s.name + "=" + s.first().DSN(storesDB)}
	if s.cluster != nil {
		out = append(out, "--store-addrs", s.name+"="+s.nodeAddrs())
	}
	return out
}

// serve are the flags giving the store to an instance.
func (s *setStore) serve(tb testing.TB) []string {
	if s.cluster != nil {
		return s.command()
	}
	return []string{"--store", s.name + "=" + withAddr(tb, s.server.DSN(storesDB), s.proxy.Addr())}
}

func (s *setStore) nodeAddrs() string {
	var addrs []string
	for _, n := range s.cluster.Nodes() {
		addrs = append(addrs, n.Addr())
	}
	return strings.Join(addrs, ",")
}

// kill kills the server, or node 0 of the cluster, with SIGKILL.
func (s *setStore) kill() error { return s.first().Kill() }

// restart starts the killed server again, or node 0 once it has rejoined.
func (s *setStore) restart() error {
	if s.cluster != nil {
		return s.cluster.Restart(0)
	}
	return s.server.Start()
}

// storesFlags are the command flags of stores, in their order.
func storesFlags(stores ...*setStore) []string {
	var out []string
	for _, s := range stores {
		out = append(out, s.command()...)
	}
	return out
}

// serveFlags are an instance's store flags, preferred first.
func serveFlags(tb testing.TB, stores ...*setStore) []string {
	var out []string
	for _, s := range stores {
		out = append(out, s.serve(tb)...)
	}
	return out
}

// window is a time an instance's process served: from its "serving" line
// to the moment it was told to stop.
type window struct{ from, to time.Duration }

// runLog records the windows of the processes of the instances.
type runLog map[string][]window

func (r runLog) started(clk clock, in *instance) {
	r[in.name] = append(r[in.name], window{from: clk.now(), to: -1})
}

func (r runLog) stopping(clk clock, in *instance) {
	if w := r[in.name]; len(w) > 0 {
		w[len(w)-1].to = clk.now()
	}
}

// run is the index of the process of in that served all of s, or -1.
func (r runLog) run(in string, s sample) int {
	for i, w := range r[in] {
		if s.start >= w.from && (w.to < 0 || s.start+s.dur <= w.to) {
			return i
		}
	}
	return -1
}

func testStoresScenario(t *testing.T, galera bool) {
	var (
		warmup  = sized(3*time.Second, 8*time.Second)
		down    = sized(3*time.Second, 8*time.Second)
		settle  = sized(3*time.Second, 6*time.Second) // after each step
		final   = sized(4*time.Second, 10*time.Second)
		workers = sized(2, 3)
	)
	started := time.Now()
	var a *setStore
	if galera {
		a = galeraSetStore(t, "a")
	} else {
		a = startSetStore(t, "a")
	}
	b, c, d := startSetStore(t, "b"), startSetStore(t, "c"), startSetStore(t, "d")
	t.Logf("servers up in %v", time.Since(started).Round(time.Millisecond))

	leafCommand(t, append([]string{"store", "init"}, storesFlags(a, b, c)...)...)
	tags := []string{"stores-1", "stores-2", "stores-3", "stores-4"}
	for _, tag := range tags {
		leafCommand(t, append([]string{"tag", "add", tag, "--step", fmt.Sprint(storesStep)}, storesFlags(a, b, c)...)...)
	}

	// A, B and C prefer a, b and c; D, started later, prefers b.
	lists := [][]*setStore{{a, b, c}, {b, c, a}, {c, a, b}, {b, a, c}}
	// --ride-through 2s: with the default 30 s a range lasts 30 s at
	// least, and a store may take its next range of a tag later than the
	// scenario's 40 s window after the dump; the stores' faults do not
	// depend on it.
	ins := newInstances(t, "stores", 4, func(i int) []string {
		return append(serveFlags(t, lists[i]...), "--admin-token", adminToken, "--ride-through", "2s")
	})
	instD := ins[3]
	clk := newClock()
	runs := runLog{}
	if err := startAll(ins[:3]); err != nil {
		t.Fatal(err)
	}
	for _, in := range ins[:3] {
		runs.started(clk, in)
	}
	all := make([][]string, len(ins))
	for i := range all {
		all[i] = tags
	}
	l := startLoad(t, clk, loadConfig{
		targets: ins,
		tags:    all,
		workers: workers,
		pace:    10 * time.Millisecond,
		mix:     mix{weights: [numOps]int{segGet: 4, segBatch: 4, snowGet: 1, snowBatch: 1}, batch: 20},
	})
	var steps []string
	step := func(name string) time.Duration {
		at := clk.now()
		steps = append(steps, fmt.Sprintf("%s@%.1fs", name, at.Seconds()))
		t.Logf("%v: %s", at.Round(time.Millisecond), name)
		return at
	}
	time.Sleep(warmup)

	// 1. kill -9 one server, bring it back.
	killAt := step("kill_a")
	if err := a.kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(down)
	restartA := step("restart_a")
	if err := a.restart(); err != nil {
		t.Fatal(err)
	}
	backAt := step("a_back")
	time.Sleep(settle)

	// 2. restore b from a dump at least dumpAge old.
	dumpAt := step("dump_b")
	dump := dumpDatabase(t, b.server, storesDB)
	dbB := openDB(t, b.server.DSN(storesDB))
	atDump := maxIDs(t, dbB)
	time.Sleep(dumpAge)
	for {
		behind := ""
		now := maxIDs(t, dbB)
		for _, tag := range tags {
			if now[tag] <= atDump[tag] {
				behind = tag
			}
		}
		if behind == "" {
			break
		}
		if clk.now()-dumpAt > maxLostWindow {
			t.Fatalf("store b took no range of %s in the %v after the dump", behind, maxLostWindow)
		}
		time.Sleep(200 * time.Millisecond)
	}
	beforeRestore := maxIDs(t, dbB)
	cutAt := step("cut_b")
	b.proxy.Cut()
	loadDump(t, b.server, dump)
	restored := maxIDs(t, dbB)
	step("restored_b")
	// D starts while b does not answer: it serves from a and c.
	if err := instD.start(); err != nil {
		t.Fatal(err)
	}
	runs.started(clk, instD)
	step("started_d")
	passAt := step("pass_b")
	b.proxy.Pass()
	time.Sleep(settle)

	// 3. add a fourth store.
	addAt := step("add_d")
	out := leafCommand(t, append(append([]string{"store", "add"}, storesFlags(a, b, c)...), d.command()[1])...)
	t.Logf("leaf store add:\n%s", out)
	time.Sleep(settle)

	// 4. retire one.
	retireAt := step("retire_c")
	out = leafCommand(t, append([]string{"store", "retire", "c"}, storesFlags(a, b, c, d)...)...)
	t.Logf("leaf store retire:\n%s", out)
	time.Sleep(settle)

	// 5. restart every instance with the new list of stores.
	restartAt := step("restart_instances")
	newLists := [][]*setStore{{a, b, d}, {b, d, a}, {d, a, b}, {d, b, a}}
	for i, in := range ins {
		runs.stopping(clk, in)
		if err := in.stop(); err != nil {
			t.Fatalf("instance %s: %v", in.name, err)
		}
		in.args = append(serveFlags(t, newLists[i]...), "--admin-token", adminToken)
		if err := in.start(); err != nil {
			t.Fatal(err)
		}
		runs.started(clk, in)
	}
	step("restarted")
	time.Sleep(final)
	l.stop()
	ran := clk.now()
	setVersions := make([]string, len(ins))
	for i, in := range ins {
		var st struct {
			Instance struct {
				Store struct {
					SetVersion int64 `json:"set_version"`
				} `json:"store"`
			} `json:"instance"`
		}
		fetchJSON(t, in, "/status.json", &st)
		setVersions[i] = fmt.Sprint(st.Instance.Store.SetVersion)
	}
	for _, in := range ins {
		runs.stopping(clk, in)
	}
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	scenario := "stores"
	if galera {
		scenario = "stores_galera"
	}
	r := newReport(t, scenario)
	r.add("seconds", ran.Seconds())
	r.add("steps", strings.Join(steps, ","))
	samples := l.samples()
	checkDuplicates(r, l)
	addStatuses(r, l, samples)

	// 503s: none for segment requests, since a store could always serve.
	phases := []struct {
		name string
		from time.Duration
	}{{"load", 0}, {"kill", killAt}, {"back", backAt}, {"restore", cutAt}, {"add", addAt}, {"retire", retireAt}, {"restart", restartAt}}
	// A snowflake request may be refused only while its instance has no
	// lease: from a renewal that finds the lease gone back in time to the
	// next lease, acquired from another store in a few milliseconds.
	leaseless := make([][]window, len(ins))
	for i, in := range ins {
		lines := in.logs.match(func(l logLine) bool {
			return strings.HasPrefix(l.msg(), "snowflake: the database went back in time") || l.msg() == "snowflake worker id acquired again"
		})
		for k, ln := range lines {
			if strings.HasPrefix(ln.msg(), "snowflake: the database went back in time") {
				w := window{from: clk.at(logTime(ln)), to: ran}
				if k+1 < len(lines) && lines[k+1].run == ln.run {
					w.to = clk.at(logTime(lines[k+1]))
				}
				leaseless[i] = append(leaseless[i], w)
			}
		}
	}
	seg503, snow503, snowOutside := 0, map[string]int{}, 0
	by := make([]int, len(phases))
	var first503, firstSnow []string
	for _, s := range samples {
		if s.status != 503 {
			continue
		}
		if !s.op.segment() {
			snow503[ins[s.target].name]++
			if !slices.ContainsFunc(leaseless[s.target], func(w window) bool { return s.start <= w.to && s.start+s.dur >= w.from }) {
				snowOutside++
				if len(firstSnow) < 5 {
					firstSnow = append(firstSnow, fmt.Sprintf("instance %s %s at %v", ins[s.target].name, s.op, s.start.Round(time.Millisecond)))
				}
			}
			continue
		}
		seg503++
		p := 0
		for i, ph := range phases {
			if s.start >= ph.from {
				p = i
			}
		}
		by[p]++
		if len(first503) < 5 {
			first503 = append(first503, fmt.Sprintf("instance %s %s %s at %v", ins[s.target].name, s.op, l.tagNames[s.tag], s.start.Round(time.Millisecond)))
		}
	}
	var byText []string
	for i, ph := range phases {
		byText = append(byText, fmt.Sprintf("%s:%d", ph.name, by[i]))
	}
	r.add("segment_503", seg503)
	r.add("segment_503_by_step", strings.Join(byText, ","))
	var snowText []string
	for _, in := range ins {
		snowText = append(snowText, fmt.Sprintf("%s:%d", in.name, snow503[in.name]))
	}
	r.add("snowflake_503", strings.Join(snowText, ","))
	var leaseText []string
	for _, in := range ins {
		leaseText = append(leaseText, fmt.Sprintf("%s:%d/%d", in.name,
			len(in.logs.withMsg("snowflake: the database went back in time")), len(in.logs.withMsg("snowflake worker id acquired again"))))
	}
	r.add("lease_regressions_reacquired", strings.Join(leaseText, ","))
	var gaps []string
	for i, ws := range leaseless {
		for _, w := range ws {
			gaps = append(gaps, fmt.Sprintf("%s:%.1f", ins[i].name, float64(w.to-w.from)/float64(time.Millisecond)))
		}
	}
	r.add("leaseless_ms", strings.Join(gaps, ","))
	r.bound("snowflake_no_503", snowOutside == 0,
		"%d snowflake requests answered 503 outside the moments an instance had no lease (regression found to lease acquired again: %s ms)%s",
		snowOutside, strings.Join(gaps, ","), listed(firstSnow))
	r.bound("segment_no_503", seg503 == 0, "%d segment requests answered 503 while a store could serve (by step %s)%s",
		seg503, strings.Join(byText, ","), listed(first503))

	// The restore: b's rows went back; each instance that took a range
	// of b afterwards found it behind a mark and took one past the jump.
	var back []string
	for _, tag := range tags {
		back = append(back, fmt.Sprintf("%s:%d", tag, beforeRestore[tag]-restored[tag]))
	}
	r.add("restore_rows_back", strings.Join(back, ","))
	r.add("dump_age_ms", cutAt-dumpAt)
	stale := 0
	var staleText []string
	for _, in := range ins {
		n := len(in.logs.withMsg("segment: the store went back in time"))
		stale += n
		staleText = append(staleText, fmt.Sprintf("%s:%d", in.name, n))
	}
	r.add("stale_found", strings.Join(staleText, ","))
	r.bound("stale_found", stale > 0, "%d lines of a store found behind its mark (%s), want some after the restore", stale, strings.Join(staleText, ","))
	downAtStart := instD.logs.withMsg("store open, not answering")
	r.bound("started_with_a_store_down", len(downAtStart) == 1 && downAtStart[0].str("store") == "b",
		"instance D logged %d lines of a store not answering at its start, want one for b", len(downAtStart))
	r.add("set_versions", strings.Join(setVersions, "/"))
	r.bound("set_version", !slices.ContainsFunc(setVersions, func(v string) bool { return v != "3" }),
		"instances serve under set versions %s, want 3 (init, add, retire)", strings.Join(setVersions, "/"))

	// Order: per instance and tag.
	worstProc, worstInst := time.Duration(-1), time.Duration(-1)
	var orderText []string
	for i, in := range ins {
		for ti, tag := range l.tagNames {
			p := inversion(l, i, int16(ti), func(s sample) int { return runs.run(in.name, s) })
			n := inversion(l, i, int16(ti), func(sample) int { return 0 })
			worstProc, worstInst = max(worstProc, p.gap), max(worstInst, n.gap)
			if n.gap >= 0 {
				orderText = append(orderText, fmt.Sprintf("instance %s %s: %s", in.name, tag, n.text))
			}
		}
	}
	r.add("worst_inversion_in_process_ms", fmtInversion(worstProc))
	r.add("worst_inversion_in_instance_ms", fmtInversion(worstInst))
	r.bound("order_in_process", worstProc < orderGap,
		"worst inversion within one process: ids handed out %s ms apart in the wrong order, want none %v apart", fmtInversion(worstProc), orderGap)
	r.bound("order_in_instance", worstInst < orderGap,
		"worst inversion within one instance, across its restarts: %s ms apart, want none %v apart%s", fmtInversion(worstInst), orderGap, listed(orderText))
	// How soon the instances noticed the stores back: from the restart
	// of a's server (its recovery included), from b's connections passing
	// again.
	var noticed []string
	for _, back := range []struct {
		store string
		at    time.Duration
	}{{"a", restartA}, {"b", passAt}} {
		for _, in := range ins {
			for _, ln := range in.logs.withMsg("store answering again") {
				if at := clk.at(logTime(ln)); ln.str("store") == back.store && at >= back.at-time.Second {
					noticed = append(noticed, fmt.Sprintf("%s%s:%.0f", back.store, in.name, float64(at-back.at)/float64(time.Millisecond)))
					break
				}
			}
		}
	}
	r.add("store_back_noticed_ms", strings.Join(noticed, ","))
	r.print()
}

// logTime is when the instance wrote the line, by its own clock (the
// suite's: the same machine); when the suite read it if it has none.
func logTime(l logLine) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, l.str("time")); err == nil {
		return t
	}
	return l.at
}

// fmtInversion is a worst inversion for the report: "none", or its gap.
func fmtInversion(d time.Duration) string {
	if d < 0 {
		return "none"
	}
	return format(d)
}

// orderInversion is the worst inversion of one instance's ids of one tag.
type orderInversion struct {
	gap  time.Duration // -1: none
	text string
}

// inversion finds, among the requests of target for tag that were
// answered 200, the pair handed out furthest apart in time (the first
// answered before the second began, both by the same process as run
// says) whose ids are in the wrong order: an id of the later request
// below an id of the earlier one.
func inversion(l *load, target int, tag int16, run func(sample) int) orderInversion {
	type span struct {
		end, start time.Duration
		lo, hi     int64
		run        int
	}
	var spans []span
	for _, w := range l.workers {
		if w.target != target {
			continue
		}
		lo, hi := map[int32]int64{}, map[int32]int64{}
		for _, ref := range w.seg[tag] {
			if v, ok := lo[ref.sample]; !ok || ref.id < v {
				lo[ref.sample] = ref.id
			}
			hi[ref.sample] = max(hi[ref.sample], ref.id)
		}
		for si, lov := range lo {
			s := w.samples[si]
			rn := run(s)
			if rn < 0 {
				continue
			}
			spans = append(spans, span{end: s.start + s.dur, start: s.start, lo: lov, hi: hi[si], run: rn})
		}
	}
	out := orderInversion{gap: -1}
	byRun := map[int][]span{}
	for _, s := range spans {
		byRun[s.run] = append(byRun[s.run], s)
	}
	for _, ss := range byRun {
		// Ended in order, with the highest id answered up to each.
		ended := slices.Clone(ss)
		slices.SortFunc(ended, func(x, y span) int { return int(x.end - y.end) })
		prefix := make([]int64, len(ended))
		for i, s := range ended {
			prefix[i] = s.hi
			if i > 0 {
				prefix[i] = max(prefix[i], prefix[i-1])
			}
		}
		for _, later := range ss {
			// Requests answered before later began.
			n, _ := slices.BinarySearchFunc(ended, later.start, func(s span, t time.Duration) int {
				if s.end <= t {
					return -1
				}
				return 1
			})
			// The first of them with a higher id than later's lowest is the
			// furthest in time.
			k, _ := slices.BinarySearchFunc(prefix[:n], later.lo, func(p, lo int64) int {
				if p <= lo {
					return -1
				}
				return 1
			})
			if k < n {
				if gap := later.start - ended[k].end; gap > out.gap {
					out = orderInversion{gap: gap, text: fmt.Sprintf("id %d at %v after id %d answered at %v",
						later.lo, later.start.Round(time.Millisecond), ended[k].hi, ended[k].end.Round(time.Millisecond))}
				}
			}
		}
	}
	return out
}

// dumpDatabase dumps database db of server s with mariadb-dump, in one
// consistent snapshot.
func dumpDatabase(tb testing.TB, s *mariadbtest.Server, db string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mariadb-dump", append(clientArgs(s), "--single-transaction", "--databases", db)...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		tb.Fatalf("mariadb-dump: %v\n%s", err, errs.String())
	}
	return out.Bytes()
}

// loadDump loads a dump into server s with the mariadb client.
func loadDump(tb testing.TB, s *mariadbtest.Server, dump []byte) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mariadb", clientArgs(s)...)
	cmd.Stdin = bytes.NewReader(dump)
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("mariadb < dump: %v\n%s", err, msg)
	}
}

// clientArgs connect the mariadb client programs to s as root over TCP.
func clientArgs(s *mariadbtest.Server) []string {
	host, port, _ := strings.Cut(s.Addr(), ":")
	return []string{"--protocol=tcp", "--host=" + host, "--port=" + port, "--user=root"}
}

// TestInversion checks the order figure of the stores scenarios on made-up
// requests: an inversion is measured between requests that do not overlap
// in time, from the end of the first to the start of the second, and only
// within one process.
func TestInversion(t *testing.T) {
	requireSuite(t)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type req = struct {
		start, dur time.Duration
		ids        []int64
	}
	// Requests of target 0 for tag 0, each answered with the ids given.
	mk := func(reqs ...req) *load {
		w := &worker{target: 0, seg: make([][]idRef, 1)}
		for i, r := range reqs {
			w.samples = append(w.samples, sample{start: r.start, dur: r.dur, status: 200, op: segBatch})
			for _, id := range r.ids {
				w.seg[0] = append(w.seg[0], idRef{id: id, sample: int32(i)})
			}
		}
		return &load{workers: []*worker{w}}
	}
	one := func(sample) int { return 0 }
	tests := []struct {
		name string
		l    *load
		run  func(sample) int
		want time.Duration
	}{
		{"in order", mk(req{0, ms(5), []int64{1, 2}}, req{ms(10), ms(5), []int64{3, 4}}, req{ms(2000), ms(5), []int64{9}}), one, -1},
		{"overlapping requests are not ordered", mk(req{0, ms(50), []int64{5}}, req{ms(10), ms(5), []int64{3}}), one, -1},
		{"one inversion", mk(req{0, ms(5), []int64{5, 6}}, req{ms(1505), ms(5), []int64{4}}), one, ms(1500)},
		{"the furthest apart", mk(req{0, ms(5), []int64{10}}, req{ms(100), ms(5), []int64{11}},
			req{ms(3005), ms(5), []int64{7}}, req{ms(3100), ms(5), []int64{12}}), one, ms(3000)},
		{"another process", mk(req{0, ms(5), []int64{5}}, req{ms(1505), ms(5), []int64{4}}),
			func(s sample) int { return int(s.start / time.Second) }, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := inversion(tt.l, 0, 0, tt.run); got.gap != tt.want {
				t.Errorf("inversion = %v (%s), want %v", got.gap, got.text, tt.want)
			}
		})
	}
}
