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

// SectionOf is the client's copy of the server's sequence.SectionOf.
var SectionOf = sectionOf

// Copies of the server's names, held to them by TestRoutesMatchServer.
const (
	HeaderRoutesVersion = headerRoutesVersion
	RouteScheme         = routeScheme
)

// RoutesVersion is the version of the routing table c holds for space,
// or "" while it holds none.
func RoutesVersion(c *Client, space string) string {
	v, ok := c.routes.Load(space)
	if !ok {
		return ""
	}
	if t := v.(*spaceRoutes).table.Load(); t != nil {
		return t.version
	}
	return ""
}

// OwnerFailures is how many times in a row the owner at addr, named in
// the routing table c holds for space, failed; -1 when the table does not
// name it.
func OwnerFailures(c *Client, space, addr string) int {
	v, ok := c.routes.Load(space)
	if !ok {
		return -1
	}
	t := v.(*spaceRoutes).table.Load()
	if t == nil {
		return -1
	}
	for _, e := range t.owners {
		if e != nil && e.base == "http://"+addr {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.failures
		}
	}
	return -1
}

// RoutesFetched reports whether c fetched space's routing table at least
// once and is not fetching it now, whatever came of it.
func RoutesFetched(c *Client, space string) bool {
	v, ok := c.routes.Load(space)
	if !ok {
		return false
	}
	sr := v.(*spaceRoutes)
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return !sr.last.IsZero() && !sr.fetching
}
