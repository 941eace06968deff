// Package grpcapi serves leaf's API over gRPC, gRPC-Web and Connect
// (connectrpc.com/connect), on the same listener as the HTTP API: the
// services of proto/leaf/v1/leaf.proto, gRPC health checking and server
// reflection. It issues ids from the same allocator and generator as
// httpapi, answers with the same limits and the same error codes (each
// with its gRPC code, from package service), asks the same bearer token for
// the admin calls, and counts its calls in metrics of its own.
//
// What a call means is package service's: the handlers decode a call,
// call the service, and encode its answer or its error; the package never
// talks to a store, and it does not import httpapi: New hands every
// request outside its paths to the handler it is given, which is the HTTP
// API. A sequence call or an ordered tag's call that reaches an instance
// not owning the key's section or the tag is forwarded by the service to
// the owner's HTTP API once, and the owner's answer read here.
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

	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
	"github.com/leafid/leaf/service"
)

// Config is what New needs. Modes the service has off answer their calls
// with the code not_found (gRPC Unimplemented), as their HTTP routes
// answer 404.
type Config struct {
	// Service serves every call for ids and every admin call; nil serves
	// none (every mode off).
	Service *service.Service
	// AdminToken is the bearer token of leaf.v1.AdminService; empty leaves
	// the service unmounted (its calls answer Unimplemented).
	AdminToken string
	// Ready tells the health service whether this instance can issue ids
	// (nil error), as /readyz does; nil means always ready.
	Ready func(ctx context.Context) error
	// HealthInterval is how often Ready is read while a health Watch
	// stream is open; DefaultHealthInterval when 0.
	HealthInterval time.Duration
	// IDToken is the bearer token of the IdService's and the
	// SequenceService's calls; empty leaves them open.
	IDToken string
	// MaxWatches is the most health Watch streams held at once;
	// DefaultMaxWatches when 0.
	MaxWatches int
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

	if cfg.Service == nil {
		cfg.Service = service.New(service.Config{Metrics: cfg.Registry, Logger: cfg.Logger})
	}
	mux := http.NewServeMux()
	idOpts := opts
	if cfg.IDToken != "" {
		idOpts = append(opts[:len(opts):len(opts)], connect.WithInterceptors(requireBearer(cfg.Service, cfg.IDToken, "grpc_ids", false)))
	}
	mux.Handle(leafv1connect.NewIdServiceHandler(&idServer{svc: cfg.Service, log: cfg.Logger}, idOpts...))
	mux.Handle(leafv1connect.NewSequenceServiceHandler(&sequenceServer{svc: cfg.Service, log: cfg.Logger}, idOpts...))
	services := []string{idService, sequenceService}
	if cfg.AdminToken != "" {
		admin := &adminServer{svc: cfg.Service, log: cfg.Logger}
		aopts := append(opts[:len(opts):len(opts)], connect.WithInterceptors(requireToken(cfg.Service, cfg.AdminToken)))
		mux.Handle(leafv1connect.NewAdminServiceHandler(admin, aopts...))
		services = append(services, adminService)
	}
	h := &Handler{mux: mux, next: next, health: newHealth(cfg.Ready, services, cfg.HealthInterval, cfg.MaxWatches)}
	hopts := append(opts[:len(opts):len(opts)], connect.WithInterceptors(watchStreams{}))
	mux.Handle(grpchealth.NewHandler(h.health, hopts...))
	reflector := grpcreflect.NewStaticReflector(slices.Concat(services, []string{healthService})...)
	ropts := append(opts[:len(opts):len(opts)], connect.WithInterceptors(newBoundedStreams(MaxReflectionStreams, "reflection")))
	mux.Handle(grpcreflect.NewHandlerV1(reflector, ropts...))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector, ropts...))
	return h
}

// ServeHTTP answers the paths of gRPC's services here and every other
// path with the HTTP API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if owns(r.URL.Path) {
		if streaming[r.URL.Path] {
			// A stream lasts as long as its client wants: the server's
			// WriteTimeout bounds one answer, not a stream. The pings of
			// ServerHTTP2 find a client gone.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		}
		h.mux.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(w, r)
}

// streaming are the procedures whose calls are streams: health's Watch
// and the reflection services'.
var streaming = map[string]bool{
	watchProcedure: true,
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      true,
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": true,
}

// Close ends every health Watch stream, each after a last NOT_SERVING,
// and stops reading readiness for them; Watch streams opened after it end
// the same way. Other calls are served as before. It may be called more
// than once.
func (h *Handler) Close() { h.health.close() }

// The HTTP/2 settings of ServerHTTP2.
const (
	// MaxStreamsPerConn is the most streams (calls) one HTTP/2
	// connection has open at once.
	MaxStreamsPerConn = 100
	// WriteByteTimeout closes an HTTP/2 connection to which nothing
	// could be written for that long: a client that stopped reading no
	// longer holds the answers queued for it.
	WriteByteTimeout = 30 * time.Second
	// PingAfter is how long an HTTP/2 connection may stay silent before
	// the server pings it, and PingTimeout how long the answer may take
	// before the connection is closed: a client gone without a word does
	// not hold its streams (a health Watch) for ever.
	PingAfter   = time.Minute
	PingTimeout = 15 * time.Second
)

// ServerHTTP2 is the HTTP/2 configuration of the server of both APIs.
func ServerHTTP2() *http.HTTP2Config {
	return &http.HTTP2Config{
		MaxConcurrentStreams: MaxStreamsPerConn,
		WriteByteTimeout:     WriteByteTimeout,
		SendPingTimeout:      PingAfter,
		PingTimeout:          PingTimeout,
	}
}

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
