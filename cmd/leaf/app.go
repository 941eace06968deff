package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/grpcapi"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/storeset"
	"github.com/leafid/leaf/uuidv7"
)

// shutdownTimeout bounds the graceful shutdown of the HTTP server and the
// release of the snowflake lease.
const shutdownTimeout = 10 * time.Second

// serve runs `leaf serve` until ctx is done.
func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	a, err := newApp(args, getenv, stderr)
	if err != nil {
		return err
	}
	if err := a.open(ctx); err != nil {
		return errors.Join(err, a.close())
	}
	err = a.run(ctx)
	return errors.Join(err, a.close())
}

// newApp reads the configuration of `leaf serve` from args and the
// environment; nothing is started yet.
func newApp(args []string, getenv func(string) string, stderr io.Writer) (*app, error) {
	var c serveConfig
	fs := c.flags()
	if err := parse(fs, args, getenv, stderr); err != nil {
		return nil, err
	}
	if err := c.validate(fs); err != nil {
		return nil, err
	}
	return &app{cfg: c, log: newLogger(c.logFormat, c.logLevel, stderr)}, nil
}

// app is one running `leaf serve`. open starts its parts in this order,
// each using the ones before it; close stops them in the reverse order:
//
//	store (migrated), or with --store each store (migrated) and the set
//	over them  ->  listener (bound; its port names the snowflake
//	holder)  ->  segment allocator  ->  snowflake generator (leases a
//	worker id)  ->  HTTP server (run)
//
// So on a clean stop the server first finishes the requests in flight,
// then the allocator stops loading, then the generator releases its worker
// id recording the last timestamp it used, then the set writes its last
// marks, and the stores close last.
type app struct {
	cfg serveConfig
	log *slog.Logger

	stores   []openStore          // every store opened, in the configured order
	set      *storeset.Stores     // with --store; nil for one store
	alloc    *segment.Allocator   // nil with --segment=false
	gen      *snowflake.Generator // nil with --snowflake=false
	seq      *sequence.Sequencer  // nil with --sequences=false or --store
	ln       net.Listener
	srv      *http.Server
	serving  atomic.Bool // run has handed the listener to the server
	stopping atomic.Bool // set when shutdown begins: /readyz fails

	// With --migrate=false: why the schema is not what this version
	// needs, until a re-check finds it is. watchStop ends the re-checks,
	// and the migration of stores that did not answer at the start.
	schemaErr atomic.Pointer[error]
	watchStop context.CancelFunc
	watchWG   sync.WaitGroup

	// The issuer of formatted and opaque tags and its loop (newIssuer).
	biz     *bizid.Issuer
	bizStop context.CancelFunc
	bizWG   sync.WaitGroup
}

// open starts every part, bounded by ctx. On error the parts opened so far
// stay for close to stop.
func (a *app) open(ctx context.Context) error {
	if err := a.openStore(ctx); err != nil {
		return err
	}

	// Bound before anything is leased, so a port in use fails the start
	// at once, and the holder name has the port really listened on.
	var err error
	if a.ln, err = net.Listen("tcp", a.cfg.addr); err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	domain := metrics.Sources{Version: version, StoreUp: a.storesUp, SegmentTags: a.cfg.metricsTags.tags}
	api := httpapi.Config{
		AdminToken:  a.cfg.adminToken,
		StatusToken: a.cfg.statusToken,
		Instance: httpapi.Instance{
			Version:     version,
			Started:     time.Now(),
			Store:       a.cfg.kind(),
			StoreHealth: a.storeHealth,
		},
		Registry: reg,
		Logger:   a.log,
		Checks: append([]httpapi.Check{
			{Name: "lifecycle", Func: a.lifecycleCheck, ShowReason: true},
			{Name: "schema", Func: a.schemaCheck, ShowReason: true},
		}, a.storeChecks()...),
	}
	if a.set != nil {
		api.Instance.Store = a.cfg.setKind()
		api.Instance.SetVersion = func() int64 { return a.set.Set().Version }
	}

	if a.cfg.segment {
		domain.SegmentLoads = metrics.NewLoadTimes()
		a.alloc = a.newAllocator(domain.SegmentLoads)
		api.Segments, domain.Segments = a.alloc, a.alloc
		api.Tags = tagAdmin{TagAdmin: a.tagStore(), alloc: a.alloc}
		if a.set == nil {
			st := a.stores[0].st
			is, err := a.newIssuer(st)
			if err != nil {
				return err
			}
			api.Biz, api.BizTags, api.OnCreate = is, st, a.alloc.Added
		}
	}

	api.ForwardTimeout = a.cfg.forwardTimeout
	if a.cfg.sequences {
		if a.set != nil {
			a.log.Warn("sequences are not served with several stores (--store): a section's max_seq and lease live in one store; /api/sequence answers 404 not_found")
		} else {
			if a.seq, err = a.newSequencer(); err != nil {
				return err
			}
			api.Sequences, domain.Sequences = a.seq, a.seq
			api.Spaces = spaceAdmin{SpaceAdmin: a.stores[0].st, seq: a.seq}
			if a.cfg.segment {
				api.Ordered = a.seq
				api.Tags = tagAdmin{TagAdmin: a.tagStore(), alloc: a.alloc, seq: a.seq, st: a.stores[0].st}
			}
		}
	}

	// UUIDs need no store and no coordination: always served.
	uuids := uuidv7.New(uuidv7.Options{})
	api.UUIDs, domain.UUIDs = uuids, uuids

	if a.cfg.snowflake {
		if a.gen, err = a.newGenerator(ctx); err != nil {
			return err
		}
		api.Snowflake, domain.Snowflake = a.gen, a.gen
		api.Checks = append(api.Checks, httpapi.Check{Name: "snowflake", Func: a.snowflakeCheck, ShowReason: true})
	}
	if err := metrics.Register(reg, domain); err != nil {
		return err
	}

	rpc := grpcapi.Config{
		Segments:   api.Segments,
		Snowflake:  api.Snowflake,
		UUIDs:      uuids,
		Tags:       api.Tags,
		Biz:        api.Biz,
		AdminToken: a.cfg.adminToken,
		Sequences:  api.Sequences,
		Spaces:     api.Spaces,
		Ordered:    api.Ordered,
		// Forwarded calls go to the owners' HTTP API, with the same bound.
		ForwardTimeout: a.cfg.forwardTimeout,
		Ready:          func(ctx context.Context) error { return httpapi.Ready(ctx, api.Checks) },
		Registry:       reg,
		Logger:         a.log,
	}
	a.srv = &http.Server{
		// gRPC, gRPC-Web and Connect on their paths, the HTTP API on
		// every other, over HTTP/1.1 and unencrypted HTTP/2.
		Handler:           grpcapi.New(rpc, httpapi.New(api)),
		Protocols:         grpcapi.ServerProtocols(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second, // a body announced and never sent
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	if a.cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(a.cfg.tlsCert, a.cfg.tlsKey)
		if err != nil {
			return fmt.Errorf("--tls-cert and --tls-key: %w", err)
		}
		a.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return nil
}

// addr is the address the app listens on, once open.
func (a *app) addr() string { return a.ln.Addr().String() }

// run serves until ctx is done, then shuts the HTTP server down,
// finishing the requests in flight.
func (a *app) run(ctx context.Context) error {
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
	a.log.Info("serving", "addr", a.addr(), "version", version, "tls", tlsOn,
		"segment", a.cfg.segment, "snowflake", a.cfg.snowflake, "admin_api", a.cfg.adminToken != "",
		"status_token", a.cfg.statusToken != "", "opaque_keys", len(a.cfg.opaqueKeys.keys))

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

// close stops what open started, in the reverse order. It may be called
// after a failed open.
func (a *app) close() error {
	a.stopping.Store(true)
	if a.watchStop != nil {
		a.watchStop()
		a.watchWG.Wait()
	}
	var errs []error
	if a.ln != nil && !a.serving.Load() { // run closes it otherwise
		_ = a.ln.Close()
	}
	if a.bizStop != nil {
		a.bizStop()
		a.bizWG.Wait()
		a.biz.Close()
	}
	if a.seq != nil {
		// Stops serving, then clears the leases held here, so that other
		// instances take the sections at once.
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		if err := a.seq.Close(ctx); err != nil {
			a.log.Warn("sequences: could not release every section lease; the others take them once they run out", "err", err)
		}
		cancel()
	}
	if a.alloc != nil {
		errs = append(errs, a.alloc.Close())
		a.handBack()
	}
	if a.gen != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		if err := a.gen.Close(ctx); err != nil {
			a.log.Warn("releasing the snowflake worker lease", "err", err)
		}
		cancel()
	}
	if a.set != nil {
		errs = append(errs, a.set.Close())
	}
	for _, s := range a.stores {
		errs = append(errs, s.st.Close())
	}
	return errors.Join(errs...)
}
