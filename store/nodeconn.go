package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// nodeConn is a connection to one node. It leaves the node when the node
// breaks the connection, refuses a statement or does not answer in time.
type nodeConn struct {
	conn  driver.Conn
	nodes *nodes
	idx   int64
	epoch int64
	// cluster is what the node was found to be part of when connected,
	// and checked when it was last found writable: a member of a Group
	// Replication group is checked again every groupRecheck.
	cluster cluster
	checked time.Time
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
// that was left is not used again, nor one to a member of a Group
// Replication group that is no longer the primary of a majority: a primary
// cut off in a minority holds its writes rather than refuse them.
func (c *nodeConn) ResetSession(ctx context.Context) error {
	if !c.current() {
		return driver.ErrBadConn
	}
	if c.cluster == groupMember && time.Since(c.checked) >= groupRecheck {
		if _, err := writable(ctx, c.conn); err != nil {
			c.nodes.leave(c.idx)
			return driver.ErrBadConn
		}
		c.checked = time.Now()
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
