package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

// testApp is `leaf serve` running in the test process on a port of its
// own choosing: open binds 127.0.0.1:0 and the test reads the address
// back, so there is nothing to guess and nothing to poll for.
type testApp struct {
	*served
	base string
	logs *testkit.SyncBuffer

	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// startApp opens and runs the app configured by e and args; it is stopped
// when t ends if the test has not stopped it.
func startApp(t *testing.T, e env, args ...string) *testApp {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	a, err := newApp(append(args, "--addr", "127.0.0.1:0"), e.get, logs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := a.Open(ctx); err != nil {
		cancel()
		t.Fatalf("open: %v\n%s", errors.Join(err, a.Close()), logs.String())
	}
	ta := &testApp{served: a, base: "http://" + a.Addr(), logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { ta.done <- a.Run(ctx) }()
	t.Cleanup(func() {
		if err := ta.stop(); err != nil {
			t.Errorf("%s: %v\n%s", ta.base, err, logs.String())
		}
	})
	return ta
}

// stop shuts the app down as SIGTERM would and returns what run and close
// returned.
func (a *testApp) stop() error {
	a.stopOnce.Do(func() {
		a.cancel()
		select {
		case err := <-a.done:
			a.stopErr = errors.Join(err, a.Close())
		case <-time.After(30 * time.Second):
			a.stopErr = errors.New("run did not return")
		}
	})
	return a.stopErr
}
