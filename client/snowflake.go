package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// flakePool holds the snowflake ids fetched and not yet handed out: the
// batch in use and the one fetched after it. A batch is stamped with the
// time its request was sent; its ids were made after that, so an id is
// never older than the time since its stamp.
type flakePool struct {
	mu       sync.Mutex // protects the fields below
	cur      []int64
	curSent  time.Time
	next     []int64
	nextSent time.Time
	running  bool  // a fetch goroutine runs
	err      error // the last fetch's error; nil after a success
	round    chan struct{}
}

func (p *flakePool) init() { p.round = make(chan struct{}) }

// Snowflake returns a snowflake id. Ids come from a batch fetched ahead of
// time; one older than SnowflakeMaxAge is never handed out. With little
// traffic, batches age out before they are used and most calls wait for a
// request.
func (c *Client) Snowflake(ctx context.Context) (int64, error) {
	p := &c.flakes
	p.mu.Lock()
	defer p.mu.Unlock()
	maxAge := c.cfg.SnowflakeMaxAge
	for {
		if c.ctx.Err() != nil {
			return 0, ErrClosed
		}
		now := c.now()
		if len(p.cur) == 0 || now.Sub(p.curSent) > maxAge {
			p.cur, p.curSent, p.next = p.next, p.nextSent, nil
			if now.Sub(p.curSent) > maxAge {
				p.cur = nil
			}
		}
		if len(p.cur) > 0 {
			id := p.cur[0]
			p.cur = p.cur[1:]
			// Fetch the next batch once half of this one is used or
			// half its life has passed.
			if p.next == nil && !p.running && (2*len(p.cur) < c.cfg.SnowflakeBatch || 2*now.Sub(p.curSent) > maxAge) {
				c.fetchFlakesLocked()
			}
			return id, nil
		}
		if !p.running && !c.fetchFlakesLocked() {
			return 0, ErrClosed
		}
		round := p.round
		p.mu.Unlock()
		err := c.await(ctx, round)
		p.mu.Lock()
		switch {
		case errors.Is(err, ErrClosed):
			return 0, ErrClosed
		case err != nil:
			return 0, fmt.Errorf("leaf client: waiting for snowflake ids: %w", err)
		case p.next == nil && p.err != nil:
			return 0, p.err
		}
	}
}

// fetchFlakesLocked starts the goroutine that fetches a batch. False once
// the client is closed.
func (c *Client) fetchFlakesLocked() bool {
	p := &c.flakes
	p.running = true
	if !c.spawn(c.fetchFlakes) {
		p.running = false
		return false
	}
	return true
}

// fetchFlakes fetches one batch. A failure is not retried in the
// background: ids fetched ahead of a caller would age meanwhile, and the
// next call tries again anyway.
func (c *Client) fetchFlakes() {
	p := &c.flakes
	a := flakeAnswer{asked: c.cfg.SnowflakeBatch}
	sent, err := c.get(c.ctx, "snowflake batch", "/api/snowflake/batch?count="+strconv.Itoa(a.asked), &a)
	if err == nil {
		if took := c.now().Sub(sent); took > c.cfg.SnowflakeMaxAge {
			err = fmt.Errorf("leaf client: snowflake batch: %w: the answer took %v, longer than SnowflakeMaxAge %v",
				ErrUnavailable, took.Round(time.Millisecond), c.cfg.SnowflakeMaxAge)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.next, p.nextSent = a.ids, sent
	}
	p.err = err
	p.running = false
	close(p.round)
	p.round = make(chan struct{})
}

// flakeAnswer is the body of GET /api/snowflake/batch?count=N:
// {"ids":["…",…]}.
type flakeAnswer struct {
	IDs []string `json:"ids"`

	asked int
	ids   []int64 // IDs, parsed by check
}

func (a *flakeAnswer) check() error {
	if len(a.IDs) < 1 || len(a.IDs) > a.asked {
		return fmt.Errorf("%d snowflake ids, asked for %d", len(a.IDs), a.asked)
	}
	a.ids = make([]int64, len(a.IDs))
	for i, s := range a.IDs {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 1 {
			return fmt.Errorf("snowflake id %q is not a positive 64-bit integer", s)
		}
		a.ids[i] = id
	}
	return nil
}
