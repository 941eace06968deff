// Package httpapi is the HTTP edge of leaf: the routes of the README's "HTTP API", one
// map from errors to HTTP statuses, the middleware (recover, metrics,
// logging, body limit) and the Prometheus collectors for the allocator and
// the snowflake generator.
//
// The package consumes segment and snowflake through the small interfaces
// below; it never talks to a store.
package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// SegmentIDs issues segment-mode ids (segment.Allocator implements it).
type SegmentIDs interface {
	Next(ctx context.Context, tag string) (int64, error)
	// NextN returns n ids in increasing order.
	NextN(ctx context.Context, tag string, n int) ([]int64, error)
	// NextRange returns up to n consecutive ids, [start, start+count),
	// with 1 <= count <= n.
	NextRange(ctx context.Context, tag string, n int) (start int64, count int, err error)
	Snapshot() []segment.BufferState
}

// SnowflakeIDs issues and decodes snowflake ids.
type SnowflakeIDs interface {
	Next(ctx context.Context) (int64, error)
	NextN(ctx context.Context, n int) ([]int64, error)
	Decode(id int64) (snowflake.ID, error)
}

// TagAdmin manages the rows of leaf_alloc for the admin API.
type TagAdmin interface {
	CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error)
	UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error)
	Tag(ctx context.Context, name string) (segment.Tag, error)
	Tags(ctx context.Context) ([]segment.Tag, error)
}

// Check is one readiness check of /readyz. Func returns nil when ready.
type Check struct {
	Name string
	Func func(ctx context.Context) error
	// ShowReason puts the error of a failure in /readyz's answer; leave
	// it false for errors that may name hosts or addresses.
	ShowReason bool
}

// Config is what New needs. Zero fields are documented defaults.
type Config struct {
	// Segments serves segment mode; nil turns it off (its routes answer
	// 404 not_found).
	Segments SegmentIDs
	// Snowflake serves snowflake mode; nil turns it off (its routes
	// answer 404 not_found).
	Snowflake SnowflakeIDs
	// UUIDs serves /api/uuid; nil turns it off (its routes answer 404
	// not_found). Decoding a UUID needs no generator and is always on.
	UUIDs UUIDs
	// Tags backs the admin tag routes; nil makes them answer 404 not_found.
	Tags TagAdmin
	// AdminToken is the bearer token of /api/admin; empty leaves the admin
	// API unmounted.
	AdminToken string
	// StatusToken is the bearer token of /status and /status.json; empty
	// leaves them open. The admin token does not open them.
	StatusToken string
	// Instance describes this process on /status. The page also shows
	// Segments' Failed() and Snowflake's Stats() where they have them, as
	// segment.Allocator and snowflake.Generator do.
	Instance Instance
	// Checks are run by /readyz; none means always ready.
	Checks []Check
	// Registry receives the HTTP metrics and is served on /metrics; nil
	// means a private registry.
	Registry *prometheus.Registry
	// Logger receives request logs (debug) and unexpected errors; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock of /status; nil means time.Now.
	Now func() time.Time
}

// Body, batch and range limits.
const (
	// maxBodyBytes bounds a request body; larger is 413.
	maxBodyBytes = 64 << 10
	// MaxCount is the largest batch.
	MaxCount = 10000
	// MaxRangeCount is the largest range. A range is two numbers whatever
	// its size, so it may be far larger than a batch; it stops there as
	// the adaptive step does, since a range never spans two segments.
	MaxRangeCount = 1_000_000
)

// server holds what handlers share.
type server struct {
	cfg     Config
	log     *slog.Logger
	metrics *httpMetrics
	// tokenSum is the SHA-256 of the admin token, compared in constant time.
	tokenSum [32]byte
	// statusSum is the same for the status token.
	statusSum [32]byte
	now       func() time.Time
	started   time.Time // shown as the instance's start on /status
	snowRate  rateMeter // snowflake ids per second on /status
}

// New returns the echo instance serving the whole API. It registers the
// HTTP request metrics on cfg.Registry; it panics only if a different
// collector already holds their names there.
func New(cfg Config) *echo.Echo {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &server{
		cfg:     cfg,
		log:     cfg.Logger,
		metrics: newHTTPMetrics(cfg.Registry),
	}
	if cfg.AdminToken != "" {
		s.tokenSum = tokenSum(cfg.AdminToken)
	}
	if cfg.StatusToken != "" {
		s.statusSum = tokenSum(cfg.StatusToken)
	}
	s.now = cfg.Now
	if s.now == nil {
		s.now = time.Now
	}
	s.started = cfg.Instance.Started
	if s.started.IsZero() {
		s.started = s.now()
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleUnrouted
	s.routes(chained{e: e, s: s})
	return e
}

// routes is what routes registers routes on.
type routes interface {
	GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	HEAD(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	PATCH(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
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
}

func (r chained) wrap(h echo.HandlerFunc, m []echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(m) - 1; i >= 0; i-- {
		h = m[i](h)
	}
	return r.s.observe(r.s.recover(headNoBody(bodyLimit(maxBodyBytes)(h))))
}

func (r chained) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.GET(path, r.wrap(h, m))
}

func (r chained) HEAD(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.HEAD(path, r.wrap(h, m))
}

func (r chained) POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.POST(path, r.wrap(h, m))
}

func (r chained) PATCH(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.e.PATCH(path, r.wrap(h, m))
}

// routes registers every route of the API.
//
// HEAD is answered where a GET has no effect (the operations routes); on
// the id routes it is a 405, for a HEAD that took an id would waste it and
// one that did not could not say what a GET would have returned.
//
// A route whose last part is a parameter is registered a second time
// without it, so that an empty tag or id is the 400 of a bad parameter,
// not a 404.
func (s *server) routes(e routes) {
	for path, h := range map[string]echo.HandlerFunc{
		"/healthz": s.healthz,
		"/readyz":  s.readyz,
		"/metrics": s.metricsHandler(),
	} {
		e.GET(path, h)
		e.HEAD(path, h)
	}
	// The status page is open, as /metrics is, unless it has a token of
	// its own; it is read-only, so the admin token is not asked for.
	var statusAuth []echo.MiddlewareFunc
	if s.cfg.StatusToken != "" {
		statusAuth = append(statusAuth, requireBearer(s.statusSum))
	}
	for path, h := range map[string]echo.HandlerFunc{
		"/status":      s.statusPage,
		"/status.json": s.statusJSONHandler,
	} {
		e.GET(path, h, statusAuth...)
		e.HEAD(path, h, statusAuth...)
	}

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

	e.GET("/api/uuid/get", s.uuidGet)
	e.GET("/api/uuid/batch", s.uuidBatch)
	e.GET("/api/uuid/decode/:uuid", s.uuidDecode)
	e.GET("/api/uuid/decode/", s.uuidDecode)

	e.GET("/api/convert/:form/:id", s.convert)
	e.GET("/api/convert/:form/", s.convert)
	e.GET("/api/snowflake/decode/", s.snowflakeDecode)

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
	e.GET("/api/admin/segments", s.adminSegments, auth)
}
