package faults

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/mysqltest"
)

// TestMatrix runs every kind of id leaf serves at once, each asked for by
// client goroutines of its own, on each shape of deployment, through the
// same faults, and checks each kind's promise.
//
// The kinds (matrixKinds): a plain tag (get, batch and range), an ordered
// tag, a formatted tag that starts again each day (O-{date}-{seq:6}), a
// capped one ({seq:5!}: 99,999 a day), a formatted ordered one, an opaque
// tag, per-key sequences, snowflake. The shapes (matrixShapes): three
// instances on one MariaDB server; on three independent servers (leaf
// store init), each instance preferring another; on a 3-node Galera
// cluster, one instance per node preferring it (LEAF_TEST_GALERA=1); on
// one server of Oracle's MySQL; on a 3-member MySQL Group Replication
// group, one instance per member preferring it, with faults of its own
// (group_test.go). The
// faults (matrixFaults), in turn, after a warm-up: the owner of the owned
// kinds killed with SIGKILL and started again a second later; the owner
// then stopped with SIGTERM and started again; the store of that owner
// taken away and brought back (the server killed with SIGKILL and
// started again; on Galera its node killed and rejoined); the owner
// paused with SIGSTOP past two leases and continued; the owner paused
// as its store is taken away, and continued before the store is back
// or after. The full size goes round twice. A capped tag's period is
// then asked for to its end.
//
// Clients act as behind a load balancer: a call goes to the next instance
// in turn and, when it gets no answer or a 503, on to the next, until each
// instance was tried once. Every id is kept and checked afterwards: none
// twice (numbers as numbers, formatted ids as texts, sequences per key);
// each kind's order (an ordered or capped tag's ids, and a key's numbers,
// above those of every call that ended before the call began; a plain
// tag's increasing within a process); the numbers skipped, per fault (an
// ordered or capped tag's: at most its step for each owner lost, none at
// a clean restart; a capped period refused as full only once every number
// was issued or skipped so); and the calls that failed, per fault (none
// for the kinds every instance serves; the owned kinds answer again
// within about a lease of their owner's death). Every call's history is
// checked by Porcupine as well (history_test.go): every kind against a
// set that fails on a number seen twice, the ordered kinds against a
// counter per tag or key that only grows.
//
// matrixToday says which kinds run on which shape: what the code serves
// today. LEAF_MATRIX=all runs every kind on every shape.
func TestMatrix(t *testing.T) {
	requireSuite(t)
	for _, sh := range matrixShapes {
		t.Run(sh.name, func(t *testing.T) {
			sh.require(t)
			runMatrix(t, sh)
		})
	}
}

// matrixToday are the kinds each shape runs without LEAF_MATRIX=all: the
// kinds whose promises hold there today. Leaving a kind out of a shape is
// taking it off its line. RELIABILITY.md says how the others fail.
var matrixToday = map[string][]string{
	"one_store": matrixAll,
	"stores":    matrixAll,
	"galera":    matrixAll,
	"mysql":     matrixAll,
	// Oracle's MySQL in Group Replication (group_test.go).
	"group_replication": matrixAll,
	// TestNetFaults' shapes.
	"galera_netns":            matrixAll,
	"stores_netns":            matrixAll,
	"group_replication_netns": matrixAll,
}

// matrixAll is every kind.
var matrixAll = []string{"plain", "ordered", "open", "capped", "fmt_ordered", "opaque", "sequences", "snowflake"}

// matrixShape is a shape of deployment: how its stores start, and how
// three instances use them.
type matrixShape struct {
	name    string
	require func(testing.TB)
	deploy  func(t *testing.T) *deployment
}

var matrixShapes = []matrixShape{
	{name: "one_store", require: mariadbtest.Require, deploy: deployOneStore},
	{name: "stores", require: mariadbtest.Require, deploy: deployStores},
	{name: "galera", require: mariadbtest.RequireGalera, deploy: deployGalera},
	{name: "mysql", require: mysqltest.Require, deploy: deployMySQL},
	{name: "group_replication", require: mysqltest.Require, deploy: deployGroup},
}

// deployment is a shape's stores, started.
type deployment struct {
	// flags are the store flags of instance i.
	flags func(i int) []string
	// home is the database where the rows of formatted tags' periods live.
	home *sql.DB
	// begin, when set, is called once the scenario's clock starts.
	begin func(clk clock)
	// outage takes away the store instance victim uses first, for about
	// down, and brings it back: it returns what it took away and when
	// the store committed again.
	outage func(t *testing.T, clk clock, victim int, down time.Duration) (what string, back time.Duration)
	// orderSlack: a plain tag's ids answered by one process more than
	// this apart must be in order (several stores: a range may come from
	// another store than the one before).
	orderSlack time.Duration
	// floor, block: a plain tag's numbers are striped over the stores in
	// blocks of block ids from floor; only the holes within a block count
	// as skipped.
	floor, block int64
	// faults, when set, are the shape's own faults, each caused once,
	// instead of matrixFaults.
	faults []matrixFault
	// place, when set, places instance i before it first starts (in a
	// network namespace of its own).
	place func(i int, in *instance)
	// report, when set, checks and prints the shape's own figures once
	// the load has stopped.
	report func(m *matrixRun)
}

// deployOneStore: one MariaDB server, killed with SIGKILL for the outage.
func deployOneStore(t *testing.T) *deployment {
	s := startSetStore(t, "a")
	dsn := s.server.DSN(storesDB)
	leafCommand(t, "migrate", "--mysql-dsn", dsn)
	return &deployment{
		flags:  func(int) []string { return []string{"--mysql-dsn", dsn} },
		home:   openDB(t, dsn),
		outage: serverOutage(s.server, "the_database"),
	}
}

// deployStores: three MariaDB servers as one set (leaf store init),
// instance i preferring store i; the outage kills store a, the first.
func deployStores(t *testing.T) *deployment {
	a, b, c := startSetStore(t, "a"), startSetStore(t, "b"), startSetStore(t, "c")
	floor, block := initStoreSet(t, a, b, c)
	lists := [][]*setStore{{a, b, c}, {b, c, a}, {c, a, b}}
	return &deployment{
		flags:      func(i int) []string { return serveFlags(t, lists[i]...) },
		home:       openDB(t, a.server.DSN(storesDB)),
		outage:     serverOutage(a.server, "store_a"),
		orderSlack: orderGap,
		floor:      floor,
		block:      block,
	}
}

// initStoreSet makes stores one set (leaf store init) and returns where
// its blocks begin and their size.
func initStoreSet(t *testing.T, stores ...*setStore) (floor, block int64) {
	out := leafCommand(t, append([]string{"store", "init"}, storesFlags(stores...)...)...)
	var version int64
	var fleet string
	if i := strings.Index(out, "set version "); i < 0 {
		t.Fatalf("leaf store init: no set in its output:\n%s", out)
	} else if _, err := fmt.Sscanf(out[i:], "set version %d of fleet %s floor %d, blocks of %d ids", &version, &fleet, &floor, &block); err != nil {
		t.Fatalf("leaf store init: %v in its output:\n%s", err, out)
	}
	return floor, block
}

// deployMySQL: one server of Oracle's MySQL, killed with SIGKILL for the
// outage.
func deployMySQL(t *testing.T) *deployment {
	s := mysqltest.StartServer(t)
	mustExec(t, openDB(t, s.DSN("")), "CREATE DATABASE "+storesDB)
	dsn := s.DSN(storesDB)
	leafCommand(t, "migrate", "--mysql-dsn", dsn)
	return &deployment{
		flags:  func(int) []string { return []string{"--mysql-dsn", dsn} },
		home:   openDB(t, dsn),
		outage: serverOutage(s, "the_database"),
	}
}

// server is a database server a test kills and starts again.
type server interface {
	Kill() error
	Start() error
}

// serverOutage kills a server with SIGKILL and starts it again after down.
func serverOutage(s server, what string) func(*testing.T, clock, int, time.Duration) (string, time.Duration) {
	return func(t *testing.T, clk clock, _ int, down time.Duration) (string, time.Duration) {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(down)
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		return what, clk.now()
	}
}

// deployGalera: a 3-node Galera cluster, instance i on node i first; the
// outage kills the victim's node and rejoins it once the others commit
// again (loseNode).
func deployGalera(t *testing.T) *deployment {
	started := time.Now()
	c := mariadbtest.StartGalera(t, galeraNodes)
	t.Logf("%d-node cluster Synced in %v", galeraNodes, time.Since(started).Round(time.Millisecond))
	nodes := c.Nodes()
	const db = "leaf_matrix"
	createDatabase(t, nodes, db)
	leafCommand(t, "migrate", "--mysql-dsn", nodes[0].DSN(db))
	setup := syncedDB(t, nodes[0], db)
	mustExec(t, setup, `CREATE TABLE fault_probe (node INT PRIMARY KEY, n BIGINT NOT NULL)`)
	for i := range nodes {
		mustExec(t, setup, `INSERT INTO fault_probe VALUES (?, 0)`, i)
	}
	var probes *stallProbes
	return &deployment{
		flags: func(i int) []string { return nodeArgs(nodes, i, db) },
		home:  setup,
		begin: func(clk clock) { probes = startStallProbes(t, clk, nodes, db) },
		outage: func(t *testing.T, clk clock, victim int, down time.Duration) (string, time.Duration) {
			nl := loseNode(t, c, probes, clk, victim, down)
			return fmt.Sprintf("node%d", victim), nl.restartAt - down
		},
	}
}

// Timings of TestMatrix.
const (
	// matrixLease is --sequence-lease: the owned kinds' unavailability
	// after their owner's death is about one.
	matrixLease = 2 * time.Second
	// killedFor is how long a killed instance stays down.
	killedFor = time.Second
	// pausedFor is how long a paused owner stays stopped: past two
	// leases, within a client's requestTimeout.
	pausedFor = 2*matrixLease + time.Second
	// ownerSlack is what an owned kind may take beyond the lease to answer
	// again: the new owner's round, the range it raises, the callers'
	// retries, and the handover back to the restarted instance.
	ownerSlack = time.Second
	// restartBound bounds an owned kind's unavailability at a clean
	// restart: the stopping owner releases its leases, so another takes
	// them at once.
	restartBound = time.Second
	// drainMax bounds the time the capped tag's period takes to its end.
	drainMax = 30 * time.Second
)

// matrixFault is a fault of TestMatrix: do causes it and returns once it
// is over (the instance serves again, the store is back), filling in
// the window.
type matrixFault struct {
	name string
	// as is the fault of matrixFaults whose bounds this one is held to
	// ("outage": the owners may all be lost); "" is name.
	as string
	do func(m *matrixRun, w *matrixWindow)
}

var matrixFaults = []matrixFault{
	{name: "kill", do: (*matrixRun).killOwner},
	{name: "restart", do: (*matrixRun).restartOwner},
	{name: "outage", do: (*matrixRun).storeOutage},
	{name: "pause", do: (*matrixRun).pauseOwner},
	{name: "pause_outage", as: "outage", do: (*matrixRun).pauseInOutage},
}

// matrixWindow is a part of the run: the warm-up, a fault and the time
// after it until the next, the end of a capped period.
type matrixWindow struct {
	name     string
	fault    string // "" (warm-up), kill, restart, outage, drain
	victim   string
	from, to time.Duration
	back     time.Duration // when the fault was over
	// lost says, for each owned kind, whether its owner went: the victim
	// owned it, or no owner was known, or the store went.
	lost map[string]bool
}

// matrixRun is one shape's run.
type matrixRun struct {
	t      *testing.T
	shape  matrixShape
	d      *deployment
	ins    []*instance
	clk    clock
	client *http.Client
	loads  []*kindLoad
	// cappedBase is the first number of the capped tag's period row
	// made before the load: its end comes within the run.
	cappedBase, cappedDay int64
	down                  time.Duration // of a store outage
	turns                 int           // of victims, when no instance owns anything

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	windows []matrixWindow

	drainMu   sync.Mutex // protects following fields
	drainOn   bool
	drainLeft int           // capped workers not at the end of their period
	drainDone chan struct{} // closed when drainLeft is 0
}

func runMatrix(t *testing.T, sh matrixShape) {
	var (
		warmup = sized(5*time.Second, 10*time.Second)
		settle = 2*matrixLease + sized(time.Second, 4*time.Second) // after each fault
		down   = sized(3*time.Second, 6*time.Second)
		cycles = sized(1, 2)
		faults = matrixFaults
		// budget: the capped period's numbers left when the load starts,
		// well above what its paced calls take before the drain.
		budget = sized(int64(40_000), int64(95_000))
	)
	started := time.Now()
	m := &matrixRun{t: t, shape: sh, down: down}
	m.d = sh.deploy(t)
	t.Logf("stores up in %v", time.Since(started).Round(time.Millisecond))
	if m.d.faults != nil {
		faults, cycles = m.d.faults, 1
	}
	var left []string
	for _, k := range matrixKinds {
		if os.Getenv(envMatrix) == "all" || slices.Contains(matrixToday[sh.name], k.name) {
			m.loads = append(m.loads, &kindLoad{kind: k})
		} else {
			left = append(left, k.name)
		}
	}
	m.ins = newInstances(t, "matrix-"+sh.name, 3, func(i int) []string {
		return append(m.d.flags(i), "--admin-token", adminToken, "--sequence-lease", matrixLease.String(),
			"--forward-timeout", "1s", "--store-timeout", "2s", "--opaque-key", matrixKey)
	})
	for i, in := range m.ins {
		if m.d.place != nil {
			m.d.place(i, in)
		}
		in.args = append(in.args, "--advertise-addr", in.addr)
	}
	if err := startAll(m.ins); err != nil {
		t.Fatal(err)
	}
	m.client = &http.Client{Timeout: requestTimeout, Transport: &http.Transport{
		MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second, DisableCompression: true}}
	t.Cleanup(m.client.CloseIdleConnections)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	t.Cleanup(func() { m.cancel(); m.wg.Wait() })

	// Make every kind through instance A, and the capped tag's period
	// row of today with only budget numbers left.
	for _, kl := range m.loads {
		kl.create(m.ctx, m.client, m.ins[0])
		if kl.createErr != "" {
			t.Logf("kind %s not made: %s", kl.kind.name, kl.createErr)
		}
		if kl.kind.form == formOpaque {
			c, err := bizid.NewTagCipher([]byte(matrixKey), 63, kl.kind.tag)
			if err != nil {
				t.Fatal(err)
			}
			kl.cipher = c
		}
		if kl.created && kl.kind.capped > 0 {
			p := bizid.PeriodAt(kl.kind.tag, bizid.Day, time.Now().UTC())
			m.cappedBase = kl.kind.capped - budget + 1
			m.cappedDay, _ = strconv.ParseInt(p.Key, 10, 64)
			mustExec(t, m.d.home, `INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, ?, ?, 'fault suite: a period begun')`,
				p.Row, m.cappedBase, kl.kind.step)
		}
	}
	m.waitOwners()

	m.clk = newClock()
	if m.d.begin != nil {
		m.d.begin(m.clk)
	}
	m.drainDone = make(chan struct{})
	for _, kl := range m.loads {
		if kl.created {
			kl.start(m)
			if kl.kind.capped > 0 {
				m.drainLeft += len(kl.workers)
			}
		}
	}
	m.windows = append(m.windows, matrixWindow{name: "warmup"})
	time.Sleep(warmup)
	for cycle := range cycles {
		for _, f := range faults {
			w := matrixWindow{name: f.name + strconv.Itoa(cycle+1), fault: cmpOr(f.as, f.name), from: m.clk.now()}
			f.do(m, &w)
			t.Logf("%v: %s of %s, over at %v", w.from.Round(time.Millisecond), f.name, w.victim, w.back.Round(time.Millisecond))
			m.windows = append(m.windows, w)
			sleepCtx(m.ctx, w.back+settle-m.clk.now())
		}
	}
	drained := true
	if m.drainLeft > 0 {
		m.windows = append(m.windows, matrixWindow{name: "drain", fault: "drain", from: m.clk.now()})
		m.drainMu.Lock()
		m.drainOn = true
		m.drainMu.Unlock()
		select {
		case <-m.drainDone:
		case <-time.After(drainMax):
			drained = false
		}
		sleepCtx(m.ctx, time.Second) // calls after the end, all refused
	}
	end := m.clk.now()
	for i := range m.windows {
		m.windows[i].to = end
		if i+1 < len(m.windows) {
			m.windows[i].to = m.windows[i+1].from
		}
	}
	m.cancel()
	m.wg.Wait()
	if err := stopAll(m.ins); err != nil {
		t.Error(err)
	}

	r := newReport(t, "matrix_"+sh.name)
	r.add("instances", len(m.ins))
	r.add("seconds", end.Seconds())
	var kinds []string
	for _, kl := range m.loads {
		kinds = append(kinds, kl.kind.name)
	}
	r.add("kinds", strings.Join(kinds, ","))
	r.add("left_out", strings.Join(left, ","))
	var ws []string
	for _, w := range m.windows {
		s := fmt.Sprintf("%s@%.1f", w.name, w.from.Seconds())
		if w.victim != "" {
			s += fmt.Sprintf(":%s(over@%.1f)", w.victim, w.back.Seconds())
		}
		ws = append(ws, s)
	}
	r.add("windows", strings.Join(ws, ","))
	r.print()
	for _, kl := range m.loads {
		m.reportKind(kl, drained)
	}
	if m.d.report != nil {
		m.d.report(m)
	}
}

// draining says whether the capped kinds are asked to the end of their
// period.
func (m *matrixRun) draining() bool {
	m.drainMu.Lock()
	defer m.drainMu.Unlock()
	return m.drainOn
}

// drainDone notes that a capped worker reached the end of its period.
func (m *matrixRun) drainEnded() {
	m.drainMu.Lock()
	defer m.drainMu.Unlock()
	if m.drainLeft--; m.drainLeft == 0 {
		close(m.drainDone)
	}
}

// waitOwners waits, for a while, until the ordered tag and every section
// of the sequences are served and no instance has taken or released
// anything for ownersQuiet, as the logs say: instances that start
// together hand what they took first over to the members that win it
// once they know each other, and the load starts after that.
func (m *matrixRun) waitOwners() {
	const ownersQuiet = time.Second
	deadline := time.Now().Add(5 * matrixLease)
	for time.Now().Before(deadline) {
		missing := 0
		for _, kl := range m.loads {
			if !kl.created || !kl.kind.owned {
				continue
			}
			got := 0
			for _, in := range m.ins {
				got += len(ownedSectionsOf(in, kl.kind.tag))
			}
			switch {
			case kl.kind.form == formKeyed && got < matrixSections:
				missing++
			case kl.kind.name == "ordered" && got == 0:
				missing++
			}
		}
		var last time.Time
		for _, in := range m.ins {
			for _, l := range in.logs.match(func(l logLine) bool { return strings.HasPrefix(l.msg(), "sequences: section ") }) {
				if l.at.After(last) {
					last = l.at
				}
			}
		}
		if missing == 0 && time.Since(last) >= ownersQuiet {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	m.t.Logf("owners not settled after %v", 5*matrixLease)
}

// ownerVictim is the instance that owns the most owned kinds by its log
// (a sequence space counts once); when none owns any, the next in turn.
func (m *matrixRun) ownerVictim() int {
	best, bestN := -1, 0
	for i, in := range m.ins {
		n := 0
		for _, kl := range m.loads {
			if kl.created && kl.kind.owned && len(ownedSectionsOf(in, kl.kind.tag)) > 0 {
				n++
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		best = m.turns % len(m.ins)
		m.turns++
	}
	return best
}

// lostWith says, for each owned kind, whether instance victim owned it,
// or no instance is known to.
func (m *matrixRun) lostWith(victim int) map[string]bool {
	out := map[string]bool{}
	for _, kl := range m.loads {
		if !kl.kind.owned {
			continue
		}
		known := false
		for _, in := range m.ins {
			known = known || len(ownedSectionsOf(in, kl.kind.tag)) > 0
		}
		out[kl.kind.name] = !known || len(ownedSectionsOf(m.ins[victim], kl.kind.tag)) > 0
	}
	return out
}

// killOwner kills the owner with SIGKILL and starts it again killedFor
// later.
func (m *matrixRun) killOwner(w *matrixWindow) {
	i := m.ownerVictim()
	in := m.ins[i]
	w.victim, w.lost = in.name, m.lostWith(i)
	if err := in.kill(); err != nil {
		m.t.Fatalf("kill %s: %v", in.name, err)
	}
	time.Sleep(killedFor)
	if err := in.start(); err != nil {
		m.t.Fatal(err)
	}
	w.back = m.clk.now()
}

// restartOwner stops the owner with SIGTERM and starts it again at once.
func (m *matrixRun) restartOwner(w *matrixWindow) {
	i := m.ownerVictim()
	in := m.ins[i]
	w.victim, w.lost = in.name, map[string]bool{}
	if err := in.stop(); err != nil {
		m.t.Fatalf("stop %s: %v", in.name, err)
	}
	if err := in.start(); err != nil {
		m.t.Fatal(err)
	}
	w.back = m.clk.now()
}

// pauseOwner stops the owner with SIGSTOP for pausedFor, past its leases,
// and continues it with SIGCONT, as a long garbage collection, a frozen
// virtual machine or a swapped-out process would: the others take its
// leases over meanwhile; the calls it had under way and those sent to it
// since wait, and once it runs again it must answer none of them from
// what it owned. Its numbers skipped are held to a kill's bound.
func (m *matrixRun) pauseOwner(w *matrixWindow) {
	i := m.ownerVictim()
	in := m.ins[i]
	w.victim, w.lost = in.name, m.lostWith(i)
	if err := in.signal(syscall.SIGSTOP); err != nil {
		m.t.Fatalf("pause %s: %v", in.name, err)
	}
	m.t.Cleanup(func() { _ = in.signal(syscall.SIGCONT) })
	time.Sleep(pausedFor)
	if err := in.signal(syscall.SIGCONT); err != nil {
		m.t.Fatalf("continue %s: %v", in.name, err)
	}
	w.back = m.clk.now()
}

// pauseInOutage pauses the owner with SIGSTOP and takes its store away
// at once; the owner is continued pausedFor later, the store brought
// back when its outage is over (on Galera, a node's rejoining takes
// longer than the pause): two faults at once, the owner waking up to
// leases the others took over, on a store that may still be away. Held
// to an outage's bounds.
func (m *matrixRun) pauseInOutage(w *matrixWindow) {
	i := m.ownerVictim()
	in := m.ins[i]
	w.victim, w.lost = in.name, allOwned(m)
	if err := in.signal(syscall.SIGSTOP); err != nil {
		m.t.Fatalf("pause %s: %v", in.name, err)
	}
	cont := func() { _ = in.signal(syscall.SIGCONT) }
	m.t.Cleanup(cont)
	wake := time.AfterFunc(pausedFor, cont)
	_, back := m.d.outage(m.t, m.clk, i, m.down)
	if wake.Stop() { // the outage was shorter than the pause
		time.Sleep(pausedFor - (m.clk.now() - w.from))
		cont()
	}
	w.back = max(back, m.clk.now())
}

// storeOutage takes away the owner's store and brings it back: every
// owner may lose its lease meanwhile.
func (m *matrixRun) storeOutage(w *matrixWindow) {
	i := m.ownerVictim()
	w.lost = map[string]bool{}
	for _, kl := range m.loads {
		if kl.kind.owned {
			w.lost[kl.kind.name] = true
		}
	}
	w.victim, w.back = m.d.outage(m.t, m.clk, i, m.down)
}
