package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
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
// With a single node it is a plain connector that adds nothing but the
// error handling above.
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
}

type node struct {
	addr string
	conn driver.Connector
}

var _ driver.Connector = (*nodes)(nil)

// newNodes returns a connector over cfg with its address replaced by each
// of addrs in turn; no addrs means cfg's own address. timeout is the
// deadline of a call of the store, shared among the nodes when connecting.
func newNodes(cfg *mysql.Config, addrs []string, timeout time.Duration) (*nodes, error) {
	if len(addrs) == 0 {
		addrs = []string{cfg.Addr}
	}
	n := &nodes{budget: max(timeout/time.Duration(len(addrs)), 100*time.Millisecond)}
	cfg = cfg.Clone()
	cfg.Timeout = min(cfg.Timeout, n.budget)
	for _, a := range addrs {
		c := cfg.Clone()
		c.Addr = a
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

// Connect implements driver.Connector: a connection to the node in use, or
// to the next one that answers and may take writes.
func (n *nodes) Connect(ctx context.Context) (driver.Conn, error) {
	n.mu.Lock()
	start, epoch := n.cur.Load(), n.epoch.Load()
	n.mu.Unlock()
	var errs []error
	for i := range int64(len(n.list)) {
		idx := (start + i) % int64(len(n.list))
		c, err := n.connect(ctx, idx)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.list[idx].addr, err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if idx != start && n.move(start, idx) {
			epoch++
		}
		return &nodeConn{conn: c, nodes: n, idx: idx, epoch: epoch}, nil
	}
	return nil, errors.Join(errs...)
}

// connect opens a connection to node idx within the node's budget and,
// when there is a choice of nodes, checks that it may take writes.
func (n *nodes) connect(ctx context.Context, idx int64) (driver.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, n.budget)
	defer cancel()
	c, err := n.list[idx].conn.Connect(ctx)
	if err == nil && len(n.list) > 1 {
		if err = writable(ctx, c); err != nil {
			c.Close()
		}
	}
	return c, err
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

// errNotWritable: the node answers but may not take writes now.
var errNotWritable = errors.New("node may not take writes")

// writable checks that a node may take writes: not read only, and, on
// Galera, ready and synced with its cluster (a donor of a state transfer
// holds its writes until the transfer ends).
func writable(ctx context.Context, c driver.Conn) error {
	q, ok := c.(driver.QueryerContext)
	if !ok {
		return nil
	}
	vars := map[string]string{}
	if err := queryRows(ctx, q, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('read_only', 'wsrep_on')",
		func(v []driver.Value) { vars[strings.ToLower(text(v[0]))] = text(v[1]) }); err != nil {
		return err
	}
	if ro := vars["read_only"]; !strings.EqualFold(ro, "OFF") && ro != "0" {
		return fmt.Errorf("%w: read_only is %s", errNotWritable, ro)
	}
	if !strings.EqualFold(vars["wsrep_on"], "ON") {
		return nil // not a Galera node (MariaDB reports wsrep status even then)
	}
	status := map[string]string{}
	if err := queryRows(ctx, q, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state_comment')",
		func(v []driver.Value) { status[strings.ToLower(text(v[0]))] = text(v[1]) }); err != nil {
		return err
	}
	if r := status["wsrep_ready"]; !strings.EqualFold(r, "ON") {
		return fmt.Errorf("%w: wsrep_ready is %s", errNotWritable, r)
	}
	if st := status["wsrep_local_state_comment"]; !strings.EqualFold(st, "Synced") {
		return fmt.Errorf("%w: wsrep_local_state_comment is %s", errNotWritable, st)
	}
	return nil
}

func queryRows(ctx context.Context, q driver.QueryerContext, query string, row func([]driver.Value)) error {
	rows, err := q.QueryContext(ctx, query, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	v := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(v); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		row(v)
	}
}

func text(v driver.Value) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// nodeConn is a connection to one node. It leaves the node when the node
// breaks the connection, refuses a statement or does not answer in time.
type nodeConn struct {
	conn  driver.Conn
	nodes *nodes
	idx   int64
	epoch int64
}

var (
	_ driver.Conn               = (*nodeConn)(nil)
	_ driver.ConnBeginTx        = (*nodeConn)(nil)
	_ driver.ConnPrepareContext = (*nodeConn)(nil)
	_ driver.ExecerContext      = (*nodeConn)(nil)
	_ driver.QueryerContext     = (*nodeConn)(nil)
	_ driver.Pinger             = (*nodeConn)(nil)
	_ driver.SessionResetter    = (*nodeConn)(nil)
	_ driver.Validator          = (*nodeConn)(nil)
	_ driver.NamedValueChecker  = (*nodeConn)(nil)
)

// current reports whether the node of c is still the one in use.
func (c *nodeConn) current() bool {
	return c.epoch == c.nodes.epoch.Load() && c.idx == c.nodes.cur.Load()
}

// check looks at the error of a statement on c: it leaves the node when
// the error is the node's, and turns a refusal that ran nothing into
// driver.ErrBadConn so database/sql retries on another connection.
func (c *nodeConn) check(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, driver.ErrSkip) {
		return err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		c.nodes.leave(c.idx) // no answer in time
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case mysqlUnknownCom, mysqlReadOnly, mysqlReadOnlyMode, mysqlReadOnlyTx:
			// Refused before running anything: database/sql may run the
			// statement again on a new connection, to the next node.
			c.nodes.leave(c.idx)
			return fmt.Errorf("%w: node %s: %w", driver.ErrBadConn, c.nodes.list[c.idx].addr, err)
		case mysqlQueryShutdown, mysqlConnKilled:
			// The statement may have run: leave the node, keep the error.
			c.nodes.leave(c.idx)
		}
		return err
	}
	if classify(err) == unreachable && ctx.Err() == nil {
		c.nodes.leave(c.idx)
	}
	return err
}

func (c *nodeConn) Prepare(query string) (driver.Stmt, error) {
	st, err := c.conn.Prepare(query)
	return st, c.check(context.Background(), err)
}

func (c *nodeConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	p, ok := c.conn.(driver.ConnPrepareContext)
	if !ok {
		return c.Prepare(query)
	}
	st, err := p.PrepareContext(ctx, query)
	return st, c.check(ctx, err)
}

func (c *nodeConn) Close() error { return c.conn.Close() }

func (c *nodeConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *nodeConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.conn.(driver.ConnBeginTx)
	if !ok {
		return nil, errors.New("driver connection cannot begin a transaction with options")
	}
	tx, err := b.BeginTx(ctx, opts)
	return tx, c.check(ctx, err)
}

func (c *nodeConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	res, err := e.ExecContext(ctx, query, args)
	return res, c.check(ctx, err)
}

func (c *nodeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rows, err := q.QueryContext(ctx, query, args)
	return rows, c.check(ctx, err)
}

func (c *nodeConn) Ping(ctx context.Context) error {
	p, ok := c.conn.(driver.Pinger)
	if !ok {
		return nil
	}
	return c.check(ctx, p.Ping(ctx))
}

// ResetSession implements driver.SessionResetter: a connection to a node
// that was left is not used again.
func (c *nodeConn) ResetSession(ctx context.Context) error {
	if !c.current() {
		return driver.ErrBadConn
	}
	if r, ok := c.conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid implements driver.Validator.
func (c *nodeConn) IsValid() bool {
	if !c.current() {
		return false
	}
	if v, ok := c.conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue implements driver.NamedValueChecker as the driver does.
func (c *nodeConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}
