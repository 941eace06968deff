package main

// Three `leaf serve` instances on one MySQL database serving one space of
// per-key sequences: sections spread over them, any instance answers for
// any key (forwarding to the owner once), every key's numbers strictly
// increase across instances, and a stopped instance's sections move.

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store/storetest"
)

// seqNext asks node for key's next number; 503s (ownership moving) are
// retried.
func seqNext(base, key string) (int64, error) {
	for try := 0; ; try++ {
		resp, err := clusterClient.Get(base + "/api/sequence/next/inbox/" + key)
		if err != nil {
			return 0, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return strconv.ParseInt(string(body), 10, 64)
		case resp.StatusCode == http.StatusServiceUnavailable && try < 200:
			time.Sleep(25 * time.Millisecond) // Retry-After, shortened
			continue
		}
		return 0, fmt.Errorf("%s: %d %s", key, resp.StatusCode, body)
	}
}

func TestSequencesAcrossInstances(t *testing.T) {
	dsn := storetest.MySQL(t)
	defer clusterClient.CloseIdleConnections()
	e := env{"LEAF_MYSQL_DSN": dsn, "LEAF_ADMIN_TOKEN": "tok-of-the-sequence-test"}
	if out, err := runCmd(t, e, "sequence", "add", "inbox", "--step", "100", "--sections", "24"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var nodes []*testApp
	for range 3 {
		nodes = append(nodes, startApp(t, e, "--sequence-lease", "2s", "--snowflake=false"))
	}
	owned := func(n *testApp) int { return n.Sequencer().Stats().SectionsOwned }
	testkit.WaitFor(t, 0, "every section owned, by every node", func() bool {
		total := 0
		for _, n := range nodes {
			if owned(n) == 0 {
				return false
			}
			total += owned(n)
		}
		return total == 24
	})

	const keys, rounds = 60, 6
	var (
		mu   sync.Mutex
		last = map[string]int64{}
	)
	burst := func(live []*testApp) {
		var wg sync.WaitGroup
		for k := range keys {
			key := "user-" + strconv.Itoa(k)
			wg.Go(func() {
				for r := range rounds {
					v, err := seqNext(live[(k+r)%len(live)].base, key)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if v <= last[key] {
						t.Errorf("key %s: %d after %d", key, v, last[key])
					}
					last[key] = v
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	burst(nodes)

	// A stopped node releases its sections: the others take them at their
	// next round, and the keys go on above where they were.
	if err := nodes[2].stop(); err != nil {
		t.Fatal(err)
	}
	live := nodes[:2]
	testkit.WaitFor(t, 0, "the stopped node's sections taken over", func() bool {
		return owned(live[0])+owned(live[1]) == 24
	})
	burst(live)

	// A forwarded request never hops twice; /metrics counts the forwards.
	resp, err := clusterClient.Get(live[0].base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`leaf_sequence_forwards_total{result="ok"}`, "leaf_sequence_sections_owned ", "leaf_sequence_keys_in_memory "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}

func TestSequenceCommands(t *testing.T) {
	path := t.TempDir() + "/leaf.db"
	e := env{"LEAF_SQLITE_PATH": path}
	out, err := runCmd(t, e, "sequence", "add", "inbox", "--sections", "8")
	if err != nil || !strings.Contains(out, "created sequence space inbox") || !strings.Contains(out, "8 sections") {
		t.Fatalf("add: %v %s", err, out)
	}
	out, err = runCmd(t, e, "sequence", "add", "inbox", "--sections", "16")
	if err == nil || !strings.Contains(out+err.Error(), "section count never changes") {
		t.Fatalf("second add: %v %s", err, out)
	}
	out, err = runCmd(t, e, "sequence", "list")
	if err != nil || !strings.Contains(out, "inbox") || !strings.Contains(out, "10000") {
		t.Fatalf("list: %v %s", err, out)
	}
	for _, args := range [][]string{
		{"sequence"},
		{"sequence", "drop"},
		{"sequence", "add"},
		{"sequence", "add", "x", "--sections", "0"},
		{"sequence", "add", "x", "--step", "0"},
		{"sequence", "list", "extra"},
	} {
		if _, err := runCmd(t, e, args...); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestOrderedTagAcrossInstances: an ordered tag's ids, asked of any of
// three instances one after another, strictly increase, also after its
// owner stopped; a plain tag beside it is served as before.
func TestOrderedTagAcrossInstances(t *testing.T) {
	dsn := storetest.MySQL(t)
	defer clusterClient.CloseIdleConnections()
	e := env{"LEAF_MYSQL_DSN": dsn}
	if out, err := runCmd(t, e, "tag", "add", "orders", "--ordered", "--step", "20"); err != nil || !strings.Contains(out, "created ordered tag orders") {
		t.Fatalf("%v: %s", err, out)
	}
	if out, err := runCmd(t, e, "tag", "add", "plain"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var nodes []*testApp
	for range 3 {
		nodes = append(nodes, startApp(t, e, "--sequence-lease", "2s", "--snowflake=false"))
	}
	get := func(n *testApp, path string) (int64, error) {
		for try := 0; ; try++ {
			resp, err := clusterClient.Get(n.base + path)
			if err != nil {
				return 0, err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusOK:
				return strconv.ParseInt(string(body), 10, 64)
			case resp.StatusCode == http.StatusServiceUnavailable && try < 400:
				time.Sleep(25 * time.Millisecond)
				continue
			}
			return 0, fmt.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	var last int64
	run := func(live []*testApp) {
		for i := range 90 {
			id, err := get(live[i%len(live)], "/api/segment/get/orders")
			if err != nil {
				t.Fatal(err)
			}
			if id <= last {
				t.Fatalf("ordered tag: %d after %d", id, last)
			}
			last = id
		}
	}
	run(nodes)
	if _, err := get(nodes[1], "/api/segment/get/plain"); err != nil {
		t.Fatal(err)
	}
	owner := -1
	for i, n := range nodes {
		if n.Sequencer().Stats().SectionsOwned == 1 {
			owner = i
		}
	}
	if owner < 0 {
		t.Fatal("no instance owns the ordered tag")
	}
	if err := nodes[owner].stop(); err != nil {
		t.Fatal(err)
	}
	var live []*testApp
	for i, n := range nodes {
		if i != owner {
			live = append(live, n)
		}
	}
	run(live)

	// An instance with sequences off serves the plain tag and refuses the
	// ordered one: its allocator never takes a range of it.
	off := startApp(t, e, "--sequences=false", "--snowflake=false")
	resp, err := clusterClient.Get(off.base + "/api/segment/get/orders")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "--sequences") {
		t.Fatalf("ordered tag on an instance with sequences off: %d %s", resp.StatusCode, body)
	}
	if id, err := get(off, "/api/segment/get/plain"); err != nil || id < 1 {
		t.Fatalf("plain tag on an instance with sequences off: %d, %v", id, err)
	}
	for _, st := range off.Allocator().Snapshot() {
		if st.Tag == "orders" {
			t.Fatalf("the allocator holds a buffer of the ordered tag: %+v", st)
		}
	}
	run(live) // and the ordered tag goes on from where it was
}

// TestNewSpaceServedAtOnce: a space answers from the moment its creation
// has been answered, on the instance that created it and on any other,
// without waiting for a round of ownership: the first request settles the
// new space's sections (taken here, or sent on to their owner).
func TestNewSpaceServedAtOnce(t *testing.T) {
	eachDatabase(t, testNewSpaceServedAtOnce)
}

func testNewSpaceServedAtOnce(t *testing.T, e env) {
	defer clusterClient.CloseIdleConnections()
	a := startApp(t, e, "--snowflake=false")
	b := startApp(t, e, "--snowflake=false")
	next := func(n *testApp, space, key string) {
		t.Helper()
		resp, err := clusterClient.Get(n.base + "/api/sequence/next/" + space + "/" + key)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "1" {
			t.Errorf("%s right after its creation: %d %s\nthe log of %s:\n%s\nthe log of %s:\n%s",
				space, resp.StatusCode, body, a.base, a.logs.String(), b.base, b.logs.String())
		}
	}
	for i := range 20 {
		space := fmt.Sprintf("s%d", i)
		if code, body := adminPost(t, a.base, "/api/admin/sequences", `{"space":"`+space+`","step":100,"sections":4}`); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", space, code, body)
		}
		next(a, space, "on-a")
		next(b, space, "on-b")
		if t.Failed() {
			return
		}
	}
}
