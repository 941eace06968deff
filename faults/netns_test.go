package faults

import (
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/mysqltest"
	"github.com/leafid/leaf/internal/netns"
	"github.com/leafid/leaf/internal/testkit"
)

// TestNetFaults runs TestMatrix's load, every kind of id at once with
// every id kept and checked, on deployments whose databases and instances
// each sit in a network namespace of their own with an address on one
// bridge (internal/netns), and breaks the network between them, not only
// processes:
//
//   - galera_netns: a 3-node Galera cluster, instance i preferring node i
//     (LEAF_TEST_GALERA=1). In turn: every instance cut from the node it
//     prefers, not from the others (split); the node the owner uses now
//     partitioned from the other two nodes, but not from the instances,
//     then healed (partition); that node paused with SIGSTOP, then
//     continued (pause).
//   - stores_netns: three independent MariaDB servers as one set (leaf store
//     init), instance i preferring store i, a region each: the owner's
//     store cut from its own region's instance only, the other instances
//     still reaching it (region).
//   - group_replication_netns: the group of TestMatrix's group_replication
//     shape (MySQL 9.7), each member in a namespace of its own: the
//     primary cut from the two other members, not from the instances,
//     then healed (primary_partitioned).
//
// Each fault lasts 30 s at full size; short, a partition or a pause 15 s,
// a split or a region's cut 5 s. Besides TestMatrix's checks of every
// kind, each instance writes a probe row through its admin API every
// 100 ms: how long the instances on a node that went away took to write
// again elsewhere is bounded (moveSlack after the databases commit
// again), and how
// long they went without serving the plain tag (netServedBound).
func TestNetFaults(t *testing.T) {
	requireSuite(t)
	netns.Require(t)
	for _, sh := range netShapes {
		t.Run(sh.name, func(t *testing.T) {
			sh.require(t)
			runMatrix(t, sh)
		})
	}
}

var netShapes = []matrixShape{
	{name: "galera_netns", require: mariadbtest.RequireGalera, deploy: deployGaleraNetns},
	{name: "stores_netns", require: mariadbtest.Require, deploy: deployStoresNetns},
	{name: "group_replication_netns", require: mysqltest.Require, deploy: deployGroupNetns},
}

// Timings of TestNetFaults.
const (
	// netStoreTimeout is the instances' --store-timeout in TestMatrix: how
	// long a call of the store may take before the instance gives the
	// node up.
	netStoreTimeout = 2 * time.Second
	// netResync bounds the wait for a healed or continued node to be
	// Synced again.
	netResync = 90 * time.Second
)

// netFaultFor is how long a fault of TestNetFaults lasts that the
// database cluster must notice (partition, pause): at short size still
// longer than the nodes take to evict a node (5.9 to 10.2 s here).
func netFaultFor() time.Duration { return sized(15*time.Second, 30*time.Second) }

// netCutFor is how long a fault lasts that only the instances notice
// (split, region): at short size past two store timeouts.
func netCutFor() time.Duration { return sized(5*time.Second, 30*time.Second) }

// netSettle is the load kept on after a fault is over, before the next.
func netSettle() time.Duration { return 2*matrixLease + sized(time.Second, 4*time.Second) }

// netFaultMark is when a fault of TestNetFaults began, took effect and
// ended, on the run's clock, and whom it hit.
type netFaultMark struct {
	window   string
	what     string
	victims  []int // the instances on the node or store that went away
	from     time.Duration
	cutAt    time.Duration // the fault in place (the rules written, the signal sent)
	back     time.Duration // the databases the victims can reach commit again
	over     time.Duration // healed, continued
	resynced time.Duration // every node Synced again (Galera)
	// moveBound, when not zero, bounds how long each victim goes
	// without writing to its store, from the fault's beginning.
	moveBound time.Duration
}

// netDeploy is what the shapes of TestNetFaults share: the network, the
// instances' namespaces, the write probes and the marks of the faults.
type netDeploy struct {
	net    *netns.Net
	insNS  []*netns.NS
	ins    []*instance
	probes *writeProbes
	marks  []netFaultMark
}

// newNetDeploy makes the network and a namespace per instance.
func newNetDeploy(t *testing.T, instances int) *netDeploy {
	g := &netDeploy{net: netns.New(t)}
	for i := range instances {
		g.insNS = append(g.insNS, g.net.Add(t, "ins"+strconv.Itoa(i)))
	}
	t.Cleanup(func() { _ = g.net.HealAll() })
	return g
}

// place puts instance i in its namespace, on its address there.
func (g *netDeploy) place(i int, in *instance) {
	_, port, _ := strings.Cut(in.addr, ":")
	in.addr = g.insNS[i].IP + ":" + port
	in.prefix = g.insNS[i].Exec()
	g.ins = append(g.ins, in)
}

// begin starts the write probes, once the instances serve.
func (g *netDeploy) begin(t *testing.T, clk clock) {
	g.probes = startWriteProbes(t, clk, g.ins)
}

// hold keeps a fault on until d after it began.
func hold(m *matrixRun, from, d time.Duration) {
	sleepCtx(m.ctx, from+d-m.clk.now())
}

// allOwned says that every owned kind may lose its owner.
func allOwned(m *matrixRun) map[string]bool {
	out := map[string]bool{}
	for _, kl := range m.loads {
		if kl.kind.owned {
			out[kl.kind.name] = true
		}
	}
	return out
}

// netGalera is the galera_netns shape.
type netGalera struct {
	*netDeploy
	c       *mariadbtest.Cluster
	nodeNS  []*netns.NS
	plain   []*sql.DB // a pool on each node, for its process list
	commits *stallProbes
}

// deployGaleraNetns: a 3-node Galera cluster, each node in a namespace of
// its own, and a namespace per instance.
func deployGaleraNetns(t *testing.T) *deployment {
	g := &netGalera{netDeploy: newNetDeploy(t, 3)}
	places := make([]mariadbtest.Place, galeraNodes)
	for i := range places {
		ns := g.net.Add(t, "node"+strconv.Itoa(i))
		g.nodeNS = append(g.nodeNS, ns)
		places[i] = mariadbtest.Place{Host: ns.IP, Exec: ns.Exec}
	}
	started := time.Now()
	g.c = mariadbtest.StartGaleraIn(t, places)
	t.Logf("%d-node cluster Synced in namespaces in %v", galeraNodes, time.Since(started).Round(time.Millisecond))
	nodes := g.c.Nodes()
	for _, n := range nodes {
		g.plain = append(g.plain, openDB(t, n.DSN("")))
	}
	const db = "leaf_netns"
	createDatabase(t, nodes, db)
	leafCommand(t, "migrate", "--mysql-dsn", nodes[0].DSN(db))
	setup := syncedDB(t, nodes[0], db)
	mustExec(t, setup, `CREATE TABLE fault_probe (node INT PRIMARY KEY, n BIGINT NOT NULL)`)
	for i := range nodes {
		mustExec(t, setup, `INSERT INTO fault_probe VALUES (?, 0)`, i)
	}
	return &deployment{
		flags: func(i int) []string { return nodeArgs(nodes, i, db) },
		home:  setup,
		place: g.place,
		begin: func(clk clock) {
			g.begin(t, clk)
			g.commits = startStallProbes(t, clk, nodes, db)
		},
		// The split first: an instance never goes back to a node it left,
		// so after the others each may use another node than it prefers.
		faults: []matrixFault{
			{name: "split", as: "outage", do: g.split},
			{name: "partition", as: "outage", do: g.partition},
			{name: "pause", as: "outage", do: g.pause},
		},
		report: func(m *matrixRun) { g.reportNet(m, "galera", g.commitGaps) },
	}
}

// moveSlack bounds how long after the instances' databases can take
// writes again (the majority committing again after a partition or a
// pause; the fault in place for a split, the cluster whole) the victims
// write again: two store timeouts (a call on the lost node, then one on a
// node that may itself still wait) and 1 s. The time the nodes take to
// evict a node is Galera's, and is measured apart (commit_gap_ms): 5.9 to
// 10.2 s here, longer the more loaded the machine.
const moveSlack = 2*netStoreTimeout + time.Second

// commitGaps is, per node, the longest time within [from, to] that a
// probe row committed directly on it (no leaf) did not commit: the stall
// of the cluster, or the time a node was out of it.
func (g *netGalera) commitGaps(from, to time.Duration) string {
	var parts []string
	for j := range g.commits.got {
		p := &g.commits.got[j]
		p.mu.Lock()
		calls := make([]answered, len(p.polls))
		for k, pl := range p.polls {
			calls[k] = answered{start: pl.start, end: pl.start + pl.dur, ok: pl.status == 200}
		}
		p.mu.Unlock()
		parts = append(parts, fmt.Sprintf("node%d:%.0f", j, ms(longestGap(calls, from, to))))
	}
	return strings.Join(parts, ",")
}

// currentNodes says which node each instance uses now (-1: none seen):
// the node where one of its connections ran a statement last, by the
// nodes' process lists. An instance never goes back to a node it left, so
// after a fault it may use another node than the one it prefers.
func (g *netGalera) currentNodes() []int {
	cur := make([]int, len(g.insNS))
	idle := make([]int64, len(g.insNS))
	for i := range cur {
		cur[i], idle[i] = -1, math.MaxInt64
	}
	for j, db := range g.plain {
		ctx, cancel := contextFor(5 * time.Second)
		rows, err := db.QueryContext(ctx, `SELECT host, time_ms FROM information_schema.processlist WHERE user = 'root'`)
		if err != nil {
			cancel()
			continue
		}
		for rows.Next() {
			var host string
			var ms float64
			if rows.Scan(&host, &ms) != nil {
				continue
			}
			ip, _, _ := strings.Cut(host, ":")
			for i, ns := range g.insNS {
				if ns.IP == ip && int64(ms) < idle[i] {
					cur[i], idle[i] = j, int64(ms)
				}
			}
		}
		rows.Close()
		cancel()
	}
	return cur
}

// victimNode is the node the owner uses now, and the instances on it.
func (g *netGalera) victimNode(m *matrixRun) (owner, node int, on []int) {
	owner = m.ownerVictim()
	cur := g.currentNodes()
	node = cur[owner]
	if node < 0 {
		node = owner
	}
	for i, n := range cur {
		if n == node {
			on = append(on, i)
		}
	}
	return owner, node, on
}

// names are the instances' names, joined.
func names(m *matrixRun, idx []int) string {
	var out []string
	for _, i := range idx {
		out = append(out, m.ins[i].name)
	}
	return strings.Join(out, "+")
}

// others are the nodes but i.
func others(i int) []int {
	var out []int
	for j := range galeraNodes {
		if j != i {
			out = append(out, j)
		}
	}
	return out
}

// committedAgain waits until every node of idx has committed a probe
// row that began at or after from, and returns when that was seen.
func (g *netGalera) committedAgain(m *matrixRun, idx []int, from time.Duration) time.Duration {
	testkit.WaitFor(m.t, netResync, "commits on the nodes "+fmt.Sprint(idx), func() bool {
		for _, j := range idx {
			if !g.commits.got[j].committedAfter(from) {
				return false
			}
		}
		return true
	})
	return m.clk.now()
}

// resync waits until every node is Synced and sees the whole cluster
// again.
func (g *netGalera) resync(m *matrixRun) time.Duration {
	ctx, cancel := contextFor(netResync)
	defer cancel()
	if err := g.c.WaitWhole(ctx); err != nil {
		m.t.Fatal(err)
	}
	return m.clk.now()
}

// partition cuts the node the owner uses from the two other nodes, not
// from the instances, for netFaultFor, then heals it. The node loses the primary
// component once the others evict it (wsrep_ready OFF: it refuses every
// statement with error 1047), and the instances on it must move to a node
// of the majority.
func (g *netGalera) partition(m *matrixRun, w *matrixWindow) {
	owner, i, on := g.victimNode(m)
	w.victim, w.lost = m.ins[owner].name, allOwned(m)
	mk := netFaultMark{window: w.name, what: fmt.Sprintf("node%d (used by %s) cut from the other nodes", i, names(m, on)),
		victims: on, from: w.from}
	for _, j := range others(i) {
		if err := g.net.Cut(g.nodeNS[i], g.nodeNS[j]); err != nil {
			m.t.Fatal(err)
		}
	}
	mk.cutAt = m.clk.now()
	mk.back = g.committedAgain(m, others(i), mk.cutAt)
	mk.moveBound = mk.back - mk.from + moveSlack
	hold(m, w.from, netFaultFor())
	for _, j := range others(i) {
		if err := g.net.Heal(g.nodeNS[i], g.nodeNS[j]); err != nil {
			m.t.Fatal(err)
		}
	}
	mk.over = m.clk.now()
	mk.resynced = g.resync(m)
	g.marks = append(g.marks, mk)
	w.back = mk.back
	sleepCtx(m.ctx, netSettle())
}

// split cuts every instance from the node it prefers, not from the other
// nodes, the cluster whole, for netCutFor, then heals.
func (g *netGalera) split(m *matrixRun, w *matrixWindow) {
	w.victim, w.lost = "every instance", allOwned(m)
	mk := netFaultMark{window: w.name, what: "every instance cut from its own node", from: w.from}
	for i := range g.insNS {
		mk.victims = append(mk.victims, i)
		if err := g.net.Cut(g.insNS[i], g.nodeNS[i]); err != nil {
			m.t.Fatal(err)
		}
	}
	// The cluster commits all along: the instances' store is back as
	// soon as they gave their node up.
	mk.cutAt = m.clk.now()
	mk.back = mk.cutAt + netStoreTimeout
	mk.moveBound = mk.cutAt - mk.from + moveSlack
	hold(m, w.from, netCutFor())
	for i := range g.insNS {
		if err := g.net.Heal(g.insNS[i], g.nodeNS[i]); err != nil {
			m.t.Fatal(err)
		}
	}
	mk.over = m.clk.now()
	mk.resynced = mk.over
	g.marks = append(g.marks, mk)
	w.back = mk.back
	sleepCtx(m.ctx, netSettle())
}

// pause stops the node the owner uses with SIGSTOP for netFaultFor and continues
// it with SIGCONT: the other nodes evict it after evs.suspect_timeout (5 s), its
// connections stay open and silent, and once continued it finds itself
// out of the primary component and rejoins.
func (g *netGalera) pause(m *matrixRun, w *matrixWindow) {
	owner, i, on := g.victimNode(m)
	w.victim, w.lost = m.ins[owner].name, allOwned(m)
	mk := netFaultMark{window: w.name, what: fmt.Sprintf("node%d (used by %s) paused with SIGSTOP", i, names(m, on)),
		victims: on, from: w.from}
	node := g.c.Nodes()[i]
	if err := node.Pause(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { _ = node.Resume() })
	mk.cutAt = m.clk.now()
	mk.back = g.committedAgain(m, others(i), mk.cutAt)
	mk.moveBound = mk.back - mk.from + moveSlack
	hold(m, w.from, netFaultFor())
	if err := node.Resume(); err != nil {
		m.t.Fatal(err)
	}
	mk.over = m.clk.now()
	mk.resynced = g.resync(m)
	g.marks = append(g.marks, mk)
	w.back = mk.back
	sleepCtx(m.ctx, netSettle())
}
