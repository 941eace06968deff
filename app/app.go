package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/storeset"
	"github.com/leafid/leaf/uuidv7"
)

// shutdownTimeout bounds the graceful shutdown of the HTTP server and the
// release of the snowflake lease.
const shutdownTimeout = 10 * time.Second

// ErrUsage is the error of a configuration that cannot serve as given:
// the command line is to blame (leaf exits with status 2).
var ErrUsage = errors.New("usage")

// New returns the server of cfg, logging to log; nothing is started yet.
func New(cfg Config, log *slog.Logger) *Server {
	return &Server{cfg: cfg, log: log, skips: newSkipped()}
}

// Server is one running `leaf serve`. Open starts its parts in this order,
// each using the ones before it:
//
//	store (migrated), or with --store each store (migrated) and the set
//	over them  ->  listener (bound; its port names the snowflake holder
//	and the sequences' address)  ->  segment allocator  ->  issuer of
//	formatted and opaque tags  ->  sequences  ->  snowflake generator
//	(leases a worker id)  ->  HTTP server (run)
//
// On a clean stop the server first finishes the requests in flight, then
// close stops the issuer, the sequences release their section leases, the
// allocator stops loading and hands back its unused ids, the generator
// releases its worker id recording the last timestamp it used, the set
// writes its last marks, and the stores close last.
//
// Each part has a file: store.go, edge.go (the listener and the server),
// segment.go, biz.go, sequence.go and snowflake.go. Run serves until its
// context ends; Close stops what Open started, also after a failed Open.
type Server struct {
	cfg Config
	log *slog.Logger

	ready    *readiness.Stores    // every store opened, in the configured order, and their watch
	opened   *Opened              // the stores as OpenStores opened them, in the same order
	jumps    []storeJumps         // leaf_store_restart_jumps_total, one per store opened
	set      *storeset.Stores     // with --store; nil for one store
	alloc    *segment.Allocator   // nil with --segment=false
	kinds    *service.Registry    // what kind each tag is; nil with --segment=false
	gen      *snowflake.Generator // nil with --snowflake=false
	seq      *sequence.Sequencer  // nil with --sequences=false or --store
	ln       net.Listener
	srv      *http.Server
	tls      *tlsFiles              // nil: plaintext
	serving  atomic.Bool            // run has handed the listener to the server
	stopping atomic.Bool            // set when shutdown begins: /readyz fails
	skips    *prometheus.CounterVec // leaf_ids_skipped_total (skipped.go)
	rates    headroomRates          // how fast bounded tags' rows move (headroom.go)

	// The issuer of formatted and opaque tags and its loop (newIssuer).
	biz     *bizid.Issuer
	bizStop context.CancelFunc
	bizWG   sync.WaitGroup
}

// Open starts every part, bounded by ctx, in the order the type's comment
// gives. Each part adds what it serves to e, from which the edges are made
// last. On error the parts opened so far stay for close to stop.
func (a *Server) Open(ctx context.Context) error {
	var err error
	if a.tls, err = openTLS(a.cfg, a.log); err != nil {
		return err
	}
	if err := a.openStore(ctx); err != nil {
		return err
	}
	if err := a.listen(); err != nil {
		return err
	}
	e := a.newWiring()
	a.openSegments(e)
	if err := a.openSequences(e); err != nil {
		return err
	}
	if err := a.openIssuer(e); err != nil {
		return err
	}
	a.openUUIDs(e)
	if err := a.openSnowflake(ctx, e); err != nil {
		return err
	}
	return a.openServer(e)
}

// openUUIDs serves UUIDs, which need no store and no coordination: they
// are always on.
func (a *Server) openUUIDs(e *wiring) {
	uuids := uuidv7.New(uuidv7.Options{})
	e.svc.UUIDs, e.domain.UUIDs = uuids, uuids
}

// Run serves until ctx is done, then shuts the HTTP server down,
// finishing the requests in flight.
func (a *Server) Run(ctx context.Context) error {
	served := make(chan error, 1)
	a.serving.Store(true)
	// Read before Serve starts: it sets up the server's TLSConfig.
	tlsOn := a.srv.TLSConfig != nil
	if tlsOn {
		// HTTP/1.1 and HTTP/2 (gRPC's) by ALPN. net/http's own refusals
		// before a handler runs stay plain text here: they are written
		// inside TLS, where JSONRefusals cannot see them.
		go func() { served <- a.srv.ServeTLS(a.ln, "", "") }()
	} else {
		go func() { served <- a.srv.Serve(httpapi.JSONRefusals(a.ln)) }()
	}
	a.log.Info("serving", "addr", a.Addr(), "version", a.cfg.Version, "tls", tlsOn,
		"segment", a.cfg.Segment, "snowflake", a.cfg.Snowflake, "admin_api", a.cfg.AdminToken != "",
		"status_token", a.cfg.StatusToken != "", "id_token", a.cfg.IDToken != "", "opaque_keys", len(a.cfg.OpaqueKeys))

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	a.stopping.Store(true)
	a.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := a.srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops what Open started, in the order the type's comment gives.
// It may be called after a failed open.
func (a *Server) Close() error {
	a.stopping.Store(true)
	if a.ready != nil {
		a.ready.Close()
	}
	if a.ln != nil && !a.serving.Load() { // run closes it otherwise
		_ = a.ln.Close()
	}
	a.closeIssuer()
	a.closeSequences()
	errs := []error{a.closeSegments()}
	a.closeSnowflake()
	errs = append(errs, a.closeStores()...)
	return errors.Join(errs...)
}

// Sequencer, Allocator and Generator are the parts the server serves
// with, nil where a mode is off: for tests and tools that watch them.
func (a *Server) Sequencer() *sequence.Sequencer  { return a.seq }
func (a *Server) Allocator() *segment.Allocator   { return a.alloc }
func (a *Server) Generator() *snowflake.Generator { return a.gen }

// OpenedStores are the stores the server opened, in the configured order.
func (a *Server) OpenedStores() []*store.Store {
	if a.ready == nil {
		return nil
	}
	out := make([]*store.Store, len(a.ready.All()))
	for i, s := range a.ready.All() {
		out[i] = s.Store
	}
	return out
}
