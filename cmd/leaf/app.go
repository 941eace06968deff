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
	"os"
	"strings"
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
	"github.com/leafid/leaf/store"
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
		BizTags:    api.BizTags,
		OnCreate:   api.OnCreate,
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
	rpcAPI := grpcapi.New(rpc, httpapi.New(api))
	a.srv = &http.Server{
		// gRPC, gRPC-Web and Connect on their paths, the HTTP API on
		// every other, over HTTP/1.1 and unencrypted HTTP/2.
		Handler:           rpcAPI,
		Protocols:         grpcapi.ServerProtocols(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second, // a body announced and never sent
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	a.srv.RegisterOnShutdown(rpcAPI.Close) // Shutdown waits for health Watch streams: end them
	if a.cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(a.cfg.tlsCert, a.cfg.tlsKey)
		if err != nil {
			return fmt.Errorf("--tls-cert and --tls-key: %w", err)
		}
		a.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return nil
}

// openStore is a store the app opened: the one of --mysql-dsn or
// --sqlite-path, named "", or one of --store.
type openStore struct {
	name string
	st   *store.Store
	// late is set while a store of a set that did not answer at the
	// start has not been migrated (or, with --migrate=false, its schema
	// checked) since: see watchStores.
	late *atomic.Bool
}

// openStore opens the store, or every --store, and migrates each, or with
// --migrate=false starts watching for the migrations they lack; with
// --store it then opens the set over them, which checks that they are the
// set they record.
//
// A store of a set that does not answer at the start does not fail it,
// as long as another store answers (the set is then checked against the
// stores that answer, and the others once they do): it opens down, its
// readiness check says so, and it is migrated once it answers.
func (a *app) openStore(ctx context.Context) error {
	if !a.cfg.several() {
		st, err := a.cfg.open(ctx, store.Options{OnHealth: a.healthLogger("")})
		if err != nil {
			return err
		}
		a.stores = append(a.stores, openStore{st: st, late: new(atomic.Bool)})
		a.log.Info("store open", a.cfg.describe()...)
	}
	for _, e := range a.cfg.stores {
		st, err := e.open(ctx, store.Options{OnHealth: a.healthLogger(e.name), Timeout: a.cfg.storeTimeout, AllowDown: true})
		if err != nil {
			return err
		}
		s := openStore{name: e.name, st: st, late: new(atomic.Bool)}
		a.stores = append(a.stores, s)
		if st.Health().Up {
			a.log.Info("store open", e.describe()...)
			continue
		}
		s.late.Store(true)
		a.log.Warn("store open, not answering: the other stores serve until it answers",
			append(e.describe(), "err", st.Health().Err)...)
	}
	if a.cfg.migrate {
		for _, s := range a.stores {
			if s.late.Load() {
				continue
			}
			applied, err := s.st.Migrate(ctx)
			if err != nil {
				return s.errorf(err)
			}
			logMigrations(a.log.With(s.attrs()...), applied)
		}
	}
	a.watchStores(ctx)
	if !a.cfg.several() {
		return a.refuseSetMember(ctx)
	}
	named := make([]storeset.Named, len(a.stores))
	for i, s := range a.stores {
		named[i] = storeset.Named{Name: s.name, Store: s.st, Up: func() bool { return s.st.Health().Up && !s.late.Load() }}
	}
	var err error
	a.set, err = storeset.Open(ctx, named, storeset.Options{
		CallTimeout:  a.cfg.storeTimeout,
		FailoverJump: a.cfg.failoverJump,
		OnStale:      a.logStale,
	})
	if err != nil {
		return err
	}
	set := a.set.Set()
	a.log.Info("set of stores open", "version", set.Version, "fleet", set.Fleet, "stores", strings.Join(set.Names(), ","))
	return nil
}

// refuseSetMember refuses a single store that belongs to a set of several:
// served alone, its rows would hand out ids outside its class, which other
// stores of the set hand out. A database not migrated yet belongs to none.
func (a *app) refuseSetMember(ctx context.Context) error {
	r, err := a.stores[0].st.Record(ctx)
	if err != nil || r.State == storeset.Unjoined {
		return nil
	}
	name := "?"
	if set, err := storeset.Decode(r.Set); err == nil {
		for _, m := range set.Members {
			if m.Store == r.StoreID {
				name = m.Name
			}
		}
	}
	return fmt.Errorf("%w: this database is store %q of a set of stores (version %d, %s): serve it with --store, "+
		"naming every store of the set (leaf store show)", errUsage, name, r.Version, r.State)
}

// errorf names the store in err when there are several.
func (s openStore) errorf(err error) error {
	if s.name == "" {
		return err
	}
	return fmt.Errorf("store %q: %w", s.name, err)
}

// attrs name the store in a log line when there are several.
func (s openStore) attrs() []any {
	if s.name == "" {
		return nil
	}
	return []any{"store", s.name}
}

// segmentStore is where the allocator takes its ranges: the store, or the
// set of stores.
func (a *app) segmentStore() segment.Store {
	if a.set != nil {
		return a.set
	}
	return a.stores[0].st
}

// tagStore administers the tags: of the store, or of every store of the
// set.
func (a *app) tagStore() httpapi.TagAdmin {
	if a.set != nil {
		return a.set
	}
	return a.stores[0].st
}

// leaseStore is where snowflake worker ids are leased. With several stores
// it is the set: each store leases only in its own part of the worker-id
// space, so regions never run the same worker id, and a lease lost with
// its store is taken again from another.
func (a *app) leaseStore() snowflake.LeaseStore {
	if a.set != nil {
		return a.set.Leases()
	}
	return a.stores[0].st
}

// newAllocator starts the segment allocator, timing its loads in times
// and logging them.
func (a *app) newAllocator(times *metrics.LoadTimes) *segment.Allocator {
	loads := newLoadLimiters()
	opts := segment.Options{
		// A load is one call of the store, or two when it fences.
		LoadTimeout:     2*a.stores[0].st.Timeout() + time.Second,
		RefreshInterval: a.cfg.refreshTags,
		FailoverJump:    a.cfg.failoverJump,
		OnLoad: func(tag string, took time.Duration, err error) {
			times.Observe(tag, took, err)
			a.logLoad(loads, tag, err)
		},
		OnRegression: a.logRegression,
	}
	if a.set != nil {
		// Ranges come from whichever store answers, each in its own part
		// of the number space: asking for one above the last received
		// keeps a tag's ids in order here. A load may try every store,
		// each call bounded by the set's call timeout, and read the marks
		// of the others.
		opts.AboveReceived = true
		call := a.cfg.storeTimeout
		if call <= 0 {
			call = segment.DefaultLoadTimeout / 3 // the set's default
		}
		opts.LoadTimeout = time.Duration(2*len(a.stores))*call + time.Second
	}
	return segment.New(a.segmentStore(), opts)
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

// handBack returns the unused tails of the segments to their rows, so that
// a restart does not skip them, and logs what it did. A set of stores
// takes nothing back: its ranges come from several rows.
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
		s.Leases, s.Holder = a.leaseStore(), a.cfg.holder
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

// newSequencer starts the per-key sequences on the store, advertising
// --advertise-addr or an address made of the listener's.
func (a *app) newSequencer() (*sequence.Sequencer, error) {
	addr := a.cfg.advertiseAddr
	if addr == "" {
		addr = defaultAdvertise(a.addr())
	}
	// A failing round is logged when it starts failing, then at most once
	// a minute while the error stays the same (every round fails while
	// the store is down), and once when a round succeeds again.
	var (
		lastErr    string
		lastLogged time.Time
	)
	q, err := sequence.New(sequence.Options{
		Store:   a.stores[0].st,
		Ordered: a.stores[0].st,
		Tags:    a.stores[0].st,
		Addr:    addr,
		Lease:   a.cfg.sequenceLease,
		OnEvent: func(e sequence.Event) {
			switch e.Kind {
			case "error":
				if msg := e.Err.Error(); msg != lastErr || time.Since(lastLogged) >= time.Minute {
					lastErr, lastLogged = msg, time.Now()
					a.log.Warn("sequences: ownership round failed; sections whose lease this instance cannot renew stop being served before it ends", "err", e.Err)
				}
			case "recovered":
				lastErr = ""
				a.log.Info("sequences: ownership rounds succeed again")
			case "lost":
				a.log.Warn("sequences: section lost", "space", e.Space, "section", e.Section, "err", e.Err)
			default:
				a.log.Info("sequences: section "+e.Kind, "space", e.Space, "section", e.Section)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	a.log.Info("sequences ready", "advertise_addr", addr, "member", q.ID(), "lease", q.Lease().String())
	return q, nil
}

// defaultAdvertise is the address other instances reach this one at when
// --advertise-addr is not given: the listen address when it names a host,
// else the host name and the listen port.
func defaultAdvertise(listen string) string {
	host, _, err := net.SplitHostPort(listen)
	if err == nil && host != "" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			return listen
		}
	}
	return defaultHolder(listen)
}

// spaceAdmin is the store's administration of sequence spaces, telling
// the Sequencer of a created space so that its sections are claimed at
// once.
type spaceAdmin struct {
	httpapi.SpaceAdmin
	seq *sequence.Sequencer
}

func (s spaceAdmin) CreateSpace(ctx context.Context, sp sequence.Space) (sequence.Space, error) {
	created, err := s.SpaceAdmin.CreateSpace(ctx, sp)
	if err == nil {
		s.seq.Added(created)
	}
	return created, err
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
// the tag list, and the Sequencer of an ordered tag.
type tagAdmin struct {
	httpapi.TagAdmin
	alloc *segment.Allocator
	seq   *sequence.Sequencer // nil: no ordered tags
	st    *store.Store
}

func (t tagAdmin) CreateOrderedTag(ctx context.Context, tag segment.Tag) (segment.Tag, error) {
	if t.seq == nil || t.st == nil {
		return segment.Tag{}, fmt.Errorf("%w: ordered tags need sequences on and one store", sequence.ErrUnavailable)
	}
	created, err := t.st.CreateOrderedTag(ctx, tag)
	if err == nil {
		t.alloc.MarkNotPlain(created.Name)
		t.seq.AddedOrdered(created.Name)
	}
	return created, err
}

func (t tagAdmin) CreateTag(ctx context.Context, tag segment.Tag) (segment.Tag, error) {
	created, err := t.TagAdmin.CreateTag(ctx, tag)
	if err == nil {
		t.alloc.Added(created.Name)
	}
	return created, err
}
