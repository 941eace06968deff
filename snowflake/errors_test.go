package snowflake

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
)

func TestReason(t *testing.T) {
	const (
		regressed = "the worker lease went back in time (a database failover): waiting until every holder the database forgot has stopped"
		unrenewed = "the worker lease could not be renewed in time"
		lost      = "no worker lease is held: another process took it, or none is free"
		backwards = "the clock is behind the last id by more than the tolerance"
		exhausted = "the snowflake layout's timestamp range from the epoch has run out"
	)
	detail := errors.New("dial tcp 10.1.2.3:3306: connection refused")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"regressed", fmt.Errorf("%w: %w: worker id 3: waiting", ErrLeaseLost, ErrLeaseRegressed), regressed},
		{"unrenewed", fmt.Errorf("%w: %w: worker id 3 not renewed; last error: %w", ErrLeaseLost, ErrLeaseUnrenewed, detail), unrenewed},
		{"lost", fmt.Errorf("%w: worker id 3: renew: %w", ErrLeaseLost, detail), lost},
		{"no worker id", fmt.Errorf("acquire again: %w", ErrNoWorkerID), lost},
		{"clock backwards", fmt.Errorf("%w: the clock reads 2026-01-01T00:00:00Z", ErrClockBackwards), backwards},
		{"exhausted", errExhausted(DefaultEpochMs, DefaultLayout()), exhausted},
		{"closed", ErrClosed, ""},
		{"invalid id", ErrInvalidID, ""},
		{"another error", detail, ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Reason(tt.err); got != tt.want {
				t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}

	// A generator's own refusals read as the sentences above.
	clock := testkit.NewClock(start, 0)
	g := newTestGenerator(t, fixedSettings(clock))
	mustNext(t, g)
	clock.Add(-DefaultTolerance - ms)
	if err := g.Ready(); Reason(err) != backwards {
		t.Errorf("Ready with the clock behind: %v, reason %q, want %q", err, Reason(err), backwards)
	}
	_ = g.Close(context.Background())
	if _, err := g.Next(context.Background()); !errors.Is(err, ErrClosed) || Reason(err) != "" {
		t.Errorf("Next after Close: %v, reason %q, want %v and no reason", err, Reason(err), ErrClosed)
	}
}
