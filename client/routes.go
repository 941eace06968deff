package client

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// headerRoutesVersion is the header of the sequence routes that carries a
// routing table's version (the server's httpapi.HeaderRoutesVersion): the
// client sends the version of the table it holds, and an answer from a
// server that sees another carries that one.
const headerRoutesVersion = "Leaf-Routes-Version"

// routeScheme is the one mapping from key to section this client computes
// (the server's sequence.RouteScheme): sectionOf. A table of another
// scheme routes nothing.
const routeScheme = "fnv1a64-mod"

// sectionOf is the section of key among sections: the 64-bit FNV-1a hash
// of its bytes modulo sections, as the server computes it.
func sectionOf(key string, sections int) int {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime
	}
	return int(h % uint64(sections))
}

// routeTable is a space's routing table as the client holds it.
type routeTable struct {
	version string
	// owners holds, per section, the owner to call; nil where the server
	// named none, or for every section of a table of another scheme.
	owners []*endpoint
}

// ownerOf is the owner of key's section, or nil (also for no table).
func (t *routeTable) ownerOf(key string) *endpoint {
	if t == nil {
		return nil
	}
	return t.owners[sectionOf(key, len(t.owners))]
}

// spaceRoutes is what the client knows of one space's routing.
type spaceRoutes struct {
	table atomic.Pointer[routeTable] // nil until the first fetch succeeds

	mu       sync.Mutex // protects the fields below
	fetching bool
	last     time.Time // when the last fetch started
}

// routesOf is the space's routing, created on first use; nil when
// sequence calls go to the endpoints only.
func (c *Client) routesOf(space string) *spaceRoutes {
	if c.cfg.NoDirectSequences {
		return nil
	}
	if v, ok := c.routes.Load(space); ok {
		return v.(*spaceRoutes)
	}
	v, _ := c.routes.LoadOrStore(space, &spaceRoutes{})
	return v.(*spaceRoutes)
}

// refreshRoutes fetches the space's table in the background, unless a
// fetch is running or one started less than RoutesInterval ago.
func (c *Client) refreshRoutes(space string, sr *spaceRoutes) {
	now := c.now()
	sr.mu.Lock()
	if sr.fetching || !sr.last.IsZero() && now.Sub(sr.last) < c.cfg.RoutesInterval && !now.Before(sr.last) {
		sr.mu.Unlock()
		return
	}
	sr.fetching, sr.last = true, now
	sr.mu.Unlock()
	if !c.spawn(func() { c.fetchRoutes(space, sr) }) {
		sr.mu.Lock()
		sr.fetching = false
		sr.mu.Unlock()
	}
}

// fetchRoutes asks the endpoints for the space's table and keeps it. A
// fetch that fails leaves the table as it was: calls go on to the owners
// it names, or to the endpoints, and the next sign of a stale table
// fetches again.
func (c *Client) fetchRoutes(space string, sr *spaceRoutes) {
	defer func() {
		sr.mu.Lock()
		sr.fetching = false
		sr.mu.Unlock()
	}()
	a := &routesAnswer{}
	from := c.fetchTable("/api/sequence/routes/"+url.PathEscape(space), a)
	if from == nil {
		return
	}
	// The owners are called with the scheme of the endpoint that told the
	// table: a client given https:// endpoints never calls an owner in
	// clear.
	scheme, _, _ := strings.Cut(from.base, "://")
	t := &routeTable{version: a.Version, owners: make([]*endpoint, a.Sections)}
	if a.Scheme == routeScheme {
		// An owner keeps its state (a back-off after a failure) from
		// one table to the next.
		known := map[string]*endpoint{}
		if old := sr.table.Load(); old != nil {
			for _, e := range old.owners {
				if e != nil {
					known[e.base] = e
				}
			}
		}
		for i, o := range a.Owners {
			if o < 0 {
				continue
			}
			base := scheme + "://" + a.Members[o]
			if known[base] == nil {
				known[base] = &endpoint{base: base}
			}
			t.owners[i] = known[base]
		}
	}
	sr.table.Store(t)
}

// fetchTable asks the endpoints not backing off, in turn, for a routing
// table, until one answers it, and returns that one (nil when none did).
// Unlike get, it leaves the endpoints' health as it is: a table is an aid,
// and an endpoint that cannot tell one (a server of an older version,
// say) may still serve every call.
func (c *Client) fetchTable(path string, a *routesAnswer) *endpoint {
	n := len(c.eps)
	first := int(c.turn.Add(1) % uint64(n))
	for i := range n {
		e := c.eps[(first+i)%n]
		if !e.usable(c.now()) {
			continue
		}
		err := c.try(c.ctx, e, path, a)
		switch {
		case err == nil:
			return e
		case c.ctx.Err() != nil || !err.failover():
			return nil
		}
	}
	return nil
}

// routesAnswer is the body of GET /api/sequence/routes/{space}.
type routesAnswer struct {
	Sections int      `json:"sections"`
	Scheme   string   `json:"scheme"`
	Version  string   `json:"version"`
	Members  []string `json:"members"`
	Owners   []int    `json:"owners"`
}

func (a *routesAnswer) check() error {
	switch {
	case a.Sections < 1 || len(a.Owners) != a.Sections:
		return fmt.Errorf("a routing table of %d sections with %d owners", a.Sections, len(a.Owners))
	case a.Version == "" || a.Scheme == "":
		return fmt.Errorf("a routing table without a version or scheme")
	}
	for _, m := range a.Members {
		if u, err := url.Parse("http://" + m); err != nil || u.Host != m || m == "" || strings.ContainsAny(m, "/?#@") {
			return fmt.Errorf("a routing table names the address %q, not host:port", m)
		}
	}
	for _, o := range a.Owners {
		if o < -1 || o >= len(a.Members) {
			return fmt.Errorf("a routing table names owner %d of %d members", o, len(a.Members))
		}
	}
	return nil
}

// routed, in an answer of a sequence route, holds the version of the
// routing table the request was sent with, and the version the answer
// came with, if any (try sends the one and notes the other).
type routed struct{ held, seen string }

func (r *routed) hold(v string)         { r.held = v }
func (r *routed) heldVersion() string   { return r.held }
func (r *routed) sawVersion(v string)   { r.seen = v }
func (r *routed) routesVersion() string { return r.seen }

// versioned is an answer whose request carries a routing table version,
// and which notes the version it came with.
type versioned interface {
	heldVersion() string
	sawVersion(string)
}

// routedAnswer is the answer of a sequence route.
type routedAnswer interface {
	answer
	versioned
	hold(string)
	routesVersion() string
}
