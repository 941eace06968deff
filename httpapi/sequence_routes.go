package httpapi

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/leafapi"
	"github.com/leafid/leaf/sequence"
)

// SequenceRoutes tells the routing tables of the sequence spaces, so that
// clients send each key's requests to its owner (sequence.Sequencer
// implements it). Config.Sequences serves them when it implements it too.
type SequenceRoutes interface {
	// Routes is a space's routing table.
	Routes(ctx context.Context, space string) (sequence.Routes, error)
	// RoutesVersion is the version of a space's table, or "" for a space
	// not known yet.
	RoutesVersion(space string) string
}

// HeaderRoutesVersion is set on the answers of the sequence routes (next
// and current): the version of the space's routing table as the instance
// that answered sees it. A client holding a table of another version
// knows that its table is stale.
const HeaderRoutesVersion = "Leaf-Routes-Version"

// routesJSON is the answer of GET /api/sequence/routes/{space}.
type routesJSON struct {
	Space    string `json:"space"`
	Sections int    `json:"sections"`
	// Scheme names how a key maps to its section: sequence.RouteScheme.
	Scheme  string   `json:"scheme"`
	Version string   `json:"version"`
	Members []string `json:"members"`
	// Owners holds, per section, an index into Members, or -1 while no
	// instance serves it.
	Owners []int `json:"owners"`
}

func (s *server) sequenceRoutes(c echo.Context) error {
	if s.cfg.Sequences == nil {
		return s.sequencesOff()
	}
	rt, ok := s.cfg.Sequences.(SequenceRoutes)
	if !ok {
		return newError(http.StatusNotFound, codeNotFound, "this server tells no routing tables")
	}
	space, _, err := pathSpaceKey(c, false)
	if err != nil {
		return err
	}
	if c.Request().URL.RawQuery != "" {
		if _, err := query(c); err != nil {
			return err
		}
	}
	r, err := rt.Routes(c.Request().Context(), space)
	if err != nil {
		return leafapi.WithSpace(space, err)
	}
	out := routesJSON{
		Space:    r.Space,
		Sections: r.Sections,
		Scheme:   sequence.RouteScheme,
		Version:  r.Version,
		Members:  r.Members,
		Owners:   r.Owners,
	}
	if out.Members == nil {
		out.Members = []string{}
	}
	return c.JSON(http.StatusOK, out)
}

// withRoutesVersion sets HeaderRoutesVersion on the answers of h, a
// sequence route, when the Sequences tell routing tables. (The answer to
// a request forwarded here has it too, but the instance that forwarded the
// request answers the client with its own.)
func (s *server) withRoutesVersion(h echo.HandlerFunc) echo.HandlerFunc {
	rt, ok := s.cfg.Sequences.(SequenceRoutes)
	if !ok {
		return h
	}
	// The header's value is shared by the answers while the version
	// stays the same, so that setting it allocates nothing.
	var last atomic.Pointer[[]string]
	return func(c echo.Context) error {
		space, err := pathParam(c, "space")
		if err != nil {
			return h(c)
		}
		v := rt.RoutesVersion(space)
		if v == "" {
			return h(c)
		}
		p := last.Load()
		if p == nil || (*p)[0] != v {
			p = &[]string{v}
			last.Store(p)
		}
		c.Response().Header()[HeaderRoutesVersion] = *p
		return h(c)
	}
}
