package main

// Three `leaf serve` instances on one MySQL database, as behind a load
// balancer: distinct worker ids, no id issued twice, leases released on
// shutdown.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// clusterTimeout bounds a request, a start and a shutdown.
const clusterTimeout = 30 * time.Second

var clusterClient = &http.Client{Timeout: clusterTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}

// clusterNode is one `leaf serve` running in this process.
type clusterNode struct {
	*testApp
}

// startNode runs `leaf serve` with the environment e; the node is stopped
// when t ends if the test has not stopped it.
func startNode(t *testing.T, e env) *clusterNode {
	t.Helper()
	return &clusterNode{startApp(t, e, "--segment=false")}
}

// waitReady checks that the node answers /readyz with 200: open has
// returned, so it must.
func (n *clusterNode) waitReady(t *testing.T) {
	t.Helper()
	resp, err := clusterClient.Get(n.base + "/readyz")
	if err != nil {
		t.Fatalf("%s: %v", n.base, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: readyz %d after open:\n%s", n.base, resp.StatusCode, n.logs.String())
	}
}

// fetch GETs path from the node and decodes the JSON answer into v; it is
// safe to call from any goroutine.
func (n *clusterNode) fetch(path string, v any) error {
	resp, err := clusterClient.Get(n.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	if s, ok := v.(*string); ok {
		*s = string(body)
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w in %.200q", path, err, body)
	}
	return nil
}

// workerOf asks the node for one id and has the node decode it.
func (n *clusterNode) workerOf(t *testing.T) (id, worker int64) {
	t.Helper()
	var body string
	if err := n.fetch("/api/snowflake/get", &body); err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseInt(body, 10, 64)
	if err != nil {
		t.Fatalf("%s: snowflake id %q: %v", n.base, body, err)
	}
	var d struct {
		ID       string `json:"id"`
		WorkerID int64  `json:"worker_id"`
	}
	if err := n.fetch("/api/snowflake/decode/"+body, &d); err != nil {
		t.Fatal(err)
	}
	if d.ID != body {
		t.Fatalf("%s: decode of %s says id %q", n.base, body, d.ID)
	}
	return id, d.WorkerID
}

// TestClusterOfThreeOnOneMySQL is the scale-out acceptance: three instances
// on one MySQL database lease three worker ids, never issue an id twice
// and free their worker ids when they shut down.
func TestClusterOfThreeOnOneMySQL(t *testing.T) {
	const (
		nodes      = 3
		fetchers   = 4 // concurrent clients per node
		batches    = 3 // requests per client
		batchCount = 1000
		perNode    = fetchers * batches * batchCount
	)
	dsn := storetest.MySQL(t)
	defer clusterClient.CloseIdleConnections()

	// All three start at once: they migrate and lease concurrently.
	ns := make([]*clusterNode, nodes)
	for i := range ns {
		ns[i] = startNode(t, env{"LEAF_MYSQL_DSN": dsn, "LEAF_LOG_FORMAT": "json"})
	}
	for _, n := range ns {
		n.waitReady(t)
	}

	workers := make([]int64, nodes)
	for i, n := range ns {
		id, w := n.workerOf(t)
		workers[i] = w
		if got := id >> 12 & snowflake.MaxWorkerID; got != w {
			t.Fatalf("%s: id %d has worker bits %d, decode says %d", n.base, id, got, w)
		}
		// Every node decodes alike: one epoch, one layout.
		var d struct {
			WorkerID int64 `json:"worker_id"`
		}
		other := ns[(i+1)%nodes]
		if err := other.fetch("/api/snowflake/decode/"+strconv.FormatInt(id, 10), &d); err != nil {
			t.Fatal(err)
		}
		if d.WorkerID != w {
			t.Fatalf("%s decodes %d as worker %d, %s as %d", other.base, id, d.WorkerID, n.base, w)
		}
	}
	if distinct := slices.Compact(slices.Sorted(slices.Values(workers))); len(distinct) != nodes {
		t.Fatalf("the three instances lease worker ids %v, want three distinct", workers)
	}
	t.Logf("worker ids %v", workers)

	// Every node serves batches to several clients at once.
	type result struct {
		node int
		ids  []string
		err  error
	}
	results := make(chan result, nodes*fetchers*batches)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, n := range ns {
		for range fetchers {
			wg.Go(func() {
				<-start
				for range batches {
					var b struct {
						IDs []string `json:"ids"`
					}
					err := n.fetch("/api/snowflake/batch?count="+strconv.Itoa(batchCount), &b)
					results <- result{node: i, ids: b.IDs, err: err}
					if err != nil {
						return
					}
				}
			})
		}
	}
	close(start)
	wg.Wait()
	close(results)

	seen := make(map[int64]int, nodes*perNode) // id -> node
	perNodeCount := make([]int, nodes)
	maxMs := make(map[int64]int64, nodes) // worker id -> last id's Unix ms
	dups := 0
	for r := range results {
		if r.err != nil {
			t.Fatalf("%s: %v", ns[r.node].base, r.err)
		}
		if len(r.ids) != batchCount {
			t.Fatalf("%s: a batch of %d ids, want %d", ns[r.node].base, len(r.ids), batchCount)
		}
		for _, s := range r.ids {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil || id <= 0 {
				t.Fatalf("%s: id %q in a batch", ns[r.node].base, s)
			}
			w := id >> 12 & snowflake.MaxWorkerID
			if w != workers[r.node] {
				t.Fatalf("%s: id %d carries worker id %d, want %d", ns[r.node].base, id, w, workers[r.node])
			}
			if prev, ok := seen[id]; ok {
				dups++
				if dups <= 5 {
					t.Errorf("id %d issued by %s and %s", id, ns[prev].base, ns[r.node].base)
				}
			}
			seen[id] = r.node
			perNodeCount[r.node]++
			maxMs[w] = max(maxMs[w], id>>22+snowflake.DefaultEpochMs)
		}
	}
	if dups != 0 || len(seen) != nodes*perNode {
		t.Fatalf("%d distinct ids and %d duplicates, want %d distinct and none", len(seen), dups, nodes*perNode)
	}
	for i, c := range perNodeCount {
		if c != perNode {
			t.Errorf("%s issued %d ids, want %d", ns[i].base, c, perNode)
		}
	}

	// While they run: three live leases, one per instance.
	st := storetest.Open(t, store.MySQL, dsn)
	// The database runs on this machine: its clock is the test's.
	rows := storetest.Leases(t, st)
	if len(rows) != nodes {
		t.Fatalf("leaf_worker_lease has %d rows while the instances run, want %d: %+v", len(rows), nodes, rows)
	}
	holders := map[string]bool{}
	for _, r := range rows {
		if !slices.Contains(workers, r.WorkerID) || !r.Expires.After(time.Now()) || holders[r.Holder] {
			t.Fatalf("lease while running: %+v (worker ids %v)", r, workers)
		}
		holders[r.Holder] = true
	}

	// Shut all three down at once, as a rolling deploy's SIGTERMs might.
	errs := make([]error, nodes)
	for i, n := range ns {
		wg.Go(func() { errs[i] = n.stop() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v\n%s", ns[i].base, err, ns[i].logs.String())
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The leases are released, with the last timestamps recorded.
	for _, r := range storetest.Leases(t, st) {
		if now := time.Now(); r.Expires.After(now) {
			t.Errorf("worker id %d still held by %q after shutdown: expires %v, now %v", r.WorkerID, r.Holder, r.Expires, now)
		}
		if r.LastTimestamp < maxMs[r.WorkerID] {
			t.Errorf("worker id %d: recorded last timestamp %d is below its last id's ms %d", r.WorkerID, r.LastTimestamp, maxMs[r.WorkerID])
		}
	}
	// New holders get exactly the released ids (expired ids go first).
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	var got []int64
	for i := range nodes {
		l, err := st.Acquire(ctx, fmt.Sprintf("newcomer-%d", i), (snowflake.MaxWorkerID + 1), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.WorkerID)
	}
	if want := slices.Sorted(slices.Values(workers)); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("new holders got worker ids %v, want the released %v", got, want)
	}
	for i, n := range ns {
		if logs := n.logs.String(); strings.Contains(logs, "releasing the snowflake worker lease") || strings.Contains(logs, `"level":"ERROR"`) {
			t.Errorf("instance %d logged a problem:\n%s", i, logs)
		}
	}
}
