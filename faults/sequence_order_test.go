package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/tcpproxy"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/store/storetest"
)

// The sequence scenario's space and its shape.
const (
	seqSpace    = "faults"
	seqSections = 64
	// seqStep is small so that the keys called most raise their section's
	// max_seq every few seconds, through every fault.
	seqStep = 100
	// seqLease is each section's lease: a section whose owner was killed
	// is served again about one lease later.
	seqLease = 3 * time.Second
	// seqBatch is the count of the batch requests.
	seqBatch = 5
	// seqHotKeys are called far more than the others; the faults aim at
	// the owners of their sections.
	seqHotKeys = 8
)

// TestSequences: three instances serve one space of per-key sequences on
// one database, each through a proxy of its own. Callers send next, batch
// and current requests for many keys to the three instances in turn, and
// every few seconds, in a cycle, the scenario
//
//   - kills the owner of a busy section (the section of one of a few keys
//     called far more than the others) with SIGKILL and starts it again
//     after 0, 1 or 2 s (three faults in five);
//   - cuts the owner of a busy section off the database for a while, so
//     that the others take its sections while it still runs and answers;
//   - cuts every instance off the database for a while.
//
// A cut closes the connections, or holds them in a black hole, by turns.
// Every number received is checked as it arrives: for each key, no number
// is given twice, and a request that began after another one ended got
// numbers above the other's (a current answer: not below them). The only
// failures allowed are 503 with Retry-After and requests to an instance
// that was down; every section answers again within a bound after each
// fault.
func TestSequences(t *testing.T) {
	requireSuite(t)
	var (
		keys       = sized(10_000, 100_000)
		runFor     = sized(45*time.Second, 150*time.Second)
		faultEvery = sized(5*time.Second, 6*time.Second)
		cutFor     = sized(5*time.Second, 8*time.Second)
	)
	const (
		warmup  = 3 * time.Second
		workers = 9
		pace    = 3 * time.Millisecond
		// tail is the load's time after the last fault: long enough to
		// see every section served again.
		tail = 3*seqLease + time.Second
		// boundRecovery bounds the longest time a section goes without
		// a number after a fault: after a kill, the lease runs out and
		// the member that wins the section without the dead one takes
		// it at once (about a lease); the restarted instance then takes
		// the sections it wins from the others (a handover).
		boundRecovery = 2*seqLease + time.Second
	)
	// The faults, in a cycle; the short run has time for the first five.
	// Cut connections are closed and new ones refused; in a black hole
	// they hang, and only --store-timeout ends the statements.
	plan := []seqFault{
		{kind: faultKill}, {kind: faultKill}, {kind: faultPartition, blackhole: true}, {kind: faultKill}, {kind: faultOutage},
		{kind: faultKill}, {kind: faultKill}, {kind: faultPartition}, {kind: faultKill}, {kind: faultOutage, blackhole: true},
	}

	dsn := storetest.MySQL(t)
	leafCommand(t, "migrate", "--mysql-dsn", dsn)
	leafCommand(t, "sequence", "add", seqSpace, "--step", strconv.Itoa(seqStep),
		"--sections", strconv.Itoa(seqSections), "--mysql-dsn", dsn)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxies := make([]*tcpproxy.Proxy, 3)
	for i := range proxies {
		proxies[i] = tcpproxy.Start(t, cfg.Addr)
	}
	ins := newInstances(t, "sequences", len(proxies), func(i int) []string {
		return []string{"--mysql-dsn", withAddr(t, dsn, proxies[i].Addr()), "--store-timeout", "2s", "--sequences",
			"--sequence-lease", seqLease.String(), "--forward-timeout", "1s"}
	})
	for _, in := range ins {
		in.args = append(in.args, "--advertise-addr", in.addr)
	}
	if err := startAll(ins); err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	// Every section served before the load starts, so that the first
	// fault finds owners.
	waitSectionsTaken(t, ins, seqSections)

	l := startSeqLoad(t, clk, ins, keys, workers, pace)
	loadStart := clk.now()

	var faults []seqFault
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		delays := []time.Duration{0, time.Second, 2 * time.Second}
		next := loadStart + warmup
		for slot := 0; ; slot++ {
			if !sleepCtx(ctx, next-clk.now()) || next > runFor-tail {
				return
			}
			f := plan[slot%len(plan)]
			f.section = l.hotSections[slot%len(l.hotSections)]
			idx := slices.Index(ins, sectionOwner(ins, f.section))
			if idx < 0 {
				idx = slot % len(ins)
			}
			f.victim = ins[idx]
			f.owned = ownedSections(f.victim)
			f.at = clk.now()
			switch f.kind {
			case faultKill:
				if f.err = f.victim.kill(); f.err == nil {
					sleepCtx(ctx, delays[slot%len(delays)])
					f.err = f.victim.start()
				}
			case faultPartition:
				f.cut(proxies[idx])
				sleepCtx(ctx, cutFor)
				proxies[idx].Pass()
			case faultOutage:
				for _, p := range proxies {
					f.cut(p)
				}
				sleepCtx(ctx, cutFor)
				for _, p := range proxies {
					p.Pass()
				}
			}
			f.end = clk.now()
			faults = append(faults, f)
			if f.err != nil {
				return
			}
			next = f.end + faultEvery
			if f.kind == faultKill {
				next = f.at + faultEvery
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-faultsDone })

	for clk.now() < runFor {
		time.Sleep(250 * time.Millisecond)
	}
	cancel()
	<-faultsDone
	l.stop()
	ran := clk.now() - loadStart
	if err := stopAll(ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, "sequences")
	r.add("instances", len(ins))
	r.add("keys", keys)
	r.add("sections", seqSections)
	r.add("step", seqStep)
	r.add("lease_ms", seqLease)
	r.add("seconds", ran.Seconds())
	samples := l.samples()
	checked := l.check.totals()
	r.add("requests", len(samples))
	r.add("numbers", checked.numbers)
	r.add("keys_given_numbers", checked.keys)
	r.add("numbers_per_s", float64(checked.numbers)/ran.Seconds())
	addSeqStatuses(r, l, samples)

	r.add("duplicates", checked.duplicates)
	r.add("decreases", checked.decreases)
	r.bound("duplicates", checked.duplicates == 0, "%d requests got a number another request for the key got too%s",
		checked.duplicates, listed(l.check.examples()))
	r.bound("decreases", checked.decreases == 0, "%d requests got a number not above (current: below) one given for the key by a request that ended before they began%s",
		checked.decreases, listed(l.check.examples()))
	checkSeqHistories(t, r, l, samples)
	above := aboveMaxSeq(t, dsn, l)
	r.add("keys_above_max_seq", above)
	r.bound("max_seq", above == 0, "%d keys got a number above their section's max_seq in the database", above)

	// The faults, and the longest time a section went without a number
	// after each, until the next.
	count := map[string]int{}
	failed := 0
	var afterKill, victimGap, afterPartition, afterOutage []time.Duration
	owned := 0
	for i, f := range faults {
		if f.err != nil {
			failed++
			t.Errorf("%s at %v: %v", f.kind, f.at, f.err)
			continue
		}
		count[f.kind]++
		from, to := f.at, runFor
		if f.kind == faultOutage {
			from = f.end // nothing is served while every instance is cut off
		}
		if i+1 < len(faults) {
			to = faults[i+1].at
		}
		gaps := longestGaps(samples, l.keySection, from, to)
		worst := slices.Max(gaps)
		who, what := "every instance", "after the database passed again"
		switch f.kind {
		case faultKill:
			afterKill = append(afterKill, worst)
			owned += len(f.owned)
			for _, sec := range f.owned {
				victimGap = append(victimGap, gaps[sec])
			}
			what = fmt.Sprintf("from the kill (started again %v later)", (f.end - f.at).Round(time.Millisecond))
		case faultPartition:
			afterPartition = append(afterPartition, worst)
			what = fmt.Sprintf("from the cut (%v)", cutFor)
		case faultOutage:
			afterOutage = append(afterOutage, worst)
		}
		if f.kind != faultOutage {
			who = fmt.Sprintf("%s (owner of hot section %d and %d others)", f.victim.name, f.section, max(len(f.owned)-1, 0))
		}
		kind := f.kind
		if f.blackhole {
			kind += " (black hole)"
		}
		r.bound(fmt.Sprintf("%s_%d", f.kind, count[f.kind]), worst <= boundRecovery,
			"%s of %s at %v: the longest time a section went without a number %s to %v was %v (section %d), want within %v",
			kind, who, f.at.Round(time.Millisecond), what, to.Round(time.Millisecond), worst.Round(time.Millisecond),
			slices.Index(gaps, worst), boundRecovery)
	}
	r.add("kills", count[faultKill])
	r.add("partitions", count[faultPartition])
	r.add("outages", count[faultOutage])
	r.add("cut_ms", cutFor)
	r.add("victim_sections_per_kill", float64(owned)/float64(max(count[faultKill], 1)))
	taken, moves := ownershipMoves(ins, clk, loadStart)
	r.add("sections_taken_before_load", taken)
	r.add("ownership_moves", moves)
	r.add("kill_gap_p50_ms", percentile(afterKill, 0.5))
	r.add("kill_gap_max_ms", maxDur(afterKill))
	r.add("kill_victim_section_gap_p50_ms", percentile(victimGap, 0.5))
	r.add("partition_gap_max_ms", maxDur(afterPartition))
	r.add("outage_gap_after_max_ms", maxDur(afterOutage))
	want := sized(5, len(plan))
	r.bound("faults", failed == 0 && len(faults) >= want,
		"%d faults (%v), %d failed, want at least %d and no failure", len(faults), count, failed, want)
	r.print()
}

// Kinds of faults of TestSequences.
const (
	faultKill      = "kill"      // SIGKILL to an instance, started again
	faultPartition = "partition" // one instance cut off the database
	faultOutage    = "outage"    // every instance cut off the database
)

// seqFault is a fault the scenario caused.
type seqFault struct {
	kind    string
	victim  *instance
	section int   // the hot section whose owner was chosen
	owned   []int // the sections the victim served then
	// blackhole: a partition or outage holds the connections rather than
	// closing them.
	blackhole bool
	at        time.Duration
	// end is when the fault ended: the victim served again, or the
	// database passed again.
	end time.Duration
	err error
}

// cut cuts p off, or holds its connections in a black hole.
func (f seqFault) cut(p *tcpproxy.Proxy) {
	if f.blackhole {
		p.Blackhole()
	} else {
		p.Cut()
	}
}

// longestGaps is, for every section, the longest time in [from, to)
// without an answer 200 to a request for one of its keys: from from to the
// end of the first, between the ends of two in a row, from the last to to.
func longestGaps(samples []seqSample, keySection []uint16, from, to time.Duration) []time.Duration {
	ends := make([][]time.Duration, seqSections)
	for _, s := range samples {
		if end := s.start + s.dur; s.status == 200 && end >= from && end < to {
			sec := keySection[s.key]
			ends[sec] = append(ends[sec], end)
		}
	}
	gaps := make([]time.Duration, seqSections)
	for sec, es := range ends {
		slices.Sort(es)
		last := from
		for _, e := range es {
			gaps[sec] = max(gaps[sec], e-last)
			last = e
		}
		gaps[sec] = max(gaps[sec], to-last)
	}
	return gaps
}

// sleepCtx sleeps d, or less when ctx ends; false when it ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Log messages of the ownership of sections (cmd/leaf: sequence.Event).
const (
	msgSectionTaken    = "sequences: section taken"
	msgSectionReleased = "sequences: section released"
	msgSectionLost     = "sequences: section lost"
)

// ownedSections are the sections of the scenario's space that the
// instance's running process serves, by its log: taken and not released or
// lost since.
func ownedSections(in *instance) []int { return ownedSectionsOf(in, seqSpace) }

// ownedSectionsOf are the sections of a space (an ordered tag: its section
// -1) that the instance's running process serves, by its log.
func ownedSectionsOf(in *instance, space string) []int {
	p := in.running()
	if p == nil {
		return nil
	}
	owned := map[int]bool{}
	for _, l := range in.logs.match(func(l logLine) bool { return l.run == p.run && l.str("space") == space }) {
		sec, ok := l.num("section")
		if !ok {
			continue
		}
		switch l.msg() {
		case msgSectionTaken:
			owned[int(sec)] = true
		case msgSectionReleased, msgSectionLost:
			delete(owned, int(sec))
		}
	}
	return slices.Sorted(maps.Keys(owned))
}

// sectionOwner is the running instance that serves the section by its
// log, or nil.
func sectionOwner(ins []*instance, section int) *instance {
	for _, in := range ins {
		if slices.Contains(ownedSections(in), section) {
			return in
		}
	}
	return nil
}

// waitSectionsTaken waits until the instances' logs say that n sections
// were taken.
func waitSectionsTaken(tb testing.TB, ins []*instance, n int) {
	tb.Helper()
	deadline := time.Now().Add(4 * seqLease)
	for {
		got := 0
		for _, in := range ins {
			got += len(ownedSections(in))
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d of %d sections taken after %v", got, n, 4*seqLease)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ownershipMoves counts the sections taken before the load started and
// since.
func ownershipMoves(ins []*instance, clk clock, loadStart time.Duration) (before, since int) {
	for _, in := range ins {
		for _, l := range in.logs.withMsg(msgSectionTaken) {
			if clk.at(l.at) < loadStart {
				before++
			} else {
				since++
			}
		}
	}
	return before, since
}

// aboveMaxSeq counts the keys whose highest number passes their section's
// max_seq in the database at the end: a number issued that was never
// persisted.
func aboveMaxSeq(tb testing.TB, dsn string, l *seqLoad) int {
	tb.Helper()
	db := openDB(tb, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), sqlTimeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT section, max_seq FROM leaf_seq_section WHERE space = ?`, seqSpace)
	if err != nil {
		tb.Fatalf("read leaf_seq_section: %v", err)
	}
	defer rows.Close()
	maxSeq := make([]int64, seqSections)
	for rows.Next() {
		var sec int
		var v int64
		if err := rows.Scan(&sec, &v); err != nil {
			tb.Fatal(err)
		}
		maxSeq[sec] = v
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for k := range l.check.keys {
		if h := l.check.highest(k); h > maxSeq[l.keySection[k]] {
			n++
		}
	}
	return n
}

// seqWalkStride is the step of the load's walk through the keys: a prime
// that divides no key count of the scenario, so that the walk passes every
// key before it repeats one.
const seqWalkStride = 7919

// seqOp is a kind of sequence request.
type seqOp uint8

const (
	seqNext seqOp = iota
	seqNextBatch
	seqCurrent
)

func (o seqOp) String() string { return [...]string{"next", "batch", "current"}[o] }

// seqSample is one request of the sequence load; times are offsets on the
// scenario's clock.
type seqSample struct {
	start, dur time.Duration
	key        int32
	status     int16 // 0: no HTTP answer
	target     int8
	op         seqOp
	retryAfter bool
	bad        bool  // a 200 whose body is not what the API promises
	lo, hi     int64 // the numbers of a 200; current: lo = hi = the answer
}

// seqLoad sends sequence requests from goroutines of the test process,
// each to the three instances in turn, and checks every number received.
type seqLoad struct {
	clk         clock
	targets     []*instance
	client      *http.Client
	keyNames    []string
	keySection  []uint16 // by key index
	hot         int      // the first hot keys' indexes: 0..hot-1
	hotSections []int
	pace        time.Duration
	walk        atomic.Uint64 // the walk through every key, by seqWalkStride
	check       *seqChecker
	workers     []*seqWorker

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// seqWorker is one goroutine of the load; its fields are its own until the
// load has stopped.
type seqWorker struct {
	l       *seqLoad
	id      int
	rng     *rand.Rand
	samples []seqSample
	walkKey int            // the key of the walk this worker asks for until it gets a number; -1: the next
	errs    map[string]int // failures without an answer, by kind; answers not 200, by status and code
}

// seqKeyName names key i: mostly plain, some with characters a path must
// encode (a "/", a space, non-ASCII letters).
func seqKeyName(i int) string {
	switch {
	case i < seqHotKeys:
		return "hot-" + strconv.Itoa(i)
	case i%97 == 0:
		return "user/ü " + strconv.Itoa(i)
	}
	return "user-" + strconv.Itoa(i)
}

func startSeqLoad(tb testing.TB, clk clock, targets []*instance, keys, workers int, pace time.Duration) *seqLoad {
	tb.Helper()
	l := &seqLoad{clk: clk, targets: targets, pace: pace, hot: seqHotKeys,
		keyNames: make([]string, keys), keySection: make([]uint16, keys)}
	hot := map[int]bool{}
	for i := range keys {
		l.keyNames[i] = seqKeyName(i)
		l.keySection[i] = uint16(sequence.SectionOf(l.keyNames[i], seqSections))
		if i < seqHotKeys && !hot[int(l.keySection[i])] {
			hot[int(l.keySection[i])] = true
			l.hotSections = append(l.hotSections, int(l.keySection[i]))
		}
	}
	l.check = newSeqChecker(keys, func() time.Duration { return clk.now() })
	l.client = &http.Client{
		Timeout: requestTimeout,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: workers * 2,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	for i := range workers {
		w := &seqWorker{l: l, id: i, walkKey: -1, errs: map[string]int{},
			rng: rand.New(rand.NewPCG(uint64(i)+1, uint64(time.Now().UnixNano())))}
		l.workers = append(l.workers, w)
	}
	for _, w := range l.workers {
		l.wg.Go(w.run)
	}
	tb.Cleanup(l.stop)
	return l
}

func (l *seqLoad) stop() {
	l.stopOnce.Do(func() {
		l.cancel()
		l.wg.Wait()
		l.client.CloseIdleConnections()
	})
}

func (w *seqWorker) run() {
	l := w.l
	next := time.Now()
	for n := w.id; l.ctx.Err() == nil; n++ {
		if d := time.Until(next); d > 0 {
			select {
			case <-l.ctx.Done():
				return
			case <-time.After(d):
			}
		}
		next = next.Add(l.pace)
		if time.Since(next) > l.pace {
			next = time.Now()
		}
		s, ok := w.request(n % len(l.targets))
		if !ok {
			return
		}
		w.samples = append(w.samples, s)
	}
}

// request sends one request to target and checks its numbers; ok is false
// when the load was stopped meanwhile.
func (w *seqWorker) request(target int) (s seqSample, ok bool) {
	l := w.l
	// A fifth of the requests go to the hot keys, a fifth to any key, and
	// the others walk through every key: a worker asks for its key of the
	// walk again until it got a number, so that every key gets some.
	var key int
	walk := false
	switch r := w.rng.IntN(10); {
	case r < 2:
		key = w.rng.IntN(l.hot)
	case r < 4:
		key = w.rng.IntN(len(l.keyNames))
	default:
		walk = true
		if w.walkKey < 0 {
			w.walkKey = int(l.walk.Add(seqWalkStride) % uint64(len(l.keyNames)))
		}
		key = w.walkKey
	}
	defer func() {
		if walk && s.status == http.StatusOK {
			w.walkKey = -1
		}
	}()
	s = seqSample{key: int32(key), target: int8(target)}
	switch r := w.rng.IntN(10); {
	case r < 7:
		s.op = seqNext
	case r < 8:
		s.op = seqNextBatch
	default:
		s.op = seqCurrent
	}
	route := "next"
	if s.op == seqCurrent {
		route = "current"
	}
	u := l.targets[target].base() + "/api/sequence/" + route + "/" + url.PathEscape(seqSpace) + "/" + url.PathEscape(l.keyNames[key])
	if s.op == seqNextBatch {
		u += "?count=" + strconv.Itoa(seqBatch)
	}
	start := time.Now()
	s.start = l.clk.at(start)
	status, header, body, err := get(l.ctx, l.client, u, "")
	s.dur = time.Since(start)
	if l.ctx.Err() != nil {
		return s, false
	}
	if err != nil {
		w.errs["conn_"+errKind(err)]++
		return s, true
	}
	s.status = int16(status)
	s.retryAfter = header.Get("Retry-After") != ""
	if status != http.StatusOK {
		w.errs[fmt.Sprintf("http_%d_%s", status, errorCode(body))]++
		return s, true
	}
	lo, hi, err := parseSeq(s.op, body)
	if err != nil {
		s.bad = true
		return s, true
	}
	s.lo, s.hi = lo, hi
	l.check.record(key, seqEntry{start: s.start, lo: lo, hi: hi, target: s.target, current: s.op == seqCurrent})
	return s, true
}

// errorCode is the code of an error answer, "none" if it has none.
func errorCode(body []byte) string {
	var v struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || v.Error.Code == "" {
		return "none"
	}
	return v.Error.Code
}

// parseSeq reads the numbers of a 200 answer and checks what the API
// promises: next, a positive number; a batch, seqBatch numbers in a row;
// current, a number not below 0.
func parseSeq(op seqOp, body []byte) (lo, hi int64, err error) {
	if op != seqNextBatch {
		v, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if v < 0 || (op == seqNext && v == 0) {
			return 0, 0, fmt.Errorf("%s answered %d", op, v)
		}
		return v, v, nil
	}
	var b struct {
		Seqs []string `json:"seqs"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return 0, 0, err
	}
	if len(b.Seqs) != seqBatch {
		return 0, 0, fmt.Errorf("%d numbers, want %d", len(b.Seqs), seqBatch)
	}
	for i, t := range b.Seqs {
		v, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if i == 0 {
			lo = v
		}
		if v <= 0 || v != lo+int64(i) {
			return 0, 0, fmt.Errorf("number %d at %d of a batch from %d", v, i, lo)
		}
		hi = v
	}
	return lo, hi, nil
}

// samples are every request of the load, ordered by start. Call after
// stop.
func (l *seqLoad) samples() []seqSample {
	var out []seqSample
	for _, w := range l.workers {
		out = append(out, w.samples...)
	}
	slices.SortFunc(out, func(a, b seqSample) int { return int(a.start - b.start) })
	return out
}

// addSeqStatuses adds the requests by kind and the failures by status and
// code to the report, and checks that the only ones are those allowed: 503
// unavailable with Retry-After, and requests without an answer from an
// instance being killed or down (refused, reset, cut short), never one that
// timed out.
func addSeqStatuses(r *report, l *seqLoad, samples []seqSample) {
	r.tb.Helper()
	var byOp [3]int
	ok, noRetry, bad := 0, 0, 0
	for _, s := range samples {
		byOp[s.op]++
		switch {
		case s.status == 200:
			ok++
		case s.status == 503 && !s.retryAfter:
			noRetry++
		}
		if s.bad {
			bad++
		}
	}
	r.add("next", byOp[seqNext])
	r.add("batches", byOp[seqNextBatch])
	r.add("current", byOp[seqCurrent])
	r.add("http_200", ok)
	errs := map[string]int{}
	for _, w := range l.workers {
		for k, n := range w.errs {
			errs[k] += n
		}
	}
	unexpected, timeouts := 0, 0
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		r.add(k, errs[k])
		switch {
		case k == "http_503_unavailable", k == "conn_refused", k == "conn_reset", k == "conn_eof":
		case k == "conn_timeout":
			timeouts += errs[k]
		default:
			unexpected += errs[k]
		}
	}
	r.bound("unexpected_errors", unexpected == 0, "%d failures other than 503 unavailable and a connection to a killed instance (%v)", unexpected, errs)
	r.bound("timeouts", timeouts == 0, "%d requests got no answer within %v", timeouts, requestTimeout)
	r.bound("retry_after", noRetry == 0, "%d answers 503 without Retry-After", noRetry)
	r.bound("bad_body", bad == 0, "%d answers 200 whose numbers are missing, malformed, not positive or not consecutive", bad)
}

// seqChecker checks, as they arrive, the numbers of every key: a request
// must get numbers above every number given for the key by a request that
// ended before it began (a current answer: not below them), and no number
// twice, also among requests that overlap in time. It keeps, per key, the
// requests of the last window, in the order they were recorded, and below
// them the highest number of those older: a request still to come began at
// most requestTimeout ago. It is safe for concurrent use.
type seqChecker struct {
	now    func() time.Duration
	window time.Duration
	keys   []keyHistory

	numbers, dups, decs atomic.Int64

	mu  sync.Mutex // protects ex
	ex  []string   // the first violations, described
	exN int
}

// keyHistory is what a seqChecker keeps of one key.
type keyHistory struct {
	mu    sync.Mutex
	floor int64      // the highest number of the requests let go
	win   []seqEntry // by end
	seen  bool
}

// seqEntry is one answered request for a key.
type seqEntry struct {
	start, end time.Duration // end: when it was recorded, after its answer
	lo, hi     int64         // its numbers; for current, lo = hi = the answer
	top        int64         // the highest number of this request and every one before it
	target     int8
	current    bool
}

// maxExamples is how many violations a seqChecker describes.
const maxExamples = 10

func newSeqChecker(keys int, now func() time.Duration) *seqChecker {
	return &seqChecker{now: now, window: requestTimeout + 15*time.Second, keys: make([]keyHistory, keys)}
}

// record checks the answer of a request for key that began at e.start and
// keeps it. The answer's end is taken now, under the key's lock: later than
// the answer came, so a request that began after this one ended by this
// clock truly began after it ended.
func (c *seqChecker) record(key int, e seqEntry) {
	h := &c.keys[key]
	h.mu.Lock()
	defer h.mu.Unlock()
	e.end = c.now()
	h.seen = true
	// Let go of the requests that ended before any request still to come
	// can have begun.
	drop := 0
	for drop < len(h.win) && h.win[drop].end < e.end-c.window {
		drop++
	}
	if drop > 0 {
		h.floor = h.win[drop-1].top
		h.win = h.win[drop:]
	}
	// Requests before idx ended before e began; the others overlap it.
	idx := sort.Search(len(h.win), func(i int) bool { return h.win[i].end >= e.start })
	before := h.floor
	if idx > 0 {
		before = h.win[idx-1].top
	}
	// A number given twice: among the overlapping requests, or, when e
	// is not above every earlier one, among those too.
	var other *seqEntry
	dup := false
	if !e.current {
		c.numbers.Add(e.hi - e.lo + 1)
		from := idx
		if e.lo <= before {
			from = 0
		}
		for i := from; i < len(h.win); i++ {
			if o := &h.win[i]; !o.current && o.lo <= e.hi && e.lo <= o.hi {
				other, dup = o, true
				break
			}
		}
	}
	switch {
	case dup:
		c.dups.Add(1)
		c.example(key, "duplicate", e, other)
	case !e.current && e.lo <= before, e.current && e.lo < before:
		for i := range h.win[:idx] {
			if o := h.win[i].hi; o > e.lo || !e.current && o == e.lo {
				other = &h.win[i]
				break
			}
		}
		c.decs.Add(1)
		c.example(key, "decrease", e, other)
	}
	e.top = max(e.hi, h.floor)
	if n := len(h.win); n > 0 {
		e.top = max(e.hi, h.win[n-1].top)
	}
	h.win = append(h.win, e)
}

func (c *seqChecker) example(key int, what string, e seqEntry, other *seqEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exN++
	if len(c.ex) >= maxExamples {
		return
	}
	s := fmt.Sprintf("%s: key %d: %s", what, key, describeSeq(e))
	if other != nil {
		s += " after " + describeSeq(*other)
	} else {
		s += " after a request no longer kept"
	}
	c.ex = append(c.ex, s)
}

func describeSeq(e seqEntry) string {
	op := "next"
	if e.current {
		op = "current"
	}
	return fmt.Sprintf("%s %d..%d from instance %c, %v to %v", op, e.lo, e.hi, rune('A'+e.target),
		e.start.Round(time.Microsecond), e.end.Round(time.Microsecond))
}

// seqTotals are a seqChecker's counts.
type seqTotals struct {
	numbers, keys         int64
	duplicates, decreases int64
}

func (c *seqChecker) totals() seqTotals {
	t := seqTotals{numbers: c.numbers.Load(), duplicates: c.dups.Load(), decreases: c.decs.Load()}
	for i := range c.keys {
		h := &c.keys[i]
		h.mu.Lock()
		if h.seen {
			t.keys++
		}
		h.mu.Unlock()
	}
	return t
}

// highest is the highest number given for key.
func (c *seqChecker) highest(key int) int64 {
	h := &c.keys[key]
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.win); n > 0 {
		return h.win[n-1].top
	}
	return h.floor
}

// examples describes the first violations.
func (c *seqChecker) examples() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ex)
}

// TestSeqChecker checks the sequence scenario's checker, on which its
// verdict rests. It starts nothing, so it runs in make test too.
func TestSeqChecker(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type rec struct {
		start, end int // ms
		lo, hi     int64
		current    bool
	}
	tests := []struct {
		name      string
		recs      []rec
		dups, des int64
	}{
		{name: "increasing", recs: []rec{{0, 1, 1, 1, false}, {2, 3, 2, 6, false}, {4, 5, 6, 6, true}, {6, 7, 7, 7, false}}},
		{name: "gaps", recs: []rec{{0, 1, 5, 5, false}, {2, 3, 105, 105, false}}},
		{name: "repeated", recs: []rec{{0, 1, 5, 5, false}, {2, 3, 5, 5, false}}, dups: 1},
		{name: "repeated inside a batch", recs: []rec{{0, 1, 1, 5, false}, {2, 3, 3, 3, false}}, dups: 1},
		{name: "lower", recs: []rec{{0, 1, 5, 5, false}, {2, 3, 4, 4, false}}, des: 1},
		{name: "lower after the window", recs: []rec{{0, 1, 5, 5, false}, {40_000, 40_001, 9, 9, false}, {40_002, 40_003, 3, 3, false}}, des: 1},
		{name: "overlapping, out of order", recs: []rec{{0, 10, 8, 8, false}, {1, 11, 7, 7, false}}},
		{name: "overlapping, the same", recs: []rec{{0, 10, 8, 8, false}, {1, 11, 8, 8, false}}, dups: 1},
		{name: "overlapping the later one only", recs: []rec{{0, 2, 8, 8, false}, {1, 5, 7, 7, false}, {3, 6, 9, 9, false}}},
		{name: "lower than one that overlaps the later one", recs: []rec{{0, 2, 8, 8, false}, {1, 5, 9, 9, false}, {3, 6, 6, 6, false}}, des: 1},
		{name: "current equal", recs: []rec{{0, 1, 5, 5, false}, {2, 3, 5, 5, true}, {4, 5, 5, 5, true}}},
		{name: "current lower", recs: []rec{{0, 1, 5, 5, false}, {2, 3, 4, 4, true}}, des: 1},
		{name: "next equal to current", recs: []rec{{0, 1, 5, 5, true}, {2, 3, 5, 5, false}}, des: 1},
		{name: "current overlapping", recs: []rec{{0, 10, 5, 5, false}, {1, 11, 4, 4, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var now time.Duration
			c := newSeqChecker(1, func() time.Duration { return now })
			for _, r := range tt.recs {
				now = ms(r.end)
				c.record(0, seqEntry{start: ms(r.start), lo: r.lo, hi: r.hi, current: r.current})
			}
			got := c.totals()
			if got.duplicates != tt.dups || got.decreases != tt.des {
				t.Errorf("duplicates %d, decreases %d; want %d, %d (%v)", got.duplicates, got.decreases, tt.dups, tt.des, c.examples())
			}
			if (got.duplicates+got.decreases > 0) != (len(c.examples()) > 0) {
				t.Errorf("%d examples for %d violations", len(c.examples()), got.duplicates+got.decreases)
			}
		})
	}
	t.Run("longest gaps", func(t *testing.T) {
		keySection := []uint16{0, 1}
		s := []seqSample{
			{start: ms(0), dur: ms(1), key: 0, status: 200},
			{start: ms(100), dur: ms(1), key: 0, status: 200},
			{start: ms(150), dur: ms(5), key: 1, status: 200},
			{start: ms(200), dur: ms(1), key: 0, status: 503},
			{start: ms(700), dur: ms(2), key: 0, status: 200},
			{start: ms(900), dur: ms(2), key: 1, status: 200},
		}
		gaps := longestGaps(s, keySection, ms(50), ms(1000))
		if gaps[0] != ms(601) || gaps[1] != ms(747) || gaps[2] != ms(950) {
			t.Errorf("gaps %v %v %v, want 601ms 747ms 950ms", gaps[0], gaps[1], gaps[2])
		}
	})
}

// checkSeqHistories checks the sequence load's history with Porcupine: a
// counter per key (next and batch take, current reads) and the set of each
// key's numbers.
func checkSeqHistories(t *testing.T, r *report, l *seqLoad, samples []seqSample) {
	var counters, sets []historyOp
	for _, s := range samples {
		if s.status != http.StatusOK || s.bad {
			continue
		}
		about := "instance " + l.targets[s.target].name
		read := s.op == seqCurrent
		counters = append(counters, historyOp{start: s.start, end: s.start + s.dur, in: counterIn{group: int64(s.key), read: read}, out: counterTake{s.lo, s.hi}, about: about})
		if !read {
			sets = append(sets, historyOp{start: s.start, end: s.start + s.dur, out: []valSpan{{int64(s.key), s.lo, s.hi}}, about: about})
		}
	}
	r.checkModel("counter", counterModel, counters)
	r.checkModel("set", setModel, sets)
}
