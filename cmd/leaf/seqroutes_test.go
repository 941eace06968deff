package main

// Three `leaf serve` instances on one MySQL database and the Go client
// given one of them as its endpoint: once the client holds the space's
// routing table, it calls each key's owner at the address the instance
// advertises, and no instance forwards a call.

import (
	"bufio"
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/store/storetest"
)

// forwardsOK is leaf_sequence_forwards_total{result="ok"} of node.
func forwardsOK(t *testing.T, n *testApp) int64 {
	t.Helper()
	resp, err := clusterClient.Get(n.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	const name = `leaf_sequence_forwards_total{result="ok"} `
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int64(f)
		}
	}
	t.Fatalf("%s/metrics has no %s", n.base, name)
	return 0
}

func TestSequenceClientCallsOwners(t *testing.T) {
	dsn := storetest.MySQL(t)
	defer clusterClient.CloseIdleConnections()
	e := env{"LEAF_MYSQL_DSN": dsn}
	if out, err := runCmd(t, e, "sequence", "add", "inbox", "--step", "100", "--sections", "24"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var nodes []*testApp
	for range 3 {
		nodes = append(nodes, startApp(t, e, "--sequence-lease", "2s", "--snowflake=false"))
	}
	testkit.WaitFor(t, 0, "every section owned, by every node", func() bool {
		total := 0
		for _, n := range nodes {
			owned := n.Sequencer().Stats().SectionsOwned
			if owned == 0 {
				return false
			}
			total += owned
		}
		if total != 24 {
			return false
		}
		// Every node knows every owner.
		var version string
		for _, n := range nodes {
			r, err := n.Sequencer().Routes(context.Background(), "inbox")
			if err != nil || slices.Contains(r.Owners, sequence.NoOwner) || version != "" && r.Version != version {
				return false
			}
			version = r.Version
		}
		return true
	})
	forwards := func() int64 {
		var sum int64
		for _, n := range nodes {
			sum += forwardsOK(t, n)
		}
		return sum
	}

	c, err := client.New(client.Config{Endpoints: []string{nodes[0].base}, RoutesInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	last := map[string]int64{}
	pass := func() int64 {
		before := forwards()
		for k := range 90 {
			key := "user-" + strconv.Itoa(k)
			v, err := c.SequenceNext(context.Background(), "inbox", key)
			if err != nil {
				t.Fatalf("next %s: %v", key, err)
			}
			if v <= last[key] {
				t.Fatalf("key %s: %d after %d", key, v, last[key])
			}
			last[key] = v
		}
		return forwards() - before
	}
	// The first calls go to the endpoint, which forwards those of the
	// other nodes' sections, until the table arrives.
	t.Logf("%d of the first 90 calls forwarded", pass())
	testkit.WaitFor(t, 0, "a pass of calls with no forward", func() bool { return pass() == 0 })
	for range 3 {
		if n := pass(); n != 0 {
			t.Fatalf("%d calls forwarded once the client held the table", n)
		}
	}
}
