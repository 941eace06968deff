// Package grpcapi serves leaf's API over gRPC, gRPC-Web and Connect
// (connectrpc.com/connect), on the same listener as the HTTP API: the
// services of proto/leaf/v1/leaf.proto, gRPC health checking and server
// reflection. It issues ids from the same allocator and generator as
// httpapi, answers with the same limits and the same error codes (each
// with its gRPC code, from package leafapi), asks the same bearer token for
// the admin calls, and counts its calls in metrics of its own.
//
// The package consumes segment, snowflake, uuidv7 and sequence through the
// small interfaces below; it never talks to a store, and it does not import
// httpapi: New hands every request outside its paths to the handler it is
// given, which is the HTTP API. A sequence call or an ordered tag's call
// that reaches an instance not owning the key's section or the tag is
// forwarded to the owner's HTTP API once, through the forwarder the HTTP
// routes use (leafapi.Forwarder).
package grpcapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/leafapi"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// SegmentIDs issues segment-mode ids (segment.Allocator implements it).
type SegmentIDs interface {
	Next(ctx context.Context, tag string) (int64, error)
	NextN(ctx context.Context, tag string, n int) ([]int64, error)
	NextRange(ctx context.Context, tag string, n int) (start int64, count int, err error)
	Snapshot() []segment.BufferState
}

// SnowflakeIDs issues and decodes snowflake ids (snowflake.Generator
// implements it).
type SnowflakeIDs interface {
	Next(ctx context.Context) (int64, error)
	NextN(ctx context.Context, n int) ([]int64, error)
	Decode(id int64) (snowflake.ID, error)
}

// UUIDs makes version 7 UUIDs (uuidv7.Generator implements it).
type UUIDs interface {
	New() uuidv7.UUID
}

// BizIDs tells formatted and opaque tags from plain ones and issues the
// ids of opaque ones (bizid.Issuer implements it). A formatted tag's ids
// are texts, which leaf.v1's int64 ids cannot carry: its calls answer
// not_numeric (FailedPrecondition) and the HTTP API serves it.
type BizIDs interface {
	Lookup(ctx context.Context, tag string) (*bizid.Tag, error)
	Next(ctx context.Context, t *bizid.Tag) (bizid.ID, error)
	NextN(ctx context.Context, t *bizid.Tag, n int) ([]bizid.ID, error)
	// CurrentKeyID and Put serve the admin calls that create or change
	// the settings of a formatted or opaque tag.
	CurrentKeyID() (string, bool)
	Put(s bizid.Settings) *bizid.Tag
	// Reveal turns an opaque id back into its number, for RevealId.
	Reveal(ctx context.Context, tag string, id int64) (int64, error)
}

// TagAdmin manages the rows of leaf_alloc for the admin calls. One that
// also implements leafapi.OrderedTagRows creates ordered tags.
type TagAdmin = leafapi.TagRows

// BizAdmin keeps the settings of formatted and opaque tags for the admin
// calls (store.Store implements it).
type BizAdmin = leafapi.SettingsRows

// Config is what New needs. Nil modes answer their calls with the code
// not_found (gRPC Unimplemented), as their HTTP routes answer 404.
type Config struct {
	Segments  SegmentIDs
	Snowflake SnowflakeIDs
	UUIDs     UUIDs
	Tags      TagAdmin
	// Biz serves formatted and opaque tags; nil serves every tag as a
	// plain one.
	Biz BizIDs
	// BizTags keeps their settings for the admin calls; nil (or a nil
	// Biz) refuses settings with invalid_request, as the HTTP API does.
	BizTags BizAdmin
	// OnCreate, when set, is called with the name of a tag the admin calls
	// created with settings (the allocator's Added).
	OnCreate func(tag string)
	// Sequences serves leaf.v1.SequenceService; nil answers its calls with
	// not_found (Unimplemented), as /api/sequence answers 404.
	Sequences Sequences
	// Spaces backs the admin calls of sequence spaces; nil answers them
	// with not_found.
	Spaces SpaceAdmin
	// Ordered serves the ordered segment tags; nil serves every tag from
	// Segments.
	Ordered OrderedTags
	// ForwardTimeout bounds a call forwarded to the owner of a key's
	// section or of an ordered tag; DefaultForwardTimeout when 0.
	ForwardTimeout time.Duration
	// AdminToken is the bearer token of leaf.v1.AdminService; empty leaves
	// the service unmounted (its calls answer Unimplemented).
	AdminToken string
	// Ready tells the health service whether this instance can issue ids
	// (nil error), as /readyz does; nil means always ready.
	Ready func(ctx context.Context) error
	// HealthInterval is how often Ready is read while a health Watch
	// stream is open; DefaultHealthInterval when 0.
	HealthInterval time.Duration
	// Registry receives the call metrics; nil means a private registry.
	Registry prometheus.Registerer
	// Logger receives unexpected errors; nil discards.
	Logger *slog.Logger
}

// Service names, the prefixes of the paths this package answers.
const (
	idService       = leafv1connect.IdServiceName
	sequenceService = leafv1connect.SequenceServiceName
	adminService    = leafv1connect.AdminServiceName
	healthService   = grpchealth.HealthV1ServiceName
)

// prefixes are the first parts of every path this package serves: the
// package of leaf's services, health checking and reflection. Any other
// path goes to the HTTP API.
var prefixes = []string{"/leaf.v1.", "/grpc.health.v1.", "/grpc.reflection."}

// owns reports whether a request for path is answered by this package
// rather than by the HTTP API.
func owns(path string) bool {
	// Every prefix starts "/l" or "/g": the paths of the HTTP API, on the
	// hot path, are told apart by one byte.
	if len(path) < 2 || path[1] != 'l' && path[1] != 'g' {
		return false
	}
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// Handler serves leaf's services, health checking and reflection, and
// hands every other request to the HTTP API.
type Handler struct {
	mux    *http.ServeMux
	next   http.Handler
	health *health
}

// New returns a handler that serves leaf's services, health checking and
// reflection, and hands every other request to next, the HTTP API. It
// registers the call metrics on cfg.Registry.
//
// gRPC needs HTTP/2: serve the handler from an http.Server whose Protocols
// allow unencrypted HTTP/2 (see ServerProtocols). Connect and gRPC-Web
// work over HTTP/1.1 too. Register its Close with the server's
// RegisterOnShutdown: a health Watch stream ends only when the client
// leaves or Close ends it, and Shutdown waits for the streams in flight.
func New(cfg Config, next http.Handler) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	m := newCallMetrics(cfg.Registry)
	opts := []connect.HandlerOption{
		connect.WithInterceptors(m),
		connect.WithRecover(recoverPanic(cfg.Logger)),
		connect.WithReadMaxBytes(maxMessageBytes),
	}

	mux := http.NewServeMux()
	var fwd *leafapi.Forwarder // not asked without sequences and ordered tags
	if cfg.Sequences != nil || cfg.Ordered != nil {
		// On the HTTP API's registry, the two edges share one count.
		fwd = leafapi.NewForwarder(cfg.Registry, cfg.ForwardTimeout, cfg.Logger)
	}
	ids := &idServer{cfg: cfg, log: cfg.Logger, fwd: fwd}
	mux.Handle(leafv1connect.NewIdServiceHandler(ids, opts...))
	mux.Handle(leafv1connect.NewSequenceServiceHandler(&sequenceServer{cfg: cfg, log: cfg.Logger, fwd: fwd}, opts...))
	services := []string{idService, sequenceService}
	if cfg.AdminToken != "" {
		admin := &adminServer{cfg: cfg, log: cfg.Logger, tags: &leafapi.TagAdmin{
			Rows: cfg.Tags, Settings: cfg.BizTags, Issuer: cfg.Biz, Ordered: cfg.Ordered, OnCreate: cfg.OnCreate,
		}}
		aopts := append(opts[:len(opts):len(opts)], connect.WithInterceptors(requireToken(cfg.AdminToken)))
		mux.Handle(leafv1connect.NewAdminServiceHandler(admin, aopts...))
		services = append(services, adminService)
	}
	h := &Handler{mux: mux, next: next, health: newHealth(cfg.Ready, services, cfg.HealthInterval)}
	hopts := append(opts[:len(opts):len(opts)], connect.WithInterceptors(watchStreams{}))
	mux.Handle(grpchealth.NewHandler(h.health, hopts...))
	reflector := grpcreflect.NewStaticReflector(slices.Concat(services, []string{healthService})...)
	mux.Handle(grpcreflect.NewHandlerV1(reflector, opts...))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector, opts...))
	return h
}

// ServeHTTP answers the paths of gRPC's services here and every other
// path with the HTTP API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if owns(r.URL.Path) {
		h.mux.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(w, r)
}

// Close ends every health Watch stream, each after a last NOT_SERVING,
// and stops reading readiness for them; Watch streams opened after it end
// the same way. Other calls are served as before. It may be called more
// than once.
func (h *Handler) Close() { h.health.close() }

// ServerProtocols are the protocols of an http.Server that serves both
// APIs on one port: HTTP/1.1 and unencrypted HTTP/2 (h2c, with prior
// knowledge, as gRPC clients speak it), plus HTTP/2 over TLS where the
// server has a certificate.
func ServerProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return p
}
