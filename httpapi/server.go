// Package httpapi is the HTTP edge of leaf: the routes of docs/http-api.md, one
// map from errors to HTTP statuses, the middleware (recover, metrics,
// logging, body limit), the HTTP request metrics and the status page. The
// metrics of the allocator and the snowflake generator are package
// metrics'.
//
// What a request means is package service's: the handlers decode a
// request, call the service, and encode its answer or its error; the
// package never talks to a store.
package httpapi

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/service"
)

// Config is what New needs. Zero fields are documented defaults.
type Config struct {
	// Service serves every request for ids and every admin call; nil
	// serves none (every mode off).
	Service *service.Service
	// AdminToken is the bearer token of /api/admin; empty leaves the admin
	// API unmounted.
	AdminToken string
	// StatusToken is the bearer token of /status and /status.json; empty
	// leaves them open. The admin token does not open them.
	StatusToken string
	// IDToken is the bearer token of the id routes (every route under
	// /api/ but the admin API's); empty leaves them open.
	IDToken string
	// Instance describes this process on /status, beside the state of
	// the service's parts.
	Instance Instance
	// Checks are run by /readyz; none means always ready.
	Checks []readiness.Check
	// Registry receives the HTTP metrics and is served on /metrics; nil
	// means a private registry.
	Registry *prometheus.Registry
	// Logger receives request logs (debug) and unexpected errors; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock of /status; nil means time.Now.
	Now func() time.Time
	// TrustForwarded says whether a call marked with HeaderForwarded
	// comes from another instance (its client certificate, with mutual
	// TLS); a marked call it does not trust is served as any other. Nil
	// takes every marked call for a forwarded one.
	TrustForwarded func(*http.Request) bool
}

// server holds what handlers share.
type server struct {
	cfg     Config
	log     *slog.Logger
	metrics *httpMetrics
	// svc serves the requests; parts are its parts, for the status page.
	svc   *service.Service
	parts service.Parts
	// tokenSum is the SHA-256 of the admin token, compared in constant time.
	tokenSum [32]byte
	// statusSum and idSum are the same for the status token and the id
	// routes' token.
	statusSum, idSum [32]byte
	// tokenFingerprint names the admin token in the trail of changes.
	tokenFingerprint string
	now              func() time.Time
	started          time.Time    // shown as the instance's start on /status
	snowRate         rateMeter    // snowflake ids per second on /status
	tagsSeen         atomic.Int64 // tags at the last read of /status, to size the next
}

// New returns the handler serving the whole API. It registers the HTTP
// request metrics on cfg.Registry; it panics only if a different collector
// already holds their names there.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.Service == nil {
		cfg.Service = service.New(service.Config{Metrics: cfg.Registry, Logger: cfg.Logger})
	}
	s := &server{
		cfg:     cfg,
		log:     cfg.Logger,
		metrics: newHTTPMetrics(cfg.Registry),
		svc:     cfg.Service,
		parts:   cfg.Service.Parts(),
	}
	if cfg.AdminToken != "" {
		s.tokenSum, s.tokenFingerprint = tokenSum(cfg.AdminToken), service.TokenFingerprint(cfg.AdminToken)
	}
	if cfg.StatusToken != "" {
		s.statusSum = tokenSum(cfg.StatusToken)
	}
	if cfg.IDToken != "" {
		s.idSum = tokenSum(cfg.IDToken)
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
	gets := make(map[string]echo.HandlerFunc)
	s.routes(chained{e: e, s: s, gets: gets})
	return &Handler{Echo: e, segmentGet: gets[segmentGetRoute], snowflakeGet: gets[snowflakeGetRoute]}
}
