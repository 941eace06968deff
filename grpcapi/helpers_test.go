package grpcapi_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/leafid/leaf/grpcapi"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

const adminToken = "t0ken-secret"

var errNotReady = errors.New("not ready")

// fixture is a server of both APIs on a loopback port: the gRPC side
// real, over a real allocator (on an in-memory store), a real snowflake
// generator and UUID generator; the HTTP side a stand-in that says so.
type fixture struct {
	addr     string
	store    *segmenttest.MemStore
	reg      *prometheus.Registry
	notReady atomic.Bool // makes Config.Ready fail
	cfg      grpcapi.Config
	handler  *grpcapi.Handler
	// shutdown shuts the server down gracefully, once; later calls
	// return the first's error.
	shutdown func() error
	stopOnce sync.Once
	stopErr  error
}

// config is what a test may change of its fixture's server: the parts of
// the service, and the edge's own settings.
type config struct {
	svc service.Config
	rpc grpcapi.Config
	// writeTimeout is the server's WriteTimeout; 0: none.
	writeTimeout time.Duration
}

// httpStandIn answers every request outside gRPC's paths.
const httpStandIn = "the HTTP API"

// newFixture starts a server; edit changes its configuration first.
func newFixture(t testing.TB, edit func(*config)) *fixture {
	t.Helper()
	f := &fixture{
		store: segmenttest.New(
			segment.Tag{Name: "orders", MaxID: 1, Step: 1000},
			segment.Tag{Name: "spent", MaxID: math.MaxInt64, Step: 1000},
			segment.Tag{Name: "broken", MaxID: 1, Step: 0},
		),
		reg: prometheus.NewRegistry(),
	}
	alloc := segment.New(f.store, segment.Options{})
	t.Cleanup(func() { _ = alloc.Close() })
	gen, err := snowflake.New(context.Background(), snowflake.Settings{WorkerID: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gen.Close(context.Background()) })
	c := config{
		svc: service.Config{
			Segments:  alloc,
			Snowflake: gen,
			UUIDs:     uuidv7.New(uuidv7.Options{}),
			Tags:      f.store,
			Metrics:   f.reg,
		},
		rpc: grpcapi.Config{
			AdminToken: adminToken,
			Ready: func(context.Context) error {
				if f.notReady.Load() {
					return errNotReady
				}
				return nil
			},
			Registry: f.reg,
		},
	}
	if edit != nil {
		edit(&c)
	}
	f.cfg = c.rpc
	f.cfg.Service = service.New(c.svc)
	h := grpcapi.New(f.cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, httpStandIn+" "+r.Proto)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: grpcapi.ServerProtocols(), HTTP2: grpcapi.ServerHTTP2(),
		ReadHeaderTimeout: 5 * time.Second, WriteTimeout: c.writeTimeout}
	srv.RegisterOnShutdown(h.Close) // as leaf serve does
	f.handler = h
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	f.shutdown = func() error {
		f.stopOnce.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			f.stopErr = srv.Shutdown(ctx)
			if err := <-done; !errors.Is(err, http.ErrServerClosed) && f.stopErr == nil {
				f.stopErr = err
			}
		})
		return f.stopErr
	}
	t.Cleanup(func() {
		if err := f.shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	f.addr = ln.Addr().String()
	return f
}

func (f *fixture) url() string { return "http://" + f.addr }

// grpcConn is a google.golang.org/grpc connection to the server, over
// unencrypted HTTP/2 as gRPC clients speak it.
func (f *fixture) grpcConn(t testing.TB) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// h2c is an HTTP client that speaks unencrypted HTTP/2 only, for
// connect's gRPC protocol.
func h2c(t testing.TB) *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// clients are connect clients of the server over each protocol.
func (f *fixture) idClients(t testing.TB) map[string]leafv1connect.IdServiceClient {
	return map[string]leafv1connect.IdServiceClient{
		"connect+proto": leafv1connect.NewIdServiceClient(http.DefaultClient, f.url()),
		"connect+json":  leafv1connect.NewIdServiceClient(http.DefaultClient, f.url(), connect.WithProtoJSON()),
		"grpc-web":      leafv1connect.NewIdServiceClient(http.DefaultClient, f.url(), connect.WithGRPCWeb()),
		"grpc":          leafv1connect.NewIdServiceClient(h2c(t), f.url(), connect.WithGRPC()),
	}
}

// withToken adds the admin token to a connect call.
func withToken[T any](m *T, token string) *connect.Request[T] {
	req := connect.NewRequest(m)
	if token != "" {
		req.Header().Set("Authorization", "Bearer "+token)
	}
	return req
}
