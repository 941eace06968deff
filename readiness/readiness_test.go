package readiness_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// TestReady: an instance is ready unless a check fails for a reason of its
// own; a shared outage (ErrDegraded) leaves it ready. A check without a
// func, one that panics and one that overruns fail, and none is waited for
// beyond the timeout.
func TestReady(t *testing.T) {
	ok := func(context.Context) error { return nil }
	degraded := func(context.Context) error {
		return fmt.Errorf("%w: the database has not answered", readiness.ErrDegraded)
	}
	stuck := func(context.Context) error { time.Sleep(time.Second); return nil }
	tests := []struct {
		name    string
		checks  []readiness.Check
		failing string // "" for ready
	}{
		{"none", nil, ""},
		{"all pass", []readiness.Check{{Name: "a", Func: ok}, {Name: "b", Func: ok}}, ""},
		{"degraded is ready", []readiness.Check{{Name: "store", Func: degraded}, {Name: "b", Func: ok}}, ""},
		{"one fails", []readiness.Check{{Name: "a", Func: ok}, {Name: "lifecycle", Func: func(context.Context) error { return errors.New("shutting down") }}}, "lifecycle"},
		{"no func", []readiness.Check{{Name: "broken"}}, "broken"},
		{"panics", []readiness.Check{{Name: "panics", Func: func(context.Context) error { panic("x") }}, {Name: "store", Func: degraded}}, "panics"},
		{"overruns", []readiness.Check{{Name: "stuck", Func: stuck}, {Name: "a", Func: ok}}, "stuck"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := readiness.Ready(context.Background(), tt.checks)
			// A bound of the contract, not a measure of speed: readiness is
			// known within the timeout whatever its checks do.
			if took := time.Since(start); took > 10*readiness.Timeout {
				t.Errorf("Ready took %v", took)
			}
			switch {
			case tt.failing == "" && err != nil:
				t.Fatalf("Ready = %v, want ready", err)
			case tt.failing != "" && (err == nil || err.Error() != "failing checks: "+tt.failing):
				t.Fatalf("Ready = %v, want failing checks: %s", err, tt.failing)
			}
		})
	}
}

// TestSnowflakeCheck: a lease lost to another or a clock behind is this
// instance's own failure; a lease no store renews, or one waiting out a
// store gone back in time, is shared and only degrades.
func TestSnowflakeCheck(t *testing.T) {
	for _, tt := range []struct {
		err      error
		degraded bool
		ok       bool
	}{
		{nil, false, true},
		{snowflake.ErrLeaseUnrenewed, true, false},
		{snowflake.ErrLeaseRegressed, true, false},
		{snowflake.ErrClosed, false, false},
		{errors.New("something else"), false, false},
	} {
		ch := readiness.Snowflake(func() error { return tt.err })
		err := ch.Func(context.Background())
		if (err == nil) != tt.ok || errors.Is(err, readiness.ErrDegraded) != tt.degraded || ch.Name != "snowflake" {
			t.Errorf("Snowflake over %v = %v, want ok %v, degraded %v", tt.err, err, tt.ok, tt.degraded)
		}
		if err != nil && strings.Contains(err.Error(), "%!") {
			t.Errorf("Snowflake over %v says %q", tt.err, err)
		}
	}
}
