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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// shutdownTimeout bounds the graceful shutdown of the HTTP server.
const shutdownTimeout = 10 * time.Second

type serveConfig struct {
	storeFlags
	addr        string
	migrate     bool
	segment     bool
	snowflake   bool
	workerID    int64
	epochMs     int64
	adminToken  string
	logFormat   string
	holder      string
	refreshTags time.Duration
}

func (c *serveConfig) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("leaf serve", flag.ContinueOnError)
	c.storeFlags.register(fs)
	fs.StringVar(&c.addr, "addr", ":8080", "listen `address`")
	fs.BoolVar(&c.migrate, "migrate", true, "apply pending migrations before serving")
	fs.BoolVar(&c.segment, "segment", true, "serve segment mode")
	fs.BoolVar(&c.snowflake, "snowflake", true, "serve snowflake mode")
	fs.Int64Var(&c.workerID, "snowflake-worker-id", -1, "fixed snowflake worker `id` 0..1023; -1 leases one from the database")
	fs.Int64Var(&c.epochMs, "snowflake-epoch", snowflake.DefaultEpochMs, "snowflake epoch in Unix `milliseconds`")
	fs.StringVar(&c.adminToken, "admin-token", "", "bearer `token` of /api/admin; empty disables the admin API")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&c.holder, "snowflake-holder", "", "worker-lease holder `identity`; empty means hostname:port, stable across restarts")
	fs.DurationVar(&c.refreshTags, "tag-refresh", segment.DefaultRefreshInterval, "how often the tag list is re-read to drop tags gone from the database")
	return fs
}

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	var c serveConfig
	fs := c.flags()
	if err := parse(fs, args, getenv, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: serve takes no arguments, got %q", errUsage, fs.Args())
	}
	if c.workerID < -1 || c.workerID > snowflake.MaxWorkerID {
		return fmt.Errorf("%w: --snowflake-worker-id %d: want -1 or 0..%d", errUsage, c.workerID, snowflake.MaxWorkerID)
	}
	log, err := newLogger(c.logFormat, stderr)
	if err != nil {
		return err
	}
	if !c.segment && !c.snowflake {
		return fmt.Errorf("%w: --segment and --snowflake are both off: nothing to serve", errUsage)
	}

	st, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	log.Info("store open", c.describe()...)
	if c.migrate {
		if err := st.Migrate(ctx); err != nil {
			return err
		}
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	api := httpapi.Config{
		AdminToken: c.adminToken,
		Registry:   reg,
		Logger:     log,
		Checks:     []httpapi.Check{{Name: "store", Func: st.Ping}},
	}

	if c.segment {
		observe, err := httpapi.NewSegmentLoadObserver(reg)
		if err != nil {
			return err
		}
		alloc := segment.New(st, segment.Options{RefreshInterval: c.refreshTags, OnLoad: observe})
		defer alloc.Close()
		reg.MustRegister(httpapi.NewSegmentCollector(alloc))
		api.Segments = alloc
		api.Tags = tagAdmin{TagAdmin: st, alloc: alloc}
	}

	if c.snowflake {
		gen, err := c.newGenerator(ctx, st, log)
		if err != nil {
			return err
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			defer cancel()
			if err := gen.Close(ctx); err != nil {
				log.Warn("releasing the snowflake worker lease", "err", err)
			}
		}()
		reg.MustRegister(httpapi.NewSnowflakeCollector(func() (int64, uint64, uint64) {
			s := gen.Stats()
			return s.WorkerID, s.Issued, s.ClockBackwards
		}))
		api.Snowflake = gen
		api.Checks = append(api.Checks, httpapi.Check{Name: "snowflake", Func: func(context.Context) error { return gen.Ready() }})
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           httpapi.New(api),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second, // a body announced and never sent
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "version", version,
		"segment", c.segment, "snowflake", c.snowflake, "admin_api", c.adminToken != "")

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newGenerator starts the snowflake generator with a fixed or leased worker
// id and warns when the epoch's 41-bit range runs out within a year.
func (c *serveConfig) newGenerator(ctx context.Context, leases snowflake.LeaseStore, log *slog.Logger) (*snowflake.Generator, error) {
	s := snowflake.Settings{EpochMs: c.epochMs}
	if c.workerID >= 0 {
		s.WorkerID = c.workerID
	} else {
		s.Leases, s.Holder = leases, c.holder
		if s.Holder == "" {
			s.Holder = defaultHolder(c.addr)
		}
	}
	gen, err := snowflake.New(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("snowflake: %w", err)
	}
	log.Info("snowflake ready", "worker_id", gen.WorkerID(), "leased", s.Leases != nil, "holder", s.Holder)
	if ends := gen.Exhausts(); time.Until(ends) < 365*24*time.Hour {
		log.Warn("the snowflake epoch's 41-bit range runs out within a year: choose a later --snowflake-epoch before then",
			"runs_out", ends.UTC().Format(time.RFC3339))
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

// tagAdmin is the store's tag administration, forgetting a created tag in
// the allocator's negative cache so that it is usable here at once.
type tagAdmin struct {
	httpapi.TagAdmin
	alloc *segment.Allocator
}

func (t tagAdmin) CreateTag(ctx context.Context, tag segment.Tag) (segment.Tag, error) {
	created, err := t.TagAdmin.CreateTag(ctx, tag)
	if err == nil {
		t.alloc.Forget(created.Name)
	}
	return created, err
}
