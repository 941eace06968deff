package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// HeaderRoutesVersion carries a space's routing table version on the
// sequence routes (next and current). A client that holds a table sends
// its version; when the instance that answers sees another, its answer
// carries that one, so that the client knows its table is stale. Requests
// without it are answered without it, and cost one header lookup more.
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
	if err := s.svc.Off(service.ModeSequences); err != nil {
		return err
	}
	if !s.svc.TellsRoutes() {
		return newError(http.StatusNotFound, codeNotFound, "this server tells no routing tables")
	}
	space, _, err := s.pathSpaceKey(c, false)
	if err != nil {
		return err
	}
	if c.Request().URL.RawQuery != "" {
		if _, err := query(c); err != nil {
			return err
		}
	}
	r, err := s.svc.SequenceRoutes(c.Request().Context(), space)
	if err != nil {
		return err
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

// withRoutesVersion answers, on h, a sequence route, the version of the
// space's routing table when the request holds another (see
// HeaderRoutesVersion), where routing tables are told.
func (s *server) withRoutesVersion(h echo.HandlerFunc) echo.HandlerFunc {
	if !s.svc.TellsRoutes() {
		return h
	}
	return func(c echo.Context) error {
		held := c.Request().Header[HeaderRoutesVersion]
		if len(held) == 0 {
			return h(c)
		}
		if space, err := pathParam(c, "space"); err == nil {
			if v, _ := s.svc.RoutesVersion(space); v != "" && v != held[0] {
				c.Response().Header().Set(HeaderRoutesVersion, v)
			}
		}
		return h(c)
	}
}
