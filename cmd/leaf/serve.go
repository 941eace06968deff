package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
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

type serveConfig struct {
	storeFlags
	addr         string
	migrate      bool
	segment      bool
	snowflake    bool
	workerID     int64
	epochMs      int64
	layoutBits   string           // --snowflake-layout as given
	timeUnit     string           // --snowflake-time-unit as given
	layout       snowflake.Layout // the two above, set by validate
	adminToken   string
	statusToken  string
	logFormat    string
	logLevel     string
	holder       string
	refreshTags  time.Duration
	failoverJump int64
	metricsTags  tagsFlag
}

func (c *serveConfig) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("leaf serve", flag.ContinueOnError)
	c.storeFlags.register(fs)
	fs.StringVar(&c.addr, "addr", ":8080", "listen `address`")
	fs.BoolVar(&c.migrate, "migrate", true, "apply pending migrations before serving")
	fs.BoolVar(&c.segment, "segment", true, "serve segment mode")
	fs.BoolVar(&c.snowflake, "snowflake", true, "serve snowflake mode")
	fs.Int64Var(&c.workerID, "snowflake-worker-id", -1, "fixed snowflake worker `id`, 0..2^W-1 for the W worker bits of --snowflake-layout (0..1023 by default); -1 leases one from the database")
	fs.Int64Var(&c.epochMs, "snowflake-epoch", snowflake.DefaultEpochMs, "snowflake epoch in Unix `milliseconds`")
	fs.StringVar(&c.layoutBits, "snowflake-layout", defaultLayoutBits, "widths of the snowflake time, worker id and sequence fields as `T,W,S`; they sum to 63, or to 53 for ids a JavaScript number holds exactly")
	fs.StringVar(&c.timeUnit, "snowflake-time-unit", "ms", "`unit` of the snowflake time field: ms or s")
	fs.StringVar(&c.adminToken, "admin-token", "", "bearer `token` of /api/admin; empty disables the admin API")
	fs.StringVar(&c.statusToken, "status-token", "", "bearer `token` of /status and /status.json (read-only); empty leaves them open")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&c.holder, "snowflake-holder", "", "worker-lease holder `identity`; empty means hostname:port, stable across restarts")
	fs.DurationVar(&c.refreshTags, "tag-refresh", segment.DefaultRefreshInterval, "how often the tag list is re-read to drop tags gone from the database and find rows gone back in time")
	fs.Int64Var(&c.failoverJump, "failover-jump", segment.DefaultFailoverJump, "how far past the highest max_id it received an instance moves a row found gone back in time (`ids`)")
	fs.Var(&c.metricsTags, "metrics-tags", fmt.Sprintf("comma-separated biz `tags` that always have series of their own at /metrics once used, up to %d; "+
		"other tags have them only while they need attention or are among the %d busiest", metrics.MaxNamedTags, metrics.TopTags))
	return fs
}

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
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return nil, err
	}
	return &app{cfg: c, log: log}, nil
}

func (c *serveConfig) validate(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: serve takes no arguments, got %q", errUsage, fs.Args())
	}
	if err := c.validateSnowflake(time.Now()); err != nil {
		return err
	}
	switch {
	case !c.segment && !c.snowflake:
		return fmt.Errorf("%w: --segment and --snowflake are both off: nothing to serve", errUsage)
	case c.failoverJump < 1:
		return fmt.Errorf("%w: --failover-jump %d: want at least 1", errUsage, c.failoverJump)
	}
	return c.storeFlags.validate()
}

// validateSnowflake checks the snowflake layout, the worker id it allows
// and, with snowflake mode on, that the layout's range from the epoch has
// not run out at now: so that none of them fails a start halfway through,
// after the store was opened and migrated.
func (c *serveConfig) validateSnowflake(now time.Time) error {
	var err error
	if c.layout, err = parseLayout(c.layoutBits, c.timeUnit); err != nil {
		return err
	}
	// Named as parsed, not as given: the given text may hold spaces or
	// control characters from a variable.
	l := c.layout
	given := fmt.Sprintf("--snowflake-layout %d,%d,%d --snowflake-time-unit %s", l.TimeBits, l.WorkerBits, l.SequenceBits, c.timeUnit)
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%w: %s: %w", errUsage, given, err)
	}
	if c.workerID != -1 && !l.ValidWorkerID(c.workerID) {
		return fmt.Errorf("%w: --snowflake-worker-id %d: want -1 or 0..%d (%d worker bits in %s)",
			errUsage, c.workerID, l.MaxWorkerID(), l.WorkerBits, given)
	}
	if end := l.End(c.epochMs); c.snowflake && l.Exhausted(c.epochMs, now) {
		return fmt.Errorf("%w: --snowflake-epoch %d with %s: the %d-bit time field ran out at %s; "+
			"a later epoch or a wider time field starts a new range, and changes the ids (README, \"Snowflake layouts\")",
			errUsage, c.epochMs, given, l.TimeBits, end.Format(time.RFC3339Nano))
	}
	return nil
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

// Readiness: only this instance's own problems fail it; an outage of the
// store, which every instance shares, degrades it (httpapi.ErrDegraded).

func (a *app) lifecycleCheck(context.Context) error {
	if a.stopping.Load() {
		return errors.New("shutting down")
	}
	return nil
}

// watchSchema checks, when serve does not migrate, that the database has
// the tables and columns this version uses. While it does not, /readyz
// fails naming what is missing, and the check runs again every few
// seconds, so that a `leaf migrate` run elsewhere makes the instance ready.
func (a *app) watchSchema(ctx context.Context) {
	err := a.store.CheckSchema(ctx)
	if err == nil || !errors.As(err, new(*segment.NotMigratedError)) {
		return // a store that does not answer is the store check's to report
	}
	a.log.Error("the database lacks migrations and --migrate=false: run `leaf migrate`", "err", err)
	a.schemaErr.Store(&err)
	a.schemaDone = make(chan struct{})
	a.schemaWG.Add(1)
	go func() {
		defer a.schemaWG.Done()
		t := time.NewTicker(schemaRecheck)
		defer t.Stop()
		for {
			select {
			case <-a.schemaDone:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), a.store.Timeout())
			err := a.store.CheckSchema(ctx)
			cancel()
			if err == nil {
				a.schemaErr.Store(nil)
				a.log.Info("the database is migrated now")
				return
			}
		}
	}()
}

// schemaRecheck is how often a database found without its migrations is
// checked again.
const schemaRecheck = 2 * time.Second

func (a *app) schemaCheck(context.Context) error {
	if err := a.schemaErr.Load(); err != nil {
		return *err
	}
	return nil
}

// storeHealth is the store's health as /status shows it.
func (a *app) storeHealth() httpapi.StoreHealth {
	h := a.store.Health()
	out := httpapi.StoreHealth{Up: h.Up, Since: h.Since, Failed: h.Failed}
	if !h.Up && h.Err != nil {
		out.Err = h.Err.Error()
	}
	return out
}

// The checks' errors are shown in /readyz, which anyone who reaches the
// port may read: they say what is wrong in words that name no host. The
// errors with the details are in the log.

func (a *app) storeCheck(context.Context) error {
	if h := a.store.Health(); !h.Up {
		return fmt.Errorf("%w: the database has not answered since %s", httpapi.ErrDegraded, h.Since.UTC().Format(time.RFC3339))
	}
	return nil
}

// snowflakeCheck fails for a lease held by another or a clock behind; a
// lease that lapsed because renewals failed (the store did not answer), or
// that waits out a store gone back in time, is shared by every instance and
// only degrades.
func (a *app) snowflakeCheck(context.Context) error {
	err := a.gen.Ready()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, snowflake.ErrLeaseRegressed), errors.Is(err, snowflake.ErrLeaseUnrenewed):
		return fmt.Errorf("%w: %s", httpapi.ErrDegraded, snowflake.Reason(err))
	case snowflake.Reason(err) != "":
		return errors.New(snowflake.Reason(err))
	case errors.Is(err, snowflake.ErrClosed):
		return errors.New("shutting down")
	}
	return errors.New("cannot issue snowflake ids (the log says why)")
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

// tagsFlag is --metrics-tags, a list of tag names checked as it is set
// (metrics.ParseTags).
type tagsFlag struct {
	text string
	tags []string
}

func (f *tagsFlag) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

func (f *tagsFlag) Set(s string) error {
	tags, err := metrics.ParseTags(s)
	if err != nil {
		return err
	}
	f.text, f.tags = s, tags
	return nil
}

// splitAddrs parses a comma-separated list of host:port.
func splitAddrs(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("%q is not host:port: %v", a, err)
		}
		out = append(out, a)
	}
	return out, nil
}
