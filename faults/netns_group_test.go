package faults

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/netns"
)

// selfRejoinWait is how long a healed member is given to join its group
// again by itself before it is made to.
const selfRejoinWait = 15 * time.Second

// netGroup is the group_replication_netns shape of TestNetFaults.
type netGroup struct {
	*netDeploy
	*groupDeploy
	memberNS []*netns.NS
}

// deployGroupNetns: the group of the group_replication shape (three
// members of MySQL 9.7, single primary) with each member and each instance
// in a network namespace of its own. Its fault is a real partition: the
// primary cut from the two other members, not from the instances.
func deployGroupNetns(t *testing.T) *deployment {
	g := &netGroup{netDeploy: newNetDeploy(t, groupMembers)}
	places := make([]mariadbtest.Place, groupMembers)
	for i := range places {
		ns := g.net.Add(t, "member"+strconv.Itoa(i))
		g.memberNS = append(g.memberNS, ns)
		places[i] = mariadbtest.Place{Host: ns.IP, Exec: ns.Exec}
	}
	d, gd := startGroup(t, places)
	g.groupDeploy = gd
	d.place = g.place
	d.begin = func(clk clock) {
		gd.clk = clk
		g.netDeploy.begin(t, clk)
	}
	d.faults = []matrixFault{{name: "primary_partitioned", as: "outage", do: g.primaryPartitioned}}
	d.report = func(m *matrixRun) {
		gd.report(m)
		g.reportNet(m, "group_replication", nil)
	}
	return d
}

// primaryPartitioned cuts the primary from the two other members, not
// from the instances, for netFaultFor, then heals the links. The two
// others suspect it, expel it and elect one of them; the primary, alone,
// sees the others UNREACHABLE and a majority of its view gone, and must
// not be written to (what it is given it cannot certify, and holds); the
// instances must move to the new primary. Healed, the old primary learns
// it was expelled and joins again, by itself or made to.
func (g *netGroup) primaryPartitioned(m *matrixRun, w *matrixWindow) {
	p := g.primary(m)
	var on []int
	for i := range m.ins {
		on = append(on, i) // every instance writes to the primary
	}
	w.victim, w.lost = fmt.Sprintf("member%d", p), allOwned(m)
	mk := netFaultMark{window: w.name, what: fmt.Sprintf("member%d (the primary) cut from the other members", p),
		victims: on, from: w.from}
	back := g.watchPrimary(m, p)
	g.fromOthers(m, p, g.net.Cut)
	mk.cutAt = m.clk.now()
	g.note("member%d (primary) cut from the others", p)
	mk.back = back()
	g.note("a primary of a majority again")
	g.mu.Lock()
	g.elections = append(g.elections, mk.back-mk.cutAt)
	g.mu.Unlock()
	mk.moveBound = mk.back - mk.from + moveSlack
	hold(m, w.from, netFaultFor())
	g.fromOthers(m, p, g.net.Heal)
	mk.over = m.clk.now()
	g.note("member%d healed", p)
	// It may take minutes to come back by itself (the auto-rejoin's
	// attempts are minutes apart): after a while it is made to.
	g.backInGroup(m, p, selfRejoinWait)
	mk.resynced = m.clk.now()
	g.marks = append(g.marks, mk)
	w.back = mk.back
	sleepCtx(m.ctx, netSettle())
}

// fromOthers cuts or heals (link: the network's Cut or Heal) the links
// between member p and every other member.
func (g *netGroup) fromOthers(m *matrixRun, p int, link func(a, b *netns.NS) error) {
	for j := range g.memberNS {
		if j != p {
			if err := link(g.memberNS[p], g.memberNS[j]); err != nil {
				m.t.Fatal(err)
			}
		}
	}
}
