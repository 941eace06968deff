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
	// Tags backs the admin tag routes; nil makes them answer 404 not_found.
	Tags TagAdmin
	// AdminToken is the bearer token of /api/admin; empty leaves the admin
	// API unmounted.
	AdminToken string
	// Checks are run by /readyz; none means always ready.
	Checks []Check
	// Registry receives the HTTP metrics and is served on /metrics; nil
	// means a private registry.
	Registry *prometheus.Registry
	// Logger receives request logs (debug) and unexpected errors; nil
	// discards.
	Logger *slog.Logger
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

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.observe, s.recover, headNoBody, bodyLimit(maxBodyBytes))
	s.routes(e)
	return e
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
func (s *server) routes(e *echo.Echo) {
	for path, h := range map[string]echo.HandlerFunc{
		"/healthz": s.healthz,
		"/readyz":  s.readyz,
		"/metrics": s.metricsHandler(),
	} {
		e.GET(path, h)
		e.HEAD(path, h)
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
