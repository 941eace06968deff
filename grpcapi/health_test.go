package grpcapi_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/leafid/leaf/grpcapi"
)

// eventually waits for cond, something the server does after the client
// saw the call end, failing after a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 5s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// recv reads the next status of a Watch stream, failing after a few
// seconds.
func recv(t *testing.T, w healthpb.Health_WatchClient) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	type res struct {
		m   *healthpb.HealthCheckResponse
		err error
	}
	ch := make(chan res, 1)
	go func() {
		m, err := w.Recv()
		ch <- res{m, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Recv: %v", r.err)
		}
		return r.m.GetStatus()
	case <-time.After(5 * time.Second):
		t.Fatal("no status within 5s")
	}
	return 0
}

// TestHealthWatch: google.golang.org/grpc's health client watches leaf's
// services: the status at once, then a message each time readiness
// changes; the process ("") is serving, an unknown service
// SERVICE_UNKNOWN. Streams the clients leave end on the server, and with
// the last the reading of readiness stops.
func TestHealthWatch(t *testing.T) {
	f := newFixture(t, func(cfg *config) { cfg.rpc.HealthInterval = 5 * time.Millisecond })
	hc := healthpb.NewHealthClient(f.grpcConn(t))
	watch := func(service string) (healthpb.Health_WatchClient, context.CancelFunc) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatal(err)
		}
		return w, cancel
	}
	ids, stopIDs := watch("leaf.v1.IdService")
	if st := recv(t, ids); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first status %v, want SERVING", st)
	}
	proc, stopProc := watch("")
	if st := recv(t, proc); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("the process: %v, want SERVING", st)
	}
	unknown, stopUnknown := watch("no.such.Service")
	if st := recv(t, unknown); st != healthpb.HealthCheckResponse_SERVICE_UNKNOWN {
		t.Fatalf("an unknown service: %v, want SERVICE_UNKNOWN", st)
	}
	if n, polling := grpcapi.Watching(f.handler); n != 3 || !polling {
		t.Fatalf("%d streams watched, polling %v; want 3, true", n, polling)
	}

	for range 2 {
		f.notReady.Store(true)
		if st := recv(t, ids); st != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("not ready: %v, want NOT_SERVING", st)
		}
		f.notReady.Store(false)
		if st := recv(t, ids); st != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("ready again: %v, want SERVING", st)
		}
	}

	// The process's stream was sent nothing more: readiness is not its
	// status. Leaving it ends it with Canceled.
	stopProc()
	if _, err := proc.Recv(); grpcCode(err) != "Canceled" {
		t.Fatalf("after the client left: %v, want Canceled", err)
	}
	stopIDs()
	stopUnknown()
	eventually(t, "the streams end on the server", func() bool {
		n, polling := grpcapi.Watching(f.handler)
		return n == 0 && !polling
	})
	eventually(t, "the ended streams are counted", func() bool {
		return counter(t, f, "/grpc.health.v1.Health/Watch", "ok") == 3
	})

	// Watching again starts the reading again.
	again, stopAgain := watch("leaf.v1.AdminService")
	defer stopAgain()
	if st := recv(t, again); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("a new stream: %v, want SERVING", st)
	}
	f.notReady.Store(true)
	if st := recv(t, again); st != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("a new stream, not ready: %v, want NOT_SERVING", st)
	}
}

// TestHealthWatchEndsOnShutdown: a graceful shutdown of the server ends
// every Watch stream, after a last NOT_SERVING, with the status OK, so the
// shutdown does not wait for clients to leave.
func TestHealthWatchEndsOnShutdown(t *testing.T) {
	f := newFixture(t, nil) // readiness read every second: the shutdown does not wait for it
	hc := healthpb.NewHealthClient(f.grpcConn(t))
	var streams []healthpb.Health_WatchClient
	for _, service := range []string{"leaf.v1.IdService", "", "no.such.Service"} {
		w, err := hc.Watch(t.Context(), &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatal(err)
		}
		if st := recv(t, w); st == healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("%q: %v before the shutdown", service, st)
		}
		streams = append(streams, w)
	}
	start := time.Now()
	if err := f.shutdown(); err != nil {
		t.Fatalf("shutdown with Watch streams open: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	for i, w := range streams {
		if st := recv(t, w); st != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("stream %d: last status %v, want NOT_SERVING", i, st)
		}
		if _, err := w.Recv(); !errors.Is(err, io.EOF) {
			t.Errorf("stream %d: after the last status %v, want its end (EOF)", i, err)
		}
	}
	if n, polling := grpcapi.Watching(f.handler); n != 0 || polling {
		t.Errorf("after the shutdown: %d streams watched, polling %v", n, polling)
	}
}

// TestHealthWatchesBounded: an instance holds at most MaxWatches health
// Watch streams; one more is refused with ResourceExhausted (Check still
// answers), and once one ends another is taken.
func TestHealthWatchesBounded(t *testing.T) {
	f := newFixture(t, func(cfg *config) { cfg.rpc.MaxWatches = 2 })
	hc := healthpb.NewHealthClient(f.grpcConn(t))
	var stops []context.CancelFunc
	for range 2 {
		ctx, cancel := context.WithCancel(t.Context())
		stops = append(stops, cancel)
		w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if st := recv(t, w); st != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("status %v", st)
		}
	}
	w, err := hc.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if grpcCode(err) != "ResourceExhausted" {
		t.Fatalf("a third Watch: %v, want ResourceExhausted", err)
	}
	if r, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check beside them: %v, %v", r, err)
	}
	stops[0]()
	eventually(t, "the stream left ends on the server", func() bool {
		n, _ := grpcapi.Watching(f.handler)
		return n == 1
	})
	again, err := hc.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st := recv(t, again); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("a Watch once one ended: %v", st)
	}
	stops[1]()
}

// TestWatchOutlivesWriteTimeout: the server's WriteTimeout bounds one
// answer, not a stream: a Watch open for several times that long still
// sends the change of status, and a call beside it is answered.
func TestWatchOutlivesWriteTimeout(t *testing.T) {
	const writeTimeout = 300 * time.Millisecond
	f := newFixture(t, func(cfg *config) {
		cfg.rpc.HealthInterval = 5 * time.Millisecond
		cfg.writeTimeout = writeTimeout
	})
	hc := healthpb.NewHealthClient(f.grpcConn(t))
	w, err := hc.Watch(t.Context(), &healthpb.HealthCheckRequest{Service: "leaf.v1.IdService"})
	if err != nil {
		t.Fatal(err)
	}
	if st := recv(t, w); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("status %v", st)
	}
	time.Sleep(4 * writeTimeout)
	if r, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check beside the Watch: %v, %v", r, err)
	}
	f.notReady.Store(true)
	if st := recv(t, w); st != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("the Watch, %v after it began: %v, want NOT_SERVING", 4*writeTimeout, st)
	}
}
