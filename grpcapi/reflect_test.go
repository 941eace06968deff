package grpcapi

import (
	"context"
	"sync"
	"testing"

	"connectrpc.com/connect"
)

// TestBoundedStreams: past its bound a streaming call is refused with
// ResourceExhausted, without running; once one ends another is taken.
func TestBoundedStreams(t *testing.T) {
	b := newBoundedStreams(2, "reflection")
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	h := b.WrapStreamingHandler(func(context.Context, connect.StreamingHandlerConn) error {
		started <- struct{}{}
		<-release
		return nil
	})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _ = h(context.Background(), nil) })
	}
	<-started
	<-started
	ran := false
	third := b.WrapStreamingHandler(func(context.Context, connect.StreamingHandlerConn) error { ran = true; return nil })
	if err := third(context.Background(), nil); connect.CodeOf(err) != connect.CodeResourceExhausted || ran {
		t.Fatalf("a third stream: %v (ran %v), want ResourceExhausted, not run", err, ran)
	}
	close(release)
	wg.Wait()
	if err := third(context.Background(), nil); err != nil || !ran {
		t.Fatalf("once the two ended: %v (ran %v)", err, ran)
	}
}
