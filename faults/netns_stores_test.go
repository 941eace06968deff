package faults

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/netns"
)

// netStores is the stores_netns shape: three regions, each a MariaDB
// server and an instance in namespaces of their own.
type netStores struct {
	*netDeploy
	stores  []*setStore
	storeNS []*netns.NS
}

// deployStoresNetns: three independent servers as one set, server i in a
// namespace of its own, instance i preferring store i.
func deployStoresNetns(t *testing.T) *deployment {
	g := &netStores{netDeploy: newNetDeploy(t, 3)}
	for i, name := range []string{"a", "b", "c"} {
		ns := g.net.Add(t, "store"+strconv.Itoa(i))
		g.storeNS = append(g.storeNS, ns)
		s := &setStore{name: name, server: mariadbtest.StartServerIn(t, mariadbtest.Place{Host: ns.IP, Exec: ns.Exec})}
		mustExec(t, openDB(t, s.server.DSN("")), "CREATE DATABASE "+storesDB)
		g.stores = append(g.stores, s)
	}
	floor, block := initStoreSet(t, g.stores...)
	flags := func(i int) []string {
		var out []string
		for k := range g.stores {
			out = append(out, g.stores[(i+k)%len(g.stores)].command()...)
		}
		return out
	}
	return &deployment{
		flags:      flags,
		home:       openDB(t, g.stores[0].server.DSN(storesDB)),
		place:      g.place,
		begin:      func(clk clock) { g.begin(t, clk) },
		faults:     []matrixFault{{name: "region", as: "outage", do: g.regionCut}},
		report:     func(m *matrixRun) { g.reportNet(m, "stores", nil) },
		orderSlack: orderGap,
		floor:      floor,
		block:      block,
	}
}

// regionCut cuts the owner's store from the owner alone, its own region's
// instance: the other instances still reach that store,
// and the owner still reaches the others, for netCutFor.
func (g *netStores) regionCut(m *matrixRun, w *matrixWindow) {
	i := m.ownerVictim()
	w.victim, w.lost = m.ins[i].name, allOwned(m)
	mk := netFaultMark{window: w.name, what: fmt.Sprintf("store %s cut from instance %s", g.stores[i].name, m.ins[i].name),
		victims: []int{i}, from: w.from}
	if err := g.net.Cut(g.insNS[i], g.storeNS[i]); err != nil {
		m.t.Fatal(err)
	}
	mk.cutAt = m.clk.now()
	mk.back = mk.cutAt + netStoreTimeout
	hold(m, w.from, netCutFor())
	if err := g.net.Heal(g.insNS[i], g.storeNS[i]); err != nil {
		m.t.Fatal(err)
	}
	mk.over = m.clk.now()
	mk.resynced = mk.over
	g.marks = append(g.marks, mk)
	w.back = mk.back
	sleepCtx(m.ctx, netSettle())
}
