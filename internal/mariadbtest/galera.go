package mariadbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncTimeout bounds how long StartGalera and Restart wait for a node to be
// Synced once it answers.
const syncTimeout = 60 * time.Second

// gcacheSize is each node's write-set cache, which a restarted node catches
// up from (IST); the default is 128M, preallocated on disk.
const gcacheSize = "32M"

// Cluster is a Galera cluster of Servers, on 127.0.0.1 unless placed
// elsewhere (StartGaleraIn). Its methods may be
// called from several goroutines.
type Cluster struct {
	nodes []*Server
}

// StartGalera starts an n-node Galera cluster and returns once every node
// is Synced in a primary component of n nodes. Node 0 gets fresh system
// tables and bootstraps the cluster; each other node starts on an empty
// data directory and joins, one after another, by an rsync state transfer
// (SST) of node 0's. Every node listens on four ports of 127.0.0.1: SQL,
// group communication, incremental state transfer (IST) and SST.
// tb.Cleanup stops all nodes and removes their directories.
func StartGalera(tb testing.TB, n int) *Cluster {
	tb.Helper()
	return StartGaleraWith(tb, n)
}

// StartGaleraWith is StartGalera with options added to every node's option
// file, one per line as it takes them ("innodb_flush_log_at_trx_commit=0").
func StartGaleraWith(tb testing.TB, n int, options ...string) *Cluster {
	tb.Helper()
	if n < 1 {
		tb.Fatalf("mariadbtest: a cluster of %d nodes", n)
	}
	return StartGaleraIn(tb, make([]Place, n), options...)
}

// StartGaleraIn is StartGaleraWith with node i at places[i]: a node in a
// network namespace of its own listens on its address there, and every
// node reaches the others at theirs.
func StartGaleraIn(tb testing.TB, places []Place, options ...string) *Cluster {
	tb.Helper()
	n := len(places)
	if n < 1 {
		tb.Fatalf("mariadbtest: a cluster of %d nodes", n)
	}
	if err := GaleraAvailable(); err != nil {
		tb.Fatal(err)
	}
	ports, err := freePorts(4 * n)
	if err != nil {
		tb.Fatalf("mariadbtest: %v", err)
	}
	np := make([]galeraPorts, n)
	members := make([]string, n)
	for i := range np {
		np[i] = galeraPorts{places[i].host(), ports[4*i], ports[4*i+1], ports[4*i+2], ports[4*i+3]}
		members[i] = np[i].host + ":" + strconv.Itoa(np[i].gcomm)
	}
	name := "leaf-test-" + randomHex(4)

	c := &Cluster{nodes: make([]*Server, n)}
	for i, p := range np {
		c.nodes[i] = newServer(tb, "galera node "+strconv.Itoa(i), p.sql, places[i], append(galeraOptions(i, name, members, p), options...))
	}
	for _, s := range c.nodes {
		s.galera = true
	}
	// Registered after the nodes' own cleanups, so it runs before them:
	// all nodes shut down at once instead of one after another.
	tb.Cleanup(c.stopAll)
	c.bootstrap(tb)
	return c
}

// galeraPorts are the address and ports of one node: SQL, group
// communication, incremental state transfer (IST) and SST.
type galeraPorts struct {
	host                 string
	sql, gcomm, ist, sst int
}

// galeraOptions are the server options of node i of the cluster name,
// whose members are the group communication addresses of every node.
func galeraOptions(i int, name string, members []string, p galeraPorts) []string {
	return []string{
		"binlog_format=ROW",
		"default_storage_engine=InnoDB",
		"innodb_autoinc_lock_mode=2",
		"wsrep_on=ON",
		"wsrep_provider=" + galeraPath,
		"wsrep_cluster_name=" + name,
		"wsrep_cluster_address=gcomm://" + strings.Join(members, ","),
		"wsrep_node_name=node" + strconv.Itoa(i),
		"wsrep_node_address=" + members[i],
		"wsrep_node_incoming_address=" + p.host + ":" + strconv.Itoa(p.sql),
		"wsrep_sst_method=rsync",
		"wsrep_sst_receive_address=" + p.host + ":" + strconv.Itoa(p.sst),
		fmt.Sprintf(`wsrep_provider_options="base_port=%d; gmcast.listen_addr=tcp://%s:%d; ist.recv_addr=%s:%d; gcache.size=%s"`,
			p.gcomm, p.host, p.gcomm, p.host, p.ist, gcacheSize),
	}
}

// bootstrap installs node 0's system tables and starts it as a new
// cluster, then starts the others one after another, each once the one
// before is Synced, and waits until every node sees all of them.
func (c *Cluster) bootstrap(tb testing.TB) {
	tb.Helper()
	c.nodes[0].install(tb)
	for i, s := range c.nodes {
		var err error
		if i == 0 {
			err = s.start("--wsrep-new-cluster")
		} else {
			err = s.start()
		}
		if err != nil {
			tb.Fatal(err)
		}
		if err := c.waitSynced(i, syncTimeout); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	for i := range c.nodes {
		if err := c.waitSize(ctx, i, len(c.nodes)); err != nil {
			tb.Fatal(err)
		}
	}
}

// Nodes are the cluster's servers, node i at index i.
func (c *Cluster) Nodes() []*Server { return c.nodes }

// Kill kills node i with SIGKILL and returns once its process is gone. The
// other nodes notice only after Galera's suspect timeout (evs.suspect_timeout,
// left at its default of 5 s): until then a commit on them waits, 5.3 to
// 6.4 s in the measured runs of a 3-node cluster.
func (c *Cluster) Kill(i int) error {
	s, err := c.node(i)
	if err != nil {
		return err
	}
	return s.Kill()
}

// Restart starts node i again, killed or stopped before, and returns once
// it has rejoined the running cluster (by IST when the others still hold
// the write sets it missed, else by SST) and is Synced. At least one other
// node must be running: a node never bootstraps on restart. With its
// position recovered first, a killed node came back by IST in 4.5 to 8 s.
func (c *Cluster) Restart(i int) error {
	s, err := c.node(i)
	if err != nil {
		return err
	}
	if err := s.Start(); err != nil {
		return err
	}
	return c.waitSynced(i, syncTimeout)
}

// WaitSynced waits until node i answers and is Synced in a primary
// component, ready for queries.
func (c *Cluster) WaitSynced(ctx context.Context, i int) error {
	s, err := c.node(i)
	if err != nil {
		return err
	}
	db, err := s.open()
	if err != nil {
		return err
	}
	defer db.Close()
	var st map[string]string
	for {
		st, err = status(ctx, db)
		if err == nil && st["wsrep_local_state_comment"] == "Synced" &&
			st["wsrep_ready"] == "ON" && st["wsrep_cluster_status"] == "Primary" {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("state %s, ready %s, component %s",
					st["wsrep_local_state_comment"], st["wsrep_ready"], st["wsrep_cluster_status"])
			}
			return fmt.Errorf("mariadbtest: %s is not Synced: %w (last: %v)\n%s", s.name, ctx.Err(), err, s.logTail())
		case <-time.After(pollInterval):
		}
	}
}

func (c *Cluster) waitSynced(i int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.WaitSynced(ctx, i)
}

// waitSize waits until node i sees a cluster of n nodes.
func (c *Cluster) waitSize(ctx context.Context, i, n int) error {
	s := c.nodes[i]
	db, err := s.open()
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		st, err := status(ctx, db)
		if err == nil && st["wsrep_cluster_size"] == strconv.Itoa(n) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mariadbtest: %s sees cluster size %q, want %d: %w (last error: %v)\n%s",
				s.name, st["wsrep_cluster_size"], n, ctx.Err(), err, s.logTail())
		case <-time.After(pollInterval):
		}
	}
}

// status reads the node's wsrep status variables.
func status(ctx context.Context, db *sql.DB) (map[string]string, error) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := db.QueryContext(qctx, "SHOW GLOBAL STATUS WHERE Variable_name IN "+
		"('wsrep_local_state_comment', 'wsrep_ready', 'wsrep_cluster_status', 'wsrep_cluster_size')")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	st := make(map[string]string)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		st[strings.ToLower(k)] = v
	}
	return st, rows.Err()
}

func (c *Cluster) node(i int) (*Server, error) {
	if i < 0 || i >= len(c.nodes) {
		return nil, fmt.Errorf("mariadbtest: no node %d in a cluster of %d", i, len(c.nodes))
	}
	return c.nodes[i], nil
}

// stopAll shuts every running node down at once; each node's own cleanup
// then waits for its process and removes its directory.
func (c *Cluster) stopAll() {
	var wg sync.WaitGroup
	for _, s := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.shutdown(cleanupGrace)
		}()
	}
	wg.Wait()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
