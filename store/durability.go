package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"github.com/leafid/leaf/segment"
)

// Every guarantee of leaf rests on one thing the database decides: that a
// commit it acknowledged stays committed through a crash. A lost commit of
// a max_id raise is a range handed out twice. Whether it can be lost is in
// the database's settings, which this file reads and verdict.go judges
// (docs/high-availability.md, "Durability", tells each setting and what it
// risks):
//
//   - MySQL and MariaDB: innodb_flush_log_at_trx_commit (1 or 3 flush the
//     redo log at every commit; 2 survives a crash of mysqld but not of the
//     machine; 0 loses up to about a second on any crash), and, where the
//     binary log is on (a replica may be promoted), sync_binlog=1.
//   - Galera (wsrep_on): the same flush on every node, since a commit sits
//     on the disk of the node that acknowledged it only if that node
//     flushed it, and a crash of every node at once loses whatever no node
//     flushed; a cluster of one node is a single server; and the provider
//     options pc.ignore_sb and pc.ignore_quorum, which let a side of a
//     split without a majority take writes that are lost when the sides
//     join.
//   - SQLite: synchronous FULL or EXTRA with a journal (WAL or a rollback
//     journal); NORMAL in WAL mode survives a crash of leaf but not of the
//     machine; OFF, or no journal, is not safe; an in-memory database
//     forgets everything when leaf stops.

// ErrNotDurable is wrapped, beside segment.ErrStoreUnavailable, by the
// calls that take ranges from a store opened with Options.RequireDurable
// while its settings say it can forget a commit, or have not been read:
// segment's, in a *segment.NotDurableError that says why.
var ErrNotDurable = segment.ErrNotDurable

// How often a store opened with Options.CheckDurability reads its settings
// again: every durabilityEvery once read, every durabilityRetry while no
// node's settings could be read (the store was down at the start, say).
// Variables for the tests, which shorten them before opening a store.
var (
	durabilityEvery = time.Minute
	durabilityRetry = 5 * time.Second
)

// Durability is what the settings of a store's database say of its
// commits, as read at Checked: one NodeDurability for SQLite, one per node
// of a MySQL store (the DSN's address, or each of Options.Addrs).
type Durability struct {
	Checked time.Time
	Nodes   []NodeDurability
}

// NodeDurability is what one node's settings say.
type NodeDurability struct {
	// Node is the node's host:port; "" for SQLite.
	Node string
	// Known is false when the settings could not be read; Err says why.
	Known bool
	Err   error
	// Durable: a commit the node acknowledged survives a crash of the
	// database, of its machine (an OS crash, a power loss) and, for a
	// cluster, of every node at once.
	Durable bool
	// Why says in words what the settings are and what they risk; for a
	// node that can forget, the setting to change and to what.
	Why string
	// Fixes are the settings to change, empty when Durable.
	Fixes []Fix
}

// Fix is a setting to change: from Value to Want.
type Fix struct {
	Setting, Value, Want string
}

func (f Fix) String() string { return f.Setting + "=" + f.Want }

// Known reports whether the settings of at least one node were read.
func (d Durability) Known() bool {
	for _, n := range d.Nodes {
		if n.Known {
			return true
		}
	}
	return false
}

// Forgets reports whether a node whose settings were read can forget an
// acknowledged commit.
func (d Durability) Forgets() bool {
	for _, n := range d.Nodes {
		if n.Known && !n.Durable {
			return true
		}
	}
	return false
}

// Durable reports whether the settings were read and no node can forget.
func (d Durability) Durable() bool { return d.Known() && !d.Forgets() }

// Reason says why the store can forget, naming each node by its place in
// the list ("node 2 of 3"), never by its address: it is shown where anyone
// who reaches the port reads it. It is empty for a store that cannot.
func (d Durability) Reason() string {
	var parts []string
	for i, n := range d.Nodes {
		if !n.Known || n.Durable {
			continue
		}
		if len(d.Nodes) > 1 {
			parts = append(parts, fmt.Sprintf("node %d of %d: %s", i+1, len(d.Nodes), n.Why))
		} else {
			parts = append(parts, n.Why)
		}
	}
	return strings.Join(parts, "; ")
}

// Fixes lists the settings to change, each with the nodes it is to be
// changed on: "innodb_flush_log_at_trx_commit=1 on db1:3306, db2:3306".
func (d Durability) Fixes() string {
	var order []string
	on := map[string][]string{}
	for _, n := range d.Nodes {
		for _, f := range n.Fixes {
			k := f.String()
			if _, ok := on[k]; !ok {
				order = append(order, k)
			}
			if n.Node != "" {
				on[k] = append(on[k], n.Node)
			}
		}
	}
	out := make([]string, len(order))
	for i, k := range order {
		out[i] = k
		if nodes := on[k]; len(nodes) > 0 {
			out[i] += " on " + strings.Join(nodes, ", ")
		}
	}
	return strings.Join(out, "; ")
}

// Durability returns the verdict of the last reading of the settings (see
// Options.CheckDurability), and false before the first.
func (s *Store) Durability() (Durability, bool) {
	d := s.durability.Load()
	if d == nil {
		return Durability{}, false
	}
	return *d, true
}

// CheckDurability reads the settings of every node now, keeps the verdict
// for Durability and the gate of Options.RequireDurable, and calls
// Options.OnDurability when it differs from the last one. A reading that
// reached no node keeps the last verdict that did: a blip of the database
// says nothing of its settings.
func (s *Store) CheckDurability(ctx context.Context) Durability {
	s.durabilityMu.Lock()
	defer s.durabilityMu.Unlock()
	d := s.readDurability(ctx)
	if prev := s.durability.Load(); prev != nil && prev.Known() && !d.Known() {
		return *prev
	}
	prev := s.durability.Swap(&d)
	if s.onDurability != nil && (prev == nil || changed(*prev, d)) {
		s.onDurability(d)
	}
	return d
}

// changed reports whether a verdict says something other than the last:
// a node durable where it was not, or another setting to change. A node
// that could not be read is not a change: it keeps nothing to say.
func changed(prev, d Durability) bool {
	return prev.Durable() != d.Durable() || prev.Forgets() != d.Forgets() ||
		prev.Fixes() != d.Fixes() || prev.Known() != d.Known()
}

// durabilityLoop reads the settings again every durabilityEvery until ctx
// is done; more often while none could be read. A store that does not
// answer is not asked: its probe says when it answers again.
func (s *Store) durabilityLoop(ctx context.Context) {
	defer s.bg.Done()
	for {
		every := durabilityEvery
		if d, ok := s.Durability(); !ok || !d.Known() {
			every = durabilityRetry
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if !s.health.isUp() {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		s.CheckDurability(cctx)
		cancel()
	}
}

// openedDurability reads the settings once, if the store answers, and
// starts the loop that reads them again; with Options.CheckDurability or
// RequireDurable.
func (s *Store) openedDurability(ctx context.Context, opts Options) {
	if !opts.CheckDurability && !opts.RequireDurable {
		return
	}
	if s.health.isUp() {
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		s.CheckDurability(cctx)
		cancel()
	}
	s.bg.Add(1)
	go s.durabilityLoop(s.closing)
}

// takes is the gate of every call that hands out numbers: the check of
// the database's start (restart.go) and Options.RequireDurable. It returns
// nil when the store may hand out ranges, else why not, wrapping
// segment.ErrStoreUnavailable (and ErrNotDurable for the second).
func (s *Store) takes(ctx context.Context) error {
	if err := s.startsChecked(ctx); err != nil {
		return err
	}
	if !s.requireDurable {
		return nil
	}
	d, ok := s.Durability()
	switch {
	case !ok || !d.Known():
		return fmt.Errorf("%w: %w, and ranges are taken only from a durable database", segment.ErrStoreUnavailable, &segment.NotDurableError{})
	case d.Forgets():
		return fmt.Errorf("%w: %w, and ranges are taken only from a durable database", segment.ErrStoreUnavailable, &segment.NotDurableError{Reason: d.Reason()})
	}
	return nil
}

// readDurability reads and judges the settings of every node.
func (s *Store) readDurability(ctx context.Context) Durability {
	d := Durability{Checked: time.Now()}
	if s.dialect == SQLite {
		d.Nodes = []NodeDurability{s.readSQLiteDurability(ctx)}
		return d
	}
	for i := range s.nodes.list {
		d.Nodes = append(d.Nodes, s.readNodeDurability(ctx, int64(i)))
	}
	return d
}

// readNodeDurability reads the settings of node idx on a connection of its
// own, whichever node is in use.
func (s *Store) readNodeDurability(ctx context.Context, idx int64) NodeDurability {
	n := s.nodes.list[idx]
	out := NodeDurability{Node: n.addr}
	cctx, cancel := context.WithTimeout(ctx, s.nodes.budget)
	defer cancel()
	c, err := n.conn.Connect(cctx)
	if err != nil {
		out.Err = err
		return out
	}
	defer c.Close()
	q, ok := c.(driver.QueryerContext)
	if !ok {
		out.Err = fmt.Errorf("unexpected driver connection %T", c)
		return out
	}
	d := judgeNode(cctx, q)
	d.Node = out.Node
	return d
}

// judgeNode reads and judges the settings of the MySQL node q is
// connected to.
func judgeNode(ctx context.Context, q driver.QueryerContext) NodeDurability {
	var out NodeDurability
	vars, status := map[string]string{}, map[string]string{}
	if err := queryRows(ctx, q, "SHOW GLOBAL VARIABLES WHERE Variable_name IN "+
		"('innodb_flush_log_at_trx_commit', 'sync_binlog', 'log_bin', 'wsrep_on', 'wsrep_provider_options', "+
		"'group_replication_group_name', 'group_replication_consistency', 'group_replication_force_members')",
		func(v []driver.Value) { vars[strings.ToLower(text(v[0]))] = text(v[1]) }); err != nil {
		out.Err = err
		return out
	}
	if strings.EqualFold(vars["wsrep_on"], "ON") {
		if err := queryRows(ctx, q, "SHOW GLOBAL STATUS WHERE Variable_name = 'wsrep_cluster_size'",
			func(v []driver.Value) { status[strings.ToLower(text(v[0]))] = text(v[1]) }); err != nil {
			out.Err = err
			return out
		}
	}
	out.Known = true
	out.Durable, out.Why, out.Fixes = judgeMySQL(vars, status)
	return out
}

// readSQLiteDurability reads the journal mode and synchronous setting of
// the store's connections (all are opened with the same ones).
func (s *Store) readSQLiteDurability(ctx context.Context) NodeDurability {
	var (
		out  NodeDurability
		mode string
		sync int
	)
	conn, err := s.db.Conn(ctx)
	if err == nil {
		defer conn.Close()
		if err = conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err == nil {
			err = conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync)
		}
	}
	if err != nil {
		out.Err = err
		return out
	}
	out.Known = true
	out.Durable, out.Why, out.Fixes = judgeSQLite(s.memory, strings.ToLower(mode), sync)
	return out
}
