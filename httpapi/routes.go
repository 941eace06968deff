package httpapi

import (
	"strings"

	"github.com/labstack/echo/v4"
)

// routes is what routes registers routes on.
type routes interface {
	GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	HEAD(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	PATCH(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	PUT(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	DELETE(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
}

// chained registers each route with every middleware composed around its
// handler once, at registration. Echo composes its global and route
// middleware anew on every request, an allocation per middleware per
// request on the hot path. The order is echo's: observe outermost, then
// recover, headNoBody, bodyLimit, the route's own middleware, the handler.
// Requests that match no route (404, 405) never reach a chain; echo hands
// them to handleUnrouted.
type chained struct {
	e *echo.Echo
	s *server
	// gets keeps the composed chain of every GET route, by its path, for
	// the Handler's direct paths.
	gets map[string]echo.HandlerFunc
}

func (r chained) wrap(h echo.HandlerFunc, m []echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(m) - 1; i >= 0; i-- {
		h = m[i](h)
	}
	return r.s.observe(r.s.recover(headNoBody(bodyLimit(maxBodyBytes)(h))))
}

func (r chained) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	chain := r.wrap(h, r.s.idAuth(path, m))
	if r.gets != nil {
		r.gets[path] = chain
	}
	return r.e.GET(path, chain)
}

func (r chained) HEAD(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.HEAD(path, r.wrap(h, r.s.idAuth(path, m)))
}

func (r chained) POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.POST(path, r.wrap(h, r.s.idAuth(path, m)))
}

func (r chained) PUT(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.PUT(path, r.wrap(h, r.s.idAuth(path, m)))
}

func (r chained) DELETE(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.DELETE(path, r.wrap(h, r.s.idAuth(path, m)))
}

func (r chained) PATCH(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.PATCH(path, r.wrap(h, m))
}

// idAuth is m, with the check of the id routes' token first where they
// have one (Config.IDToken) and path is one of them: every route under
// /api/ but the admin API's, which has its own.
func (s *server) idAuth(path string, m []echo.MiddlewareFunc) []echo.MiddlewareFunc {
	if s.cfg.IDToken == "" || !strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/api/admin") {
		return m
	}
	return append([]echo.MiddlewareFunc{s.requireBearer(s.idSum, "http_ids", "")}, m...)
}

// routes registers every route of the API.
//
// HEAD is answered where a GET has no effect (the operations routes and
// the OpenAPI document); on the id routes it is a 405, for a HEAD that
// took an id would waste it and one that did not could not say what a GET
// would have returned.
//
// A route whose last part is a parameter is registered a second time
// without it, so that an empty tag or id is the 400 of a bad parameter,
// not a 404.
//
// Every route is described in openapi.json; openapi_test.go fails for a
// route registered here and missing there.
//
// Its parts, one per part of the API, are the flat list of the routes,
// registered in this file as echo's own examples do, so that the whole
// API is read top to bottom beside openapi.json.
func (s *server) routes(e routes) {
	s.operationRoutes(e)
	s.idRoutes(e)
	s.sequenceRoutesOf(e)
	s.adminRoutes(e)
}

// operationRoutes are health, readiness, metrics, the OpenAPI document and
// the status page.
func (s *server) operationRoutes(e routes) {
	for path, h := range map[string]echo.HandlerFunc{
		"/healthz":      s.healthz,
		"/readyz":       s.readyz,
		"/metrics":      s.metricsHandler(),
		"/openapi.json": s.openAPI,
	} {
		e.GET(path, h)
		e.HEAD(path, h)
	}
	// The status page is open, as /metrics is, unless it has a token of
	// its own; it is read-only, so the admin token is not asked for.
	var statusAuth []echo.MiddlewareFunc
	if s.cfg.StatusToken != "" {
		statusAuth = append(statusAuth, s.requireBearer(s.statusSum, "status", ""))
	}
	for path, h := range map[string]echo.HandlerFunc{
		"/status":      s.statusPage,
		"/status.json": s.statusJSONHandler,
	} {
		e.GET(path, h, statusAuth...)
		e.HEAD(path, h, statusAuth...)
	}
}

// idRoutes are the ids of segment mode, snowflake mode (with the worker
// leases and the bounds of a span of time) and UUIDs.
func (s *server) idRoutes(e routes) {
	for _, r := range []struct {
		prefix string
		h      echo.HandlerFunc
	}{
		{"/api/segment/get/", s.segmentGet},
		{"/api/segment/batch/", s.segmentBatch},
		{"/api/segment/range/", s.segmentRange},
	} {
		e.GET(r.prefix+":tag", r.h)
		e.GET(r.prefix, r.h)
	}

	e.GET("/api/snowflake/get", s.snowflakeGet)
	e.GET("/api/snowflake/get/:key", s.snowflakeGet)
	e.GET("/api/snowflake/batch", s.snowflakeBatch)
	e.GET("/api/snowflake/decode/:id", s.snowflakeDecode)
	e.GET("/api/snowflake/bounds", s.snowflakeBounds)
	e.GET("/api/snowflake/layout", s.snowflakeLayout)
	e.POST("/api/snowflake/leases", s.workerAcquire)
	e.PUT("/api/snowflake/leases/:worker_id", s.workerRenew)
	e.DELETE("/api/snowflake/leases/:worker_id", s.workerRelease)

	e.GET("/api/uuid/get", s.uuidGet)
	e.GET("/api/uuid/batch", s.uuidBatch)
	e.GET("/api/uuid/decode/:uuid", s.uuidDecode)
	e.GET("/api/uuid/decode/", s.uuidDecode)
	e.GET("/api/uuid/bounds", s.uuidBounds)
}

// sequenceRoutesOf are the per-key sequences, their routing tables, and
// the conversion of ids between their text forms.
func (s *server) sequenceRoutesOf(e routes) {
	// A sequence key may be anything of 1..256 bytes: the routes without
	// it, or without the space, make an empty one a 400. Their answers
	// tell a client holding a stale routing table the current version.
	for _, r := range []struct {
		prefix string
		h      echo.HandlerFunc
	}{
		{"/api/sequence/next/", s.withRoutesVersion(s.sequenceNext)},
		{"/api/sequence/current/", s.withRoutesVersion(s.sequenceCurrent)},
		{"/api/sequence/key/", s.withRoutesVersion(s.sequenceKey)},
	} {
		e.GET(r.prefix+":space/:key", r.h)
		e.GET(r.prefix+":space/", r.h)
		e.GET(r.prefix+":space", r.h)
		e.GET(r.prefix, r.h)
	}
	e.GET("/api/sequence/routes/:space", s.sequenceRoutes)
	e.GET("/api/sequence/routes/", s.sequenceRoutes)

	e.GET("/api/convert/:form/:id", s.convert)
	e.GET("/api/convert/:form/", s.convert)
	e.GET("/api/snowflake/decode/", s.snowflakeDecode)
}

// adminRoutes are the admin API, mounted only with an admin token.
func (s *server) adminRoutes(e routes) {
	if s.cfg.AdminToken == "" {
		return // unmounted: /api/admin/... falls through to 404 not_found
	}
	// The auth middleware is attached per route rather than with
	// Group.Use, which would turn wrong methods (405) into 404s.
	auth := s.requireToken
	e.POST("/api/admin/tags", s.adminCreateTag, auth)
	e.GET("/api/admin/tags", s.adminListTags, auth)
	for _, path := range []string{"/api/admin/tags/:tag", "/api/admin/tags/"} {
		e.GET(path, s.adminGetTag, auth)
		e.PATCH(path, s.adminUpdateTag, auth)
	}
	e.GET("/api/admin/tags/:tag/reveal/:id", s.adminReveal, auth)
	e.GET("/api/admin/segments", s.adminSegments, auth)
	e.POST("/api/admin/sequences", s.adminCreateSpace, auth)
	e.GET("/api/admin/sequences", s.adminListSpaces, auth)
	e.GET("/api/admin/sequences/:space", s.adminGetSpace, auth)
	e.GET("/api/admin/sequences/", s.adminGetSpace, auth)
}
