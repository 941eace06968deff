package grpcapi

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
)

// DefaultHealthInterval is how often readiness is read for the health
// Watch streams when Config.HealthInterval is 0.
const DefaultHealthInterval = time.Second

// statusServiceUnknown is grpc.health.v1's SERVICE_UNKNOWN, which
// grpchealth has no name for: the status a Watch of a service not served
// here streams.
const statusServiceUnknown grpchealth.Status = 3

// watchProcedure is the procedure of the health service's Watch.
const watchProcedure = "/" + grpchealth.HealthV1ServiceName + "/Watch"

// health answers grpc.health.v1.Health, for Kubernetes gRPC probes, load
// balancers and gRPC clients' own health checking: the service "" is the
// process (serving while it runs: a liveness probe), and each of leaf's
// services is serving while the instance can issue ids, as /readyz
// reports it (a readiness probe).
//
// Check answers once. Watch streams a service's status: at once, then
// each time it changes, until the client leaves or the server stops
// (close). Readiness has no signal of its own, so while any stream is
// open one goroutine reads it every interval and wakes the streams when
// it changed; each stream then checks again and sends only a status that
// differs from its last (connectrpc.com/grpchealth's Watcher).
type health struct {
	ready    func(ctx context.Context) error
	services []string
	interval time.Duration
	most     int // Watch streams held at once

	mu sync.Mutex // protects the fields below
	// watches are the open Watch streams; true for one opened since the
	// last read of readiness, which is woken by the next whatever it reads.
	watches  map[*watch]bool
	closed   bool
	stopPoll context.CancelFunc // stops the poller; nil while none runs
	pollers  sync.WaitGroup
}

// watch is one Watch stream, known to Check by its context (see
// watchStreams).
type watch struct {
	wake func()             // makes the stream check again
	end  context.CancelFunc // ends the stream, with the status OK
	// told is set once the stream checked after close: the next check
	// ends it. Only the stream's own goroutine reads and writes it.
	told bool
}

type watchKey struct{}

// DefaultMaxWatches is the most health Watch streams an instance holds at
// once (Config.MaxWatches): each holds a goroutine and its connection's
// memory, and needs no token, so a caller opening thousands would hold the
// instance's memory. A Watch past it is refused with ResourceExhausted;
// Check always answers. A load balancer or an orchestrator watches with
// one or a few.
const DefaultMaxWatches = 1000

func newHealth(ready func(context.Context) error, services []string, interval time.Duration, most int) *health {
	if interval <= 0 {
		interval = DefaultHealthInterval
	}
	if most <= 0 {
		most = DefaultMaxWatches
	}
	return &health{ready: ready, services: services, interval: interval, most: most, watches: map[*watch]bool{}}
}

func (h *health) known(service string) bool {
	return service == "" || slices.Contains(h.services, service)
}

// status is the status of a service served here.
func (h *health) status(ctx context.Context, service string) grpchealth.Status {
	if service == "" || h.ready == nil || h.ready(ctx) == nil {
		return grpchealth.StatusServing
	}
	return grpchealth.StatusNotServing
}

func (h *health) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if w, ok := ctx.Value(watchKey{}).(*watch); ok {
		return &grpchealth.CheckResponse{Status: h.watchStatus(ctx, w, req.Service)}, nil
	}
	if !h.known(req.Service) {
		return nil, connect.NewError(connect.CodeNotFound, plain("unknown service "+req.Service))
	}
	return &grpchealth.CheckResponse{Status: h.status(ctx, req.Service)}, nil
}

// watchStatus is the status a Watch stream sends: SERVICE_UNKNOWN for a
// service not served here (the stream stays open, as the health protocol
// asks), NOT_SERVING once the server stops. A stream that checks after
// close is sent NOT_SERVING (if its last status was another) and woken
// once more, and its next check ends it: that way the last status reaches
// the client before the stream ends.
func (h *health) watchStatus(ctx context.Context, w *watch, service string) grpchealth.Status {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	switch {
	case closed && w.told:
		w.end()
		return grpchealth.StatusNotServing
	case closed:
		w.told = true
		w.wake()
		return grpchealth.StatusNotServing
	case !h.known(service):
		return statusServiceUnknown
	}
	return h.status(ctx, service)
}

// Watch registers a stream, whose first status grpchealth sends when
// Watch returns; stop unregisters it when the stream ends.
func (h *health) Watch(ctx context.Context, _ *grpchealth.CheckRequest, onChange func()) (stop func(), err error) {
	w, ok := ctx.Value(watchKey{}).(*watch)
	if !ok { // not through watchStreams: the first status only
		return func() {}, nil
	}
	w.wake = onChange
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed { // its first check ends it
		return func() {}, nil
	}
	if len(h.watches) >= h.most {
		return nil, connect.NewError(connect.CodeResourceExhausted,
			fmt.Errorf("this instance holds %d health Watch streams, the most it takes: use Check, or watch another instance", h.most))
	}
	h.watches[w] = true
	if h.stopPoll == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.stopPoll = cancel
		h.pollers.Add(1)
		go h.poll(ctx)
	}
	return func() { h.unwatch(w) }, nil
}

func (h *health) unwatch(w *watch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.watches, w)
	if len(h.watches) == 0 && h.stopPoll != nil {
		h.stopPoll()
		h.stopPoll = nil
	}
}

// poll reads readiness every interval until ctx ends, and wakes every
// stream when it changed, and the streams opened since the last read
// whatever it is: one of those may have checked just before a change that
// the read before it already saw.
func (h *health) poll(ctx context.Context) {
	defer h.pollers.Done()
	t := time.NewTicker(h.interval)
	defer t.Stop()
	last := h.ready == nil || h.ready(ctx) == nil
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ready := h.ready == nil || h.ready(ctx) == nil
		changed := ready != last
		last = ready
		h.mu.Lock()
		for w, opened := range h.watches {
			if changed || opened {
				h.watches[w] = false
				w.wake()
			}
		}
		h.mu.Unlock()
	}
}

// close ends every Watch stream, each after a last NOT_SERVING, refuses
// new ones the same way, and waits for the poller to stop. It may be
// called more than once.
func (h *health) close() {
	h.mu.Lock()
	h.closed = true
	for w := range h.watches {
		w.wake()
	}
	if h.stopPoll != nil {
		h.stopPoll()
		h.stopPoll = nil
	}
	h.mu.Unlock()
	h.pollers.Wait()
}

// watchStreams gives each Watch stream a context of its own, which marks
// it for Check and which its watch cancels to end the stream: grpchealth's
// handler returns, with the status OK, when its context ends.
type watchStreams struct{}

func (watchStreams) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc { return next }

func (watchStreams) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (watchStreams) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if conn.Spec().Procedure != watchProcedure {
			return next(ctx, conn)
		}
		ctx, end := context.WithCancel(ctx)
		defer end()
		return next(context.WithValue(ctx, watchKey{}, &watch{end: end}), conn)
	}
}
