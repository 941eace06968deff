package snowflake

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckEpoch(t *testing.T) {
	tests := []struct {
		name    string
		epochMs int64
		wantMsg string // a part of the error; "" for none
	}{
		{name: "the default", epochMs: DefaultEpochMs},
		{name: "1970", epochMs: 0},
		{name: "now", epochMs: start.UnixMilli()},
		{name: "negative", epochMs: -1, wantMsg: "epoch -1 is negative, before 1970"},
		{name: "1 ms in the future", epochMs: start.UnixMilli() + 1,
			wantMsg: "epoch 1750000000001 (2025-06-15T15:06:40.001Z) is in the future; an epoch must be at most now, 1750000000000 (2025-06-15T15:06:40Z)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckEpoch(tt.epochMs, start)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("CheckEpoch(%d): %v", tt.epochMs, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("CheckEpoch(%d) = %v, want %v with %q", tt.epochMs, err, ErrInvalidSettings, tt.wantMsg)
			}
		})
	}
}

func TestLayoutExhausted(t *testing.T) {
	for _, l := range []Layout{DefaultLayout(), msLayout(35, 16, 12), {Unit: time.Second, TimeBits: 31, WorkerBits: 10, SequenceBits: 22}} {
		end := l.End(DefaultEpochMs)
		for _, tt := range []struct {
			at   time.Time
			want bool
		}{
			{time.UnixMilli(DefaultEpochMs), false},
			{end.Add(-time.Nanosecond), false},
			{end, true},
			{end.Add(time.Hour), true},
		} {
			if got := l.Exhausted(DefaultEpochMs, tt.at); got != tt.want {
				t.Errorf("%v: Exhausted at %s = %v, want %v (the range ends at %s)", l, tt.at.UTC().Format(time.RFC3339Nano), got, tt.want, end)
			}
		}
	}
}
