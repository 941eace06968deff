package app

import (
	"cmp"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/net/netutil"

	"github.com/leafid/leaf/grpcapi"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/service"
)

// wiring is what the parts of the app serve, gathered while open starts
// them: the service's configuration, the HTTP API's, the sources of the
// domain metrics and the registry they are exposed from. The service is
// made once at the end (openServer), and both edges serve it.
type wiring struct {
	reg    *prometheus.Registry
	svc    service.Config
	api    httpapi.Config
	domain metrics.Sources
}

// The defaults of Config.WriteTimeout and Config.MaxConns.
const (
	// DefaultWriteTimeout is far above any answer's time (a batch of
	// 10,000 ids, a call that waits for the store's timeout twice) and
	// bounds how long a client that does not read holds one.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxConns bounds the connections, each a goroutine and its
	// buffers (tens of KB): about half a GB at most.
	DefaultMaxConns = 10_000
	// DefaultIdleTimeout is how long a connection with no request in
	// flight is kept: a client's keep-alive, or one that sent nothing
	// after its first bytes (an HTTP/2 preface alone).
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxWatches is grpcapi's: the most health Watch streams.
	DefaultMaxWatches = grpcapi.DefaultMaxWatches
)

// countConns returns the server's ConnState hook, which keeps
// leaf_http_connections, beside leaf_http_connections_max (--max-conns):
// an instance near its bound keeps new connections waiting.
func (a *Server) countConns(reg prometheus.Registerer) func(net.Conn, http.ConnState) {
	open := prometheus.NewGauge(prometheus.GaugeOpts{Name: "leaf_http_connections",
		Help: "Connections open to this instance's port, both APIs, every protocol."})
	most := prometheus.NewGauge(prometheus.GaugeOpts{Name: "leaf_http_connections_max",
		Help: "The most connections served at once (--max-conns); past it new ones wait to be accepted."})
	most.Set(float64(cmp.Or(a.cfg.MaxConns, DefaultMaxConns)))
	reg.MustRegister(open, most)
	return func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Inc()
		case http.StateClosed, http.StateHijacked:
			open.Dec()
		}
	}
}

// listen binds --addr, accepting at most Config.MaxConns connections at
// once. It comes before anything is leased, so a port in use fails the
// start at once, and the holder name has the port really listened on.
func (a *Server) listen() error {
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return err
	}
	a.ln = netutil.LimitListener(ln, cmp.Or(a.cfg.MaxConns, DefaultMaxConns))
	return nil
}

// Addr is the address the app listens on, once open.
func (a *Server) Addr() string { return a.ln.Addr().String() }

// newWiring is the configuration of the edges before any part adds to it:
// the instance, the tokens, and the readiness checks of the lifecycle and
// the stores.
func (a *Server) newWiring() *wiring {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), a.skips)
	e := &wiring{
		reg: reg,
		domain: metrics.Sources{Version: a.cfg.Version, StoreUp: a.storesUp, SegmentTags: a.cfg.MetricsTags, StoresDurable: a.storesDurable,
			StoreRestartJumps: a.storesJumped},
		api: httpapi.Config{
			AdminToken:  a.cfg.AdminToken,
			StatusToken: a.cfg.StatusToken,
			IDToken:     a.cfg.IDToken,
			Instance: httpapi.Instance{
				Version:     a.cfg.Version,
				Started:     time.Now(),
				Store:       a.cfg.Kind(),
				StoreHealth: a.storeHealth,
				Durability:  a.durabilityLines,
			},
			Registry: reg,
			Logger:   a.log,
			Checks:   append([]readiness.Check{{Name: "lifecycle", Func: a.lifecycleCheck, ShowReason: true}}, a.ready.Checks()...),
		},
		svc: service.Config{Metrics: reg, Logger: a.log, CappedShare: a.cfg.CappedShare, RangeMax: a.cfg.RangeMax},
	}
	var peerTLS func(host string) *tls.Config
	if a.tls != nil {
		peerTLS = a.tls.client
		if a.tls.mutual {
			e.api.TrustForwarded = func(r *http.Request) bool { return a.tls.trustsPeer(r.TLS) }
		}
	}
	e.svc.Peer = httpapi.NewPeer(a.cfg.ForwardTimeout, peerTLS).WithToken(a.cfg.IDToken)
	if a.set.Several() {
		e.api.Instance.Store = a.cfg.SetKind()
		e.api.Instance.SetVersion = func() int64 { return a.set.Set().Version }
	}
	return e
}

// openServer registers the domain metrics and makes the server of both
// edges from what the parts offered, with TLS when --tls-cert is given.
// It serves nothing yet: run does.
func (a *Server) openServer(e *wiring) error {
	api := e.api
	api.Service = service.New(e.svc)
	if e.domain.Segments != nil {
		e.domain.Segments = api.Service.Parts().Segments
	}
	if err := metrics.Register(e.reg, e.domain); err != nil {
		return err
	}
	rpc := grpcapi.Config{
		Service:    api.Service,
		AdminToken: a.cfg.AdminToken,
		IDToken:    a.cfg.IDToken,
		Ready:      func(ctx context.Context) error { return readiness.Ready(ctx, api.Checks) },
		Registry:   e.reg,
		Logger:     a.log,
		MaxWatches: a.cfg.MaxWatches,
	}
	rpcAPI := grpcapi.New(rpc, httpapi.New(api))
	a.srv = &http.Server{
		// gRPC, gRPC-Web and Connect on their paths, the HTTP API on
		// every other, over HTTP/1.1 and unencrypted HTTP/2.
		Handler:           rpcAPI,
		Protocols:         grpcapi.ServerProtocols(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second, // a body announced and never sent
		WriteTimeout:      cmp.Or(a.cfg.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       cmp.Or(a.cfg.IdleTimeout, DefaultIdleTimeout),
		HTTP2:             grpcapi.ServerHTTP2(),
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
		ConnState:         a.countConns(e.reg),
	}
	a.srv.RegisterOnShutdown(rpcAPI.Close) // Shutdown waits for health Watch streams: end them
	if a.tls != nil {
		a.srv.TLSConfig = a.tls.server()
	}
	return nil
}
