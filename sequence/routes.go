package sequence

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// RouteScheme names how a key maps to its section, for clients that
// compute it themselves: SectionOf, the 64-bit FNV-1a hash of the key's
// bytes modulo the section count.
const RouteScheme = "fnv1a64-mod"

// NoOwner marks, in Routes.Owners, a section no instance serves now.
const NoOwner = -1

// routesMaxAge is how long a space's table is reused before it is read
// again from the sections. Reading it takes a lock per section; every
// request of a client that holds a table asks for the version, so it is
// read at most ten times a second per space rather than on each. The
// sections' owners change at rounds, every quarter of a lease.
const routesMaxAge = 100 * time.Millisecond

// Routes is a space's routing table as this instance sees it: for each
// section, where a request for one of its keys goes, which is where this
// instance would forward it.
type Routes struct {
	Space    string
	Sections int
	// Version tells two tables apart: a hash of the owner of each section,
	// so that it changes whenever one of them does, and instances that see
	// the same owners answer the same version. 16 hexadecimal digits.
	Version string
	// Members are the advertised addresses (host:port) of the owners
	// named, sorted.
	Members []string
	// Owners holds, for each section, the index of its owner in Members,
	// or NoOwner while none serves it (its owner stopped or died and its
	// lease has not run out, or no member is live).
	Owners []int
}

// routeCache holds a space's last table.
type routeCache struct {
	mu   sync.Mutex // held while the table is read again
	last atomic.Pointer[routesRead]
}

// routesRead is a table and when it was read, by the local clock.
type routesRead struct {
	routes Routes
	at     time.Time
}

// Routes answers the routing table of a space, reading a space not known
// here yet from the store. It is as fresh as this instance's last round
// (every Options.Interval), and at most routesMaxAge older.
func (q *Sequencer) Routes(ctx context.Context, spaceName string) (Routes, error) {
	sp, err := q.known(ctx, spaceName)
	if err != nil {
		return Routes{}, err
	}
	r := q.routes(sp, true)
	r.Members, r.Owners = slices.Clone(r.Members), slices.Clone(r.Owners)
	return r, nil
}

// RoutesVersion is the version of a space's routing table, or "" for a
// space not known here. It reads nothing from the store.
func (q *Sequencer) RoutesVersion(spaceName string) string {
	q.mu.RLock()
	sp := q.spaces[spaceName]
	q.mu.RUnlock()
	if sp == nil {
		return ""
	}
	return q.routes(sp, false).Version
}

// routes is the space's table: the last one read, unless it is older
// than routesMaxAge. When another caller is reading it again, a caller
// that may (wait false) takes the last one rather than wait.
func (q *Sequencer) routes(sp *space, wait bool) Routes {
	c := &sp.routes
	now := q.opts.Now()
	last := c.last.Load()
	if last != nil && now.Sub(last.at) < routesMaxAge && !now.Before(last.at) {
		return last.routes
	}
	if last != nil && !wait {
		if !c.mu.TryLock() {
			return last.routes
		}
	} else {
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if l := c.last.Load(); l != last && l != nil {
		return l.routes // read by another meanwhile
	}
	r := readRoutes(q, sp, now)
	c.last.Store(&routesRead{routes: r, at: now})
	return r
}

// readRoutes reads the owner of every section of the space.
func readRoutes(q *Sequencer, sp *space, now time.Time) Routes {
	r := Routes{Space: sp.Name, Sections: len(sp.sections), Owners: make([]int, len(sp.sections))}
	index := make(map[string]int)
	addrs := make([]string, len(sp.sections))
	for i, s := range sp.sections {
		addrs[i] = s.route(q, now)
		if addrs[i] != "" {
			index[addrs[i]] = 0
		}
	}
	for a := range index {
		r.Members = append(r.Members, a)
	}
	slices.Sort(r.Members)
	for i, a := range r.Members {
		index[a] = i
	}
	h := fnv.New64a()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(sp.sections)))
	h.Write(n[:])
	for i, a := range addrs {
		r.Owners[i] = NoOwner
		if a != "" {
			r.Owners[i] = index[a]
		}
		// Each address ends with a byte no host:port holds, so that
		// the sequence of addresses is read back one way only.
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	r.Version = fmt.Sprintf("%016x", h.Sum64())
	return r
}

// route is the address requests for the section go to, as this instance
// sees it: its own while it serves the section; the owner's, or that of
// the member about to take it, as the last round read them; or "".
func (s *section) route(q *Sequencer, now time.Time) string {
	s.mu.Lock()
	serving := s.owned && now.Before(s.deadline)
	s.mu.Unlock()
	if serving {
		return q.opts.Addr
	}
	if p := s.owner.Load(); p != nil {
		return *p
	}
	return ""
}
