package client

import (
	"maps"
	"math"
	"time"
)

// Sentinels returns the sentinel of each error code the client knows.
func Sentinels() map[string]error { return maps.Clone(sentinels) }

// SetNow replaces the clock of c; call it before c is used.
func SetNow(c *Client, now func() time.Time) { c.now = now }

// SetRangeSize makes c ask for ranges of n ids, past the server's limit
// if need be (the server of a test must allow it); call it before c is
// used. Benchmarks of the hot path use it for ranges that outlast them.
func SetRangeSize(c *Client, n int) { c.cfg.MinRange, c.cfg.MaxRange = n, n }

// PlanStep is what happens to a tag between two plans of its range size.
type PlanStep struct {
	Take   int64         // ids taken since the last plan
	After  time.Duration // time since the last plan
	Waited bool          // a caller found no range meanwhile
}

// PlanSizes returns the range sizes a client with cfg asks for: the first
// load's, then one after each step.
func PlanSizes(cfg Config, steps []PlanStep) ([]int64, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	b := newTagBuffer("t", c.cfg.MinRange)
	cur := &span{size: math.MaxInt64}
	b.cur.Store(cur)
	now := time.Unix(1e9, 0)
	sizes := []int64{c.planLocked(b, now)}
	for _, s := range steps {
		cur.used.Add(s.Take)
		now = now.Add(s.After)
		b.short = s.Waited
		sizes = append(sizes, c.planLocked(b, now))
	}
	return sizes, nil
}
