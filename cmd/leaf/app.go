package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
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
//	store (migrated)  ->  listener (bound; its port names the snowflake
//	holder)  ->  segment allocator  ->  snowflake generator (leases a
//	worker id)  ->  HTTP server (run)
//
// So on a clean stop the server first finishes the requests in flight,
// then the allocator stops loading, then the generator releases its worker
// id recording the last timestamp it used, and the store closes last.
type app struct {
	cfg serveConfig
	log *slog.Logger

	store    *store.Store
	alloc    *segment.Allocator   // nil with --segment=false
	gen      *snowflake.Generator // nil with --snowflake=false
	ln       net.Listener
	srv      *http.Server
	serving  atomic.Bool // run has handed the listener to the server
	stopping atomic.Bool // set when shutdown begins: /readyz fails

	// With --migrate=false: why the schema is not what this version
	// needs, until a re-check finds it is; schemaDone ends the re-checks.
	schemaErr  atomic.Pointer[error]
	schemaDone chan struct{}
	schemaWG   sync.WaitGroup
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
	domain := metrics.Sources{Version: version, StoreUp: func() bool { return a.store.Health().Up }, SegmentTags: a.cfg.metricsTags.tags}
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
		Checks: []httpapi.Check{
			{Name: "lifecycle", Func: a.lifecycleCheck, ShowReason: true},
			{Name: "schema", Func: a.schemaCheck, ShowReason: true},
			{Name: "store", Func: a.storeCheck, ShowReason: true},
		},
	}

	if a.cfg.segment {
		domain.SegmentLoads = metrics.NewLoadTimes()
		a.alloc = a.newAllocator(domain.SegmentLoads)
		api.Segments, domain.Segments = a.alloc, a.alloc
		api.Tags = tagAdmin{TagAdmin: a.store, alloc: a.alloc}
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

	a.srv = &http.Server{
		Handler:           httpapi.New(api),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second, // a body announced and never sent
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	return nil
}

// openStore opens the store and migrates it, or with --migrate=false
// starts watching for the migrations it lacks.
func (a *app) openStore(ctx context.Context) error {
	var err error
	if a.store, err = a.cfg.open(ctx, store.Options{OnHealth: a.logHealth}); err != nil {
		return err
	}
	a.log.Info("store open", a.cfg.describe()...)
	if !a.cfg.migrate {
		a.watchSchema(ctx)
		return nil
	}
	applied, err := a.store.Migrate(ctx)
	if err != nil {
		return err
	}
	logMigrations(a.log, applied)
	return nil
}

// newAllocator starts the segment allocator, timing its loads in times
// and logging them.
func (a *app) newAllocator(times *metrics.LoadTimes) *segment.Allocator {
	loads := newLoadLimiters()
	return segment.New(a.store, segment.Options{
		// A load is one call of the store, or two when it fences.
		LoadTimeout:     2*a.store.Timeout() + time.Second,
		RefreshInterval: a.cfg.refreshTags,
		FailoverJump:    a.cfg.failoverJump,
		OnLoad: func(tag string, took time.Duration, err error) {
			times.Observe(tag, took, err)
			a.logLoad(loads, tag, err)
		},
		OnRegression: a.logRegression,
	})
}

// addr is the address the app listens on, once open.
func (a *app) addr() string { return a.ln.Addr().String() }

// run serves until ctx is done, then shuts the HTTP server down,
// finishing the requests in flight.
func (a *app) run(ctx context.Context) error {
	served := make(chan error, 1)
	a.serving.Store(true)
	go func() { served <- a.srv.Serve(httpapi.JSONRefusals(a.ln)) }()
	a.log.Info("serving", "addr", a.addr(), "version", version,
		"segment", a.cfg.segment, "snowflake", a.cfg.snowflake, "admin_api", a.cfg.adminToken != "",
		"status_token", a.cfg.statusToken != "")

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
	if a.schemaDone != nil {
		close(a.schemaDone)
		a.schemaWG.Wait()
	}
	var errs []error
	if a.ln != nil && !a.serving.Load() { // run closes it otherwise
		_ = a.ln.Close()
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
	if a.store != nil {
		errs = append(errs, a.store.Close())
	}
	return errors.Join(errs...)
}

// handBack returns the unused tails of the segments to their rows, so that
// a restart does not skip them, and logs what it did.
func (a *app) handBack() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	for _, r := range a.alloc.HandBack(ctx) {
		switch {
		case r.Err != nil:
			a.log.Warn("segment: could not hand back the unused ids", "tag", r.Tag, "from", r.From, "ids", r.IDs, "err", r.Err)
		case r.Moved:
			a.log.Info("segment: unused ids not handed back, another instance took a range after them",
				"tag", r.Tag, "from", r.From, "ids", r.IDs)
		default:
			a.log.Info("segment: handed back the unused ids", "tag", r.Tag, "from", r.From, "ids", r.IDs)
		}
	}
}

// newGenerator starts the snowflake generator with a fixed or leased worker
// id and warns when the layout's range from the epoch runs out within a
// year.
func (a *app) newGenerator(ctx context.Context) (*snowflake.Generator, error) {
	s := snowflake.Settings{EpochMs: a.cfg.epochMs, Layout: a.cfg.layout}
	if a.cfg.workerID >= 0 {
		s.WorkerID = a.cfg.workerID
	} else {
		s.Leases, s.Holder = a.store, a.cfg.holder
		if s.Holder == "" {
			s.Holder = defaultHolder(a.addr())
		}
		s.OnLease = a.leaseLogger()
	}
	gen, err := snowflake.New(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("snowflake: %w", err)
	}
	a.log.Info("snowflake ready", "worker_id", gen.WorkerID(), "leased", s.Leases != nil, "holder", s.Holder,
		"layout", gen.Layout().String(), "runs_out", gen.Exhausts().Format(time.RFC3339))
	if ends := gen.Exhausts(); time.Until(ends) < snowflake.EndingSoon {
		a.log.Warn("the snowflake time field's range from the epoch runs out within a year: plan a later --snowflake-epoch or a wider time field before then",
			"runs_out", ends.UTC().Format(time.RFC3339), "layout", gen.Layout().String())
	}
	return gen, nil
}

// defaultHolder identifies this process to the worker-lease table: the
// host name and the listen port, the same across restarts of one instance.
func defaultHolder(addr string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		port = addr
	}
	return host + ":" + port
}

// tagAdmin is the store's tag administration, telling the allocator of a
// created tag so that it is served here at once, before the next read of
// the tag list.
type tagAdmin struct {
	httpapi.TagAdmin
	alloc *segment.Allocator
}

func (t tagAdmin) CreateTag(ctx context.Context, tag segment.Tag) (segment.Tag, error) {
	created, err := t.TagAdmin.CreateTag(ctx, tag)
	if err == nil {
		t.alloc.Added(created.Name)
	}
	return created, err
}
