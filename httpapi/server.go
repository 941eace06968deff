// Package httpapi is the HTTP edge of leaf: the routes of the README's "HTTP API", one
// map from errors to HTTP statuses, the middleware (recover, metrics,
// logging, body limit), the HTTP request metrics and the status page. The
// metrics of the allocator and the snowflake generator are package
// metrics'.
//
// The package consumes segment and snowflake through the small interfaces
// below; it never talks to a store.
package httpapi

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/leafapi"
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
	// Snapshot is the state of every tag's buffer, for
	// /api/admin/segments.
	Snapshot() []segment.BufferState
	// EachTag calls f with every tag's figures and returns the totals
	// over all tags, and State describes one tag's buffer: the status
	// page reads every tag with the first, and the tags it shows with the
	// second.
	EachTag(f func(segment.TagStats)) segment.Totals
	State(tag string) (segment.BufferState, bool)
	// Failed lists the tags whose first load failed, for the status
	// page.
	Failed() []segment.FailedTag
}

// SnowflakeIDs issues and decodes snowflake ids (snowflake.Generator
// implements it).
type SnowflakeIDs interface {
	Next(ctx context.Context) (int64, error)
	NextN(ctx context.Context, n int) ([]int64, error)
	Decode(id int64) (snowflake.ID, error)
	// Stats is the generator's state, for the status page.
	Stats() snowflake.Stats
}

// TagAdmin manages the rows of leaf_alloc for the admin API.
type TagAdmin interface {
	CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error)
	UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error)
	Tag(ctx context.Context, name string) (segment.Tag, error)
	Tags(ctx context.Context) ([]segment.Tag, error)
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
	// Biz serves formatted and opaque tags on the id routes; nil serves
	// every tag as a plain one.
	Biz BizIDs
	// BizTags keeps their settings for the admin API; nil (or a nil Biz)
	// refuses settings with a 400.
	BizTags BizAdmin
	// OnCreate, when set, is called with the name of a tag the admin API
	// created with settings (the allocator's Added).
	OnCreate func(tag string)
	// Sequences serves /api/sequence; nil turns it off (its routes answer
	// 404 not_found).
	Sequences Sequences
	// Spaces backs the admin sequence routes; nil makes them answer 404
	// not_found.
	Spaces SpaceAdmin
	// Ordered serves the ordered segment tags; nil serves every tag from
	// Segments.
	Ordered OrderedTags
	// ForwardTimeout bounds a sequence request forwarded to the owner of
	// the key's section; DefaultForwardTimeout when 0.
	ForwardTimeout time.Duration
	// AdminToken is the bearer token of /api/admin; empty leaves the admin
	// API unmounted.
	AdminToken string
	// StatusToken is the bearer token of /status and /status.json; empty
	// leaves them open. The admin token does not open them.
	StatusToken string
	// Instance describes this process on /status, beside the state of
	// Segments, Snowflake and UUIDs.
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

// server holds what handlers share.
type server struct {
	cfg     Config
	log     *slog.Logger
	metrics *httpMetrics
	// tags is the administration of tags behind the admin routes.
	tags *leafapi.TagAdmin
	// fwd sends requests for sections and ordered tags owned elsewhere
	// to their owners; nil without sequences and ordered tags.
	fwd *leafapi.Forwarder
	// tokenSum is the SHA-256 of the admin token, compared in constant time.
	tokenSum [32]byte
	// statusSum is the same for the status token.
	statusSum [32]byte
	now       func() time.Time
	started   time.Time    // shown as the instance's start on /status
	snowRate  rateMeter    // snowflake ids per second on /status
	tagsSeen  atomic.Int64 // tags at the last read of /status, to size the next
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
	s := &server{
		cfg:     cfg,
		log:     cfg.Logger,
		metrics: newHTTPMetrics(cfg.Registry),
	}
	s.tags = &leafapi.TagAdmin{Rows: cfg.Tags, Settings: cfg.BizTags, Issuer: cfg.Biz, Ordered: cfg.Ordered, OnCreate: cfg.OnCreate}
	if cfg.Sequences != nil || cfg.Ordered != nil {
		s.fwd = leafapi.NewForwarder(cfg.Registry, cfg.ForwardTimeout, cfg.Logger)
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
	gets := make(map[string]echo.HandlerFunc)
	s.routes(chained{e: e, s: s, gets: gets})
	return &Handler{Echo: e, segmentGet: gets[segmentGetRoute], snowflakeGet: gets[snowflakeGetRoute]}
}
