package store_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
)

func TestJudgeMySQL(t *testing.T) {
	galera := func(size string, opts string) (map[string]string, map[string]string) {
		return map[string]string{"wsrep_on": "ON", "wsrep_provider_options": opts, "log_bin": "ON", "sync_binlog": "0"},
			map[string]string{"wsrep_cluster_size": size}
	}
	tests := []struct {
		name    string
		vars    map[string]string
		status  map[string]string
		durable bool
		why     []string // in the reason, in this order
		fixes   string
	}{
		{name: "flush 1", vars: map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "OFF", "sync_binlog": "0"},
			durable: true, why: []string{"single server", "innodb_flush_log_at_trx_commit=1", "on disk before it is acknowledged"}},
		{name: "flush 3, MariaDB's group commit", vars: map[string]string{"innodb_flush_log_at_trx_commit": "3"}, durable: true},
		{name: "flush 2", vars: map[string]string{"innodb_flush_log_at_trx_commit": "2"},
			why:   []string{"innodb_flush_log_at_trx_commit=2", "survives a crash of mysqld, not of the machine", "set innodb_flush_log_at_trx_commit=1"},
			fixes: "innodb_flush_log_at_trx_commit=1"},
		{name: "flush 0", vars: map[string]string{"innodb_flush_log_at_trx_commit": "0"},
			why:   []string{"innodb_flush_log_at_trx_commit=0", "about a second of commits is lost on any crash of mysqld", "set innodb_flush_log_at_trx_commit=1"},
			fixes: "innodb_flush_log_at_trx_commit=1"},
		{name: "flush not reported", vars: map[string]string{},
			why: []string{"not known"}, fixes: "innodb_flush_log_at_trx_commit=1"},
		{name: "binary log synced lazily", vars: map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "ON", "sync_binlog": "0"},
			why:   []string{"sync_binlog=0", "replica promoted", "set sync_binlog=1"},
			fixes: "sync_binlog=1"},
		{name: "binary log synced every 100 groups", vars: map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "1", "sync_binlog": "100"},
			why: []string{"sync_binlog=100"}, fixes: "sync_binlog=1"},
		{name: "binary log synced", vars: map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "ON", "sync_binlog": "1"},
			durable: true, why: []string{"innodb_flush_log_at_trx_commit=1, sync_binlog=1 with the binary log on"}},
		{name: "both lazy", vars: map[string]string{"innodb_flush_log_at_trx_commit": "2", "log_bin": "ON", "sync_binlog": "0"},
			why:   []string{"innodb_flush_log_at_trx_commit=2", "sync_binlog=0"},
			fixes: "innodb_flush_log_at_trx_commit=1; sync_binlog=1"},
		{name: "Group Replication member", vars: map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "ON", "sync_binlog": "1",
			"group_replication_group_name": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "group_replication_consistency": "BEFORE_ON_PRIMARY_FAILOVER"},
			durable: true, why: []string{"Group Replication member, group_replication_consistency=BEFORE_ON_PRIMARY_FAILOVER",
				"innodb_flush_log_at_trx_commit=1, sync_binlog=1", "on this node's disk before it acknowledges it"}},
		{name: "Group Replication member flushing lazily", vars: map[string]string{"innodb_flush_log_at_trx_commit": "2", "log_bin": "ON", "sync_binlog": "1",
			"group_replication_group_name": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "group_replication_consistency": "EVENTUAL"},
			why:   []string{"group_replication_consistency=EVENTUAL", "not a crash or power loss of every node at once"},
			fixes: "innodb_flush_log_at_trx_commit=1"},
		{name: "Group Replication minority forced", vars: map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "ON", "sync_binlog": "1",
			"group_replication_group_name": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "group_replication_force_members": "127.0.0.1:33061"},
			why:   []string{"group_replication_force_members=127.0.0.1:33061", "without a majority"},
			fixes: "group_replication_force_members=''"},
	}
	for _, c := range []struct {
		name, size, flush, opts string
		durable                 bool
		why                     []string
		fixes                   string
	}{
		{name: "Galera flush 1", size: "3", flush: "1", durable: true,
			why: []string{"Galera node, a cluster of 3", "innodb_flush_log_at_trx_commit=1", "on this node's disk before it acknowledges it"}},
		{name: "Galera flush 2", size: "3", flush: "2",
			why:   []string{"Galera node, a cluster of 3", "innodb_flush_log_at_trx_commit=2", "survives while one node of the cluster does, not a crash or power loss of every node at once"},
			fixes: "innodb_flush_log_at_trx_commit=1"},
		{name: "Galera flush 0", size: "2", flush: "0",
			why: []string{"a cluster of 2", "while one node of the cluster does"}, fixes: "innodb_flush_log_at_trx_commit=1"},
		{name: "Galera of one node, flush 0", size: "1", flush: "0",
			why:   []string{"alone in its cluster, a single server", "about a second of commits is lost on any crash of mysqld"},
			fixes: "innodb_flush_log_at_trx_commit=1"},
		{name: "Galera of one node, flush 1", size: "1", flush: "1", durable: true, why: []string{"a single server"}},
		{name: "Galera ignoring split brain", size: "3", flush: "1", opts: "base_port = 4567; pc.ignore_sb = true; pc.ignore_quorum = false",
			why: []string{"pc.ignore_sb=true", "both sides of a network split take writes"}, fixes: "pc.ignore_sb=false"},
		{name: "Galera ignoring quorum", size: "3", flush: "1", opts: "pc.ignore_quorum=YES",
			why: []string{"pc.ignore_quorum=YES", "without a majority"}, fixes: "pc.ignore_quorum=false"},
	} {
		vars, status := galera(c.size, c.opts)
		vars["innodb_flush_log_at_trx_commit"] = c.flush
		tests = append(tests, struct {
			name    string
			vars    map[string]string
			status  map[string]string
			durable bool
			why     []string
			fixes   string
		}{c.name, vars, status, c.durable, c.why, c.fixes})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			durable, why, fixes := store.JudgeMySQL(tc.vars, tc.status)
			if durable != tc.durable {
				t.Errorf("durable %v, want %v (%s)", durable, tc.durable, why)
			}
			containsInOrder(t, why, tc.why)
			d := store.Durability{Nodes: []store.NodeDurability{{Known: true, Durable: durable, Why: why, Fixes: fixes}}}
			if got := d.Fixes(); got != tc.fixes {
				t.Errorf("fixes %q, want %q", got, tc.fixes)
			}
		})
	}
}

func TestJudgeSQLite(t *testing.T) {
	tests := []struct {
		name        string
		memory      bool
		mode        string
		synchronous int
		durable     bool
		why         []string
	}{
		{name: "leaf's own: FULL in WAL", mode: "wal", synchronous: 2, durable: true, why: []string{"synchronous=FULL, journal_mode=wal", "on disk"}},
		{name: "EXTRA with a rollback journal", mode: "delete", synchronous: 3, durable: true},
		{name: "NORMAL in WAL", mode: "wal", synchronous: 1, why: []string{"synchronous=NORMAL", "survives a crash of leaf, not of the machine", "set synchronous=FULL"}},
		{name: "NORMAL with a rollback journal", mode: "delete", synchronous: 1, why: []string{"synchronous=NORMAL", "set synchronous=FULL"}},
		{name: "OFF", mode: "wal", synchronous: 0, why: []string{"synchronous=OFF", "can lose commits or corrupt the file", "set synchronous=FULL"}},
		{name: "no journal", mode: "off", synchronous: 2, why: []string{"journal_mode=off", "set journal_mode=WAL"}},
		{name: "in memory", memory: true, mode: "memory", synchronous: 2, why: []string{"in memory", "forgotten when leaf stops", "give --sqlite-path a file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			durable, why, fixes := store.JudgeSQLite(tc.memory, tc.mode, tc.synchronous)
			if durable != tc.durable {
				t.Errorf("durable %v, want %v (%s)", durable, tc.durable, why)
			}
			if durable != (len(fixes) == 0) {
				t.Errorf("durable %v with fixes %v", durable, fixes)
			}
			containsInOrder(t, why, tc.why)
		})
	}
}

// TestSQLiteDurability reads the settings of real files: leaf's own
// (synchronous=FULL in WAL mode), files opened with NORMAL and OFF, and an
// in-memory database; with RequireDurable, only the first hands out
// ranges and worker ids.
func TestSQLiteDurability(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, synchronous string
		memory            bool
		durable           bool
		why               string
	}{
		{name: "FULL", synchronous: "FULL", durable: true, why: "synchronous=FULL, journal_mode=wal"},
		{name: "NORMAL", synchronous: "NORMAL", why: "synchronous=NORMAL, journal_mode=wal: a commit survives a crash of leaf, not of the machine"},
		{name: "OFF", synchronous: "OFF", why: "synchronous=OFF, journal_mode=wal"},
		{name: "memory", synchronous: "FULL", memory: true, why: "the database is in memory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leaf.db")
			if tc.memory {
				path = ":memory:"
			}
			var seen []store.Durability
			s, err := store.OpenSQLiteSynchronous(ctx, path, store.Options{
				RequireDurable: true,
				OnDurability:   func(d store.Durability) { seen = append(seen, d) },
			}, tc.synchronous)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			d, ok := s.Durability()
			if !ok || !d.Known() || d.Durable() != tc.durable || len(d.Nodes) != 1 {
				t.Fatalf("Durability() = %+v, %v; want known, durable %v, one node", d, ok, tc.durable)
			}
			if why := d.Nodes[0].Why; !strings.Contains(why, tc.why) {
				t.Errorf("why %q, want it to contain %q", why, tc.why)
			}
			if len(seen) != 1 {
				t.Errorf("OnDurability called %d times at the open, want once", len(seen))
			}
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			createTag(t, s, "t", 1, 10)
			_, err = s.Allocate(ctx, "t", 0)
			_, lerr := s.Acquire(ctx, "h", 1024, 30*time.Second)
			if tc.durable {
				if err != nil || lerr != nil {
					t.Fatalf("a durable store refused: Allocate: %v; Acquire: %v", err, lerr)
				}
				return
			}
			for _, err := range []error{err, lerr} {
				if !errors.Is(err, segment.ErrStoreUnavailable) || !errors.Is(err, store.ErrNotDurable) || !strings.Contains(err.Error(), tc.why) {
					t.Errorf("err %v, want store unavailable, ErrNotDurable, saying %q", err, tc.why)
				}
			}
		})
	}
}

// TestMySQLDurability reads the settings of a server of its own, started
// with the binary log on, as they are changed under it: sync_binlog=0
// (MariaDB's default) can forget, sync_binlog=1 cannot, and
// innodb_flush_log_at_trx_commit 2 and 0 can. A store that requires
// durability refuses ranges, sequence raises and worker leases while it
// can forget, and serves again once the settings are put right; the
// store reads them again by itself.
func TestMySQLDurability(t *testing.T) {
	mariadbtest.Require(t)
	store.SetDurabilityEvery(t, 50*time.Millisecond)
	ctx := context.Background()
	srv := mariadbtest.StartServerWith(t, "log_bin=leaf-bin", "server_id=1")
	root, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	set := func(q string) {
		t.Helper()
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	set("CREATE DATABASE leaf")

	verdicts := make(chan store.Durability, 100)
	s, err := store.OpenMySQL(ctx, srv.DSN("leaf"), store.Options{
		RequireDurable: true,
		Timeout:        2 * time.Second,
		OnDurability:   func(d store.Durability) { verdicts <- d },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	createTag(t, s, "t", 1, 10)
	refused := func(want string) {
		t.Helper()
		_, err := s.Allocate(ctx, "t", 0)
		_, lerr := s.Acquire(ctx, "h", 1024, 30*time.Second)
		for _, err := range []error{err, lerr} {
			if !errors.Is(err, segment.ErrStoreUnavailable) || !errors.Is(err, store.ErrNotDurable) || !strings.Contains(err.Error(), want) {
				t.Errorf("err %v, want store unavailable, ErrNotDurable, saying %q", err, want)
			}
		}
	}
	// next waits for the store to report a verdict, reading by itself.
	next := func(durable bool) store.Durability {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case d := <-verdicts:
				if d.Durable() == durable {
					return d
				}
			case <-deadline:
				t.Fatalf("no verdict with durable %v within 10s", durable)
			}
		}
	}

	d := next(false)
	if len(d.Nodes) != 1 || d.Nodes[0].Node != srv.Addr() {
		t.Fatalf("nodes %+v, want one, %s", d.Nodes, srv.Addr())
	}
	containsInOrder(t, d.Reason(), []string{"single server", "sync_binlog=0", "set sync_binlog=1"})
	if got, want := d.Fixes(), "sync_binlog=1 on "+srv.Addr(); got != want {
		t.Errorf("fixes %q, want %q", got, want)
	}
	refused("sync_binlog=0")

	set("SET GLOBAL sync_binlog = 1")
	d = next(true)
	containsInOrder(t, d.Nodes[0].Why, []string{"innodb_flush_log_at_trx_commit=1, sync_binlog=1 with the binary log on"})
	if _, err := s.Allocate(ctx, "t", 0); err != nil {
		t.Fatalf("durable again: %v", err)
	}
	l, err := s.Acquire(ctx, "h", 1024, 30*time.Second)
	if err != nil {
		t.Fatalf("durable again: %v", err)
	}

	for _, flush := range []string{"2", "0"} {
		set("SET GLOBAL innodb_flush_log_at_trx_commit = " + flush)
		d = s.CheckDurability(ctx)
		if d.Durable() {
			t.Fatalf("flush %s: durable", flush)
		}
		containsInOrder(t, d.Reason(), []string{"innodb_flush_log_at_trx_commit=" + flush, "set innodb_flush_log_at_trx_commit=1"})
		refused("innodb_flush_log_at_trx_commit=" + flush)
	}
	if _, err := s.Renew(ctx, l, 0, 30*time.Second); !errors.Is(err, store.ErrNotDurable) {
		t.Errorf("renewal while the store can forget: %v, want ErrNotDurable", err)
	}
	set("SET GLOBAL innodb_flush_log_at_trx_commit = 1")
	next(true)
	if _, err := s.Allocate(ctx, "t", 0); err != nil {
		t.Fatalf("durable again: %v", err)
	}
}

// TestDurabilityOfNodes: every node of a cluster is read on a connection
// of its own; a node that does not answer is not known, and says nothing
// against the store; a reading that reaches no node keeps the last
// verdict.
func TestDurabilityOfNodes(t *testing.T) {
	mariadbtest.Require(t)
	n := startNode(t, 0)
	down := closedAddr(t)
	s, err := store.OpenMySQL(context.Background(), n.dsn, store.Options{
		Addrs: []string{n.srv.Addr(), down}, Timeout: time.Second, CheckDurability: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	d, ok := s.Durability()
	if !ok || len(d.Nodes) != 2 {
		t.Fatalf("Durability() = %+v, %v; want two nodes", d, ok)
	}
	if a, b := d.Nodes[0], d.Nodes[1]; !a.Known || !a.Durable || a.Node != n.srv.Addr() || b.Known || b.Err == nil || b.Node != down {
		t.Errorf("nodes %+v, want %s durable and %s not known", d.Nodes, n.srv.Addr(), down)
	}
	if !d.Durable() || d.Reason() != "" {
		t.Errorf("durable %v, reason %q; want durable, no reason", d.Durable(), d.Reason())
	}
	n.globalExec(t, "SET GLOBAL innodb_flush_log_at_trx_commit = 2")
	d = s.CheckDurability(context.Background())
	if d.Durable() || !strings.HasPrefix(d.Reason(), "node 1 of 2: single server: innodb_flush_log_at_trx_commit=2") {
		t.Errorf("reason %q, want it to name node 1 of 2 and the setting", d.Reason())
	}
	if strings.Contains(d.Reason(), n.srv.Addr()) {
		t.Errorf("reason %q names the node's address", d.Reason())
	}

	if err := n.srv.Kill(); err != nil {
		t.Fatal(err)
	}
	kept := s.CheckDurability(context.Background())
	if !kept.Known() || !kept.Checked.Equal(d.Checked) || kept.Reason() != d.Reason() {
		t.Errorf("no node answers: %+v, want the last verdict kept", kept)
	}
	if now, _ := s.Durability(); !now.Checked.Equal(d.Checked) {
		t.Errorf("no node answers: Durability() read at %v, want the last verdict's %v", now.Checked, d.Checked)
	}
}

// TestGaleraDurability reads the settings of every node of a two-node
// Galera cluster: innodb_flush_log_at_trx_commit=2 on one node, and
// pc.ignore_sb on the other, are each named with the node they are on.
func TestGaleraDurability(t *testing.T) {
	mariadbtest.RequireGalera(t)
	c := mariadbtest.StartGalera(t, 2)
	ctx := context.Background()
	exec := func(i int, q string) {
		t.Helper()
		db, err := sql.Open("mysql", c.Nodes()[i].DSN(""))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("node %d: %s: %v", i, q, err)
		}
	}
	exec(0, "CREATE DATABASE leaf")
	addrs := []string{c.Nodes()[0].Addr(), c.Nodes()[1].Addr()}
	s, err := store.OpenMySQL(ctx, c.Nodes()[0].DSN("leaf"), store.Options{Addrs: addrs, CheckDurability: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	d, _ := s.Durability()
	if !d.Durable() || len(d.Nodes) != 2 {
		t.Fatalf("a fresh cluster: %+v, want two durable nodes", d)
	}
	containsInOrder(t, d.Nodes[1].Why, []string{"Galera node, a cluster of 2", "innodb_flush_log_at_trx_commit=1"})

	exec(1, "SET GLOBAL innodb_flush_log_at_trx_commit = 2")
	exec(0, "SET GLOBAL wsrep_provider_options = 'pc.ignore_sb=true'")
	d = s.CheckDurability(ctx)
	containsInOrder(t, d.Reason(), []string{
		"node 1 of 2: Galera node, a cluster of 2: pc.ignore_sb=true",
		"node 2 of 2: Galera node, a cluster of 2: innodb_flush_log_at_trx_commit=2: a commit survives while one node of the cluster does, not a crash or power loss of every node at once",
	})
	if got, want := d.Fixes(), "pc.ignore_sb=false on "+addrs[0]+"; innodb_flush_log_at_trx_commit=1 on "+addrs[1]; got != want {
		t.Errorf("fixes %q, want %q", got, want)
	}
}

// containsInOrder fails t unless s holds each of parts, in their order.
func containsInOrder(t *testing.T, s string, parts []string) {
	t.Helper()
	rest := s
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("%q: no %q (in this place)", s, p)
			return
		}
		rest = rest[i+len(p):]
	}
}
