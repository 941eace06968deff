package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// nodes connects to one of the MySQL nodes of a synchronous cluster
// (Galera, Group Replication): the node in use until it stops answering or
// may no longer take writes, then the next one in the list, and so on
// round the list. It never goes back to an earlier node by itself, so a
// node that flaps does not make the instance flap with it.
//
// Connections to a node that was left are dropped by the pool on their
// next use (IsValid and ResetSession say so); a statement that a node
// refused without running it (not in the primary component, read only)
// returns driver.ErrBadConn, which database/sql retries on a new
// connection, so the caller does not see the move.
//
// A single node is checked as each of several is: a member of a MySQL
// Group Replication group outside its group, or a Galera node outside its
// primary component, takes no write even when it is the only address
// given.
type nodes struct {
	list []node
	// budget bounds one connection attempt to one node (dial, handshake,
	// writability check), so that a node that does not answer leaves time
	// for the next within one call's deadline.
	budget time.Duration
	// cur is the index of the node in use; epoch counts the moves, and a
	// connection made in an earlier epoch is not reused.
	mu    sync.Mutex // serialises moves
	cur   atomic.Int64
	epoch atomic.Int64
	drv   driver.Driver
	// verify, when set, checks a new connection to node idx before the
	// pool may use it (the start of the database: restart.go); set once,
	// before the first connection.
	verify func(ctx context.Context, idx int64, c driver.Conn) error
}

type node struct {
	addr string
	conn driver.Connector
}

var _ driver.Connector = (*nodes)(nil)

// newNodes returns a connector over cfg with its address replaced by each
// of addrs in turn; no addrs means cfg's own address. timeout is the
// deadline of a call of the store, shared among the nodes when connecting.
func newNodes(cfg *mysql.Config, addrs []string, timeout time.Duration, link *TLS) (*nodes, error) {
	if len(addrs) == 0 {
		addrs = []string{cfg.Addr}
	}
	n := &nodes{budget: max(timeout/time.Duration(len(addrs)), 100*time.Millisecond)}
	cfg = cfg.Clone()
	cfg.Timeout = min(cfg.Timeout, n.budget)
	dsnHost := hostOf(cfg.Addr)
	for _, a := range addrs {
		c := cfg.Clone()
		c.Addr = a
		switch {
		case link != nil:
			name := link.ServerName
			if name == "" {
				name = hostOf(a)
			}
			c.TLS, c.AllowFallbackToPlaintext = link.CA.Client(name), false
		case c.TLS != nil && !c.TLS.InsecureSkipVerify && c.TLS.ServerName == dsnHost:
			// tls=true: each node verified for its own host, not the
			// DSN's.
			c.TLS.ServerName = hostOf(a)
		}
		conn, err := mysql.NewConnector(c)
		if err != nil {
			return nil, err
		}
		n.list = append(n.list, node{addr: a, conn: conn})
		n.drv = conn.Driver()
	}
	return n, nil
}

// Driver implements driver.Connector.
func (n *nodes) Driver() driver.Driver { return n.drv }

// Addr is the address of the node in use.
func (n *nodes) Addr() string { return n.list[n.cur.Load()].addr }

// nodeAddrs lists the addresses of the nodes, in their order.
func nodeAddrs(ns *nodes) []string {
	out := make([]string, len(ns.list))
	for i, n := range ns.list {
		out[i] = n.addr
	}
	return out
}

// Connect implements driver.Connector: a connection to the node in use, or
// to the next one that answers and may take writes.
func (n *nodes) Connect(ctx context.Context) (driver.Conn, error) {
	n.mu.Lock()
	start, epoch := n.cur.Load(), n.epoch.Load()
	n.mu.Unlock()
	var errs []error
	for i := range int64(len(n.list)) {
		idx := (start + i) % int64(len(n.list))
		c, kind, err := n.connect(ctx, idx)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.list[idx].addr, err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if n.verify != nil {
			if err := n.verify(ctx, idx, c); err != nil {
				c.Close()
				return nil, fmt.Errorf("node %s: %w", n.list[idx].addr, err)
			}
		}
		if idx != start && n.move(start, idx) {
			epoch++
		}
		return &nodeConn{conn: c, nodes: n, idx: idx, epoch: epoch, cluster: kind, checked: time.Now()}, nil
	}
	return nil, errors.Join(errs...)
}

// connect opens a connection to node idx within the node's budget and
// checks that it may take writes (writable).
func (n *nodes) connect(ctx context.Context, idx int64) (driver.Conn, cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, n.budget)
	defer cancel()
	c, err := n.list[idx].conn.Connect(ctx)
	if err != nil {
		return nil, standalone, err
	}
	kind, err := writable(ctx, c)
	if err != nil {
		c.Close()
		return nil, kind, err
	}
	return c, kind, nil
}

// move makes node to the one in use, if node from still is, and reports
// whether it did.
func (n *nodes) move(from, to int64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cur.Load() != from {
		return false
	}
	n.cur.Store(to)
	n.epoch.Add(1)
	return true
}

// leave moves to the node after idx if idx is the one in use.
func (n *nodes) leave(idx int64) {
	if len(n.list) > 1 {
		n.move(idx, (idx+1)%int64(len(n.list)))
	}
}

// hostOf is the host of a host:port address, or the address itself.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
