package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/snowflake"
)

// sonyflakeLayout is sonyflake's: 39 bits of 10 ms, then 8 of sequence,
// then 16 of worker (machine) id.
var sonyflakeLayout = snowflake.Layout{Unit: 10 * time.Millisecond, TimeBits: 39, WorkerBits: 16, SequenceBits: 8,
	Order: snowflake.TimeSequenceWorker}

func TestSnowflakeLayoutFlags(t *testing.T) {
	tests := []struct {
		name    string
		env     env
		args    []string
		want    snowflake.Layout // when accepted
		wantErr string           // in the usage error; empty: accepted
		invalid bool             // the error wraps snowflake.ErrInvalidSettings
	}{
		{name: "default", want: snowflake.DefaultLayout()},
		{name: "more sequence", args: []string{"--snowflake-layout", "41,8,14"},
			want: snowflake.Layout{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 8, SequenceBits: 14}},
		{name: "seconds", args: []string{"--snowflake-time-unit", "s", "--snowflake-layout", "31,10,22"},
			want: snowflake.Layout{Unit: time.Second, TimeBits: 31, WorkerBits: 10, SequenceBits: 22}},
		{name: "53 bits, spaces", args: []string{"--snowflake-layout", "41, 5, 7", "--snowflake-worker-id", "31"},
			want: snowflake.Layout{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 5, SequenceBits: 7}},
		{name: "from the environment", env: env{"LEAF_SNOWFLAKE_LAYOUT": "36,10,17", "LEAF_SNOWFLAKE_TIME_UNIT": "s"},
			want: snowflake.Layout{Unit: time.Second, TimeBits: 36, WorkerBits: 10, SequenceBits: 17}},
		{name: "flag over the environment", env: env{"LEAF_SNOWFLAKE_LAYOUT": "nonsense"}, args: []string{"--snowflake-layout", "41,10,12"},
			want: snowflake.DefaultLayout()},
		{name: "range run out, snowflake off", args: []string{"--snowflake-layout", "35,16,12", "--snowflake=false"},
			want: snowflake.Layout{Unit: time.Millisecond, TimeBits: 35, WorkerBits: 16, SequenceBits: 12}},
		{name: "sonyflake's", args: []string{"--snowflake-time-unit", "10ms", "--snowflake-layout", "39,16,8", "--snowflake-order", "time,sequence,worker",
			"--snowflake-worker-id", "65535"}, want: sonyflakeLayout},
		{name: "sonyflake's from the environment", env: env{"LEAF_SNOWFLAKE_TIME_UNIT": "10ms", "LEAF_SNOWFLAKE_LAYOUT": "39,16,8",
			"LEAF_SNOWFLAKE_ORDER": " time, sequence ,worker"}, want: sonyflakeLayout},
		{name: "Leaf's order said", args: []string{"--snowflake-order", "time,worker,sequence"}, want: snowflake.DefaultLayout()},
		{name: "10 ms in Leaf's order", args: []string{"--snowflake-time-unit", "10ms", "--snowflake-layout", "44,5,14"},
			want: snowflake.Layout{Unit: 10 * time.Millisecond, TimeBits: 44, WorkerBits: 5, SequenceBits: 14}},

		{name: "sum 62", args: []string{"--snowflake-layout", "41,10,11"}, invalid: true,
			wantErr: "--snowflake-layout 41,10,11 --snowflake-time-unit ms: invalid snowflake settings: 41 time + 10 worker + 11 sequence bits make 62: want 63"},
		{name: "a field 0", args: []string{"--snowflake-layout", "41,0,22"}, invalid: true, wantErr: "0 worker bits: want 1 to 16"},
		{name: "time too wide for seconds", args: []string{"--snowflake-time-unit", "s", "--snowflake-layout", "41,10,12"}, invalid: true,
			wantErr: "41 time bits: want 1 to 37 with seconds"},
		{name: "two fields", args: []string{"--snowflake-layout", "41,22"}, wantErr: `--snowflake-layout 41,22: want the bits of time, worker id and sequence as T,W,S`},
		{name: "not a number", env: env{"LEAF_SNOWFLAKE_LAYOUT": "41,ten,12"}, wantErr: `LEAF_SNOWFLAKE_LAYOUT=41,ten,12: ten is not a number of bits`},
		{name: "time too wide for 10 ms", args: []string{"--snowflake-time-unit", "10ms", "--snowflake-layout", "45,2,16"}, invalid: true,
			wantErr: "45 time bits: want 1 to 44 with 10-millisecond units"},
		{name: "the order in the message", args: []string{"--snowflake-time-unit", "10ms", "--snowflake-layout", "39,16,7", "--snowflake-order", "time,sequence,worker"},
			invalid: true, wantErr: "--snowflake-layout 39,16,7 --snowflake-time-unit 10ms --snowflake-order time,sequence,worker: invalid snowflake settings: 39 time + 16 worker + 7 sequence bits make 62"},
		{name: "unknown unit", args: []string{"--snowflake-time-unit", "minutes"},
			wantErr: `--snowflake-time-unit minutes: want ms (milliseconds), 10ms (10-millisecond units) or s (seconds)`},
		{name: "unknown order", args: []string{"--snowflake-order", "worker,time,sequence"},
			wantErr: `--snowflake-order worker,time,sequence: want time,worker,sequence (Leaf's) or time,sequence,worker (sonyflake's); the time is always on top`},
		{name: "unknown order in the environment", env: env{"LEAF_SNOWFLAKE_ORDER": "sonyflake"}, wantErr: `LEAF_SNOWFLAKE_ORDER=sonyflake: want time,worker,sequence`},
		{name: "worker id beyond 16 bits", args: []string{"--snowflake-time-unit", "10ms", "--snowflake-layout", "39,16,8", "--snowflake-order", "time,sequence,worker",
			"--snowflake-worker-id", "65536"},
			wantErr: "--snowflake-worker-id 65536: want -1 or 0..65535 (16 worker bits in --snowflake-layout 39,16,8 --snowflake-time-unit 10ms --snowflake-order time,sequence,worker)"},
		{name: "unknown unit in the environment", env: env{"LEAF_SNOWFLAKE_TIME_UNIT": "us"}, wantErr: `LEAF_SNOWFLAKE_TIME_UNIT=us: want ms`},
		{name: "worker id beyond the layout's", args: []string{"--snowflake-layout", "41,5,7", "--snowflake-worker-id", "32"},
			wantErr: "--snowflake-worker-id 32: want -1 or 0..31 (5 worker bits in --snowflake-layout 41,5,7"},
		{name: "lease too short", args: []string{"--snowflake-lease", "1s"}, wantErr: "--snowflake-lease 1s: want 3s..10m0s"},
		{name: "lease too long", env: env{"LEAF_SNOWFLAKE_LEASE": "1h"}, wantErr: "--snowflake-lease 1h0m0s: want 3s..10m0s"},
		{name: "lease not a duration", args: []string{"--snowflake-lease", "60"}, wantErr: "--snowflake-lease"},
		{name: "range run out", args: []string{"--snowflake-layout", "35,16,12"},
			wantErr: "--snowflake-epoch 1288834974657 with --snowflake-layout 35,16,12 --snowflake-time-unit ms: the 35-bit time field ran out at 2011-12-06T18:05:13.025Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newApp(tt.args, tt.env.get, io.Discard)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if a.cfg.Layout != tt.want {
					t.Fatalf("layout %+v, want %+v", a.cfg.Layout, tt.want)
				}
				return
			}
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("newApp(%q) = %v, want a usage error with %q", tt.args, err, tt.wantErr)
			}
			if tt.invalid != errors.Is(err, snowflake.ErrInvalidSettings) {
				t.Errorf("newApp(%q) = %v: wraps ErrInvalidSettings: %v, want %v", tt.args, err, !tt.invalid, tt.invalid)
			}
		})
	}
}

// A serve whose layout is refused opens nothing: no store file, no port.
func TestServeRefusesBadLayoutBeforeOpening(t *testing.T) {
	for _, args := range [][]string{
		{"--snowflake-layout", "41,10,10"},
		{"--snowflake-layout", "41,10,12", "--snowflake-time-unit", "s"},
		{"--snowflake-layout", "35,16,12"}, // ran out in 2011
		{"--snowflake-layout", "41,5,7", "--snowflake-worker-id", "100"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			inEmptyDir(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), env{}.get, io.Discard, io.Discard)
			if !errors.Is(err, errUsage) {
				t.Fatalf("serve %q = %v, want a usage error", args, err)
			}
		})
	}
}

// sonyflakeArgs are the flags of sonyflake's layout, as docs/snowflake.md
// gives them.
var sonyflakeArgs = []string{"--snowflake-time-unit", "10ms", "--snowflake-layout", "39,16,8", "--snowflake-order", "time,sequence,worker"}

// TestServeLayouts: ids served at a layout other than Leaf's decode by it,
// on the route and by hand; the metrics and the status show its end.
func TestServeLayouts(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		layout snowflake.Layout
		worker int64 // -1: leased
	}{
		{name: "53 bits, leased", args: []string{"--snowflake-layout", "41,5,7"},
			layout: snowflake.Layout{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 5, SequenceBits: 7}, worker: -1},
		{name: "seconds, fixed worker id", args: []string{"--snowflake-time-unit", "s", "--snowflake-layout", "31,10,22", "--snowflake-worker-id", "1023"},
			layout: snowflake.Layout{Unit: time.Second, TimeBits: 31, WorkerBits: 10, SequenceBits: 22}, worker: 1023},
		{name: "sonyflake's, leased", args: sonyflakeArgs, layout: sonyflakeLayout, worker: -1},
		{name: "sonyflake's, fixed worker id", args: append([]string{"--snowflake-worker-id", "65535"}, sonyflakeArgs...),
			layout: sonyflakeLayout, worker: 65535},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := startApp(t, env{"LEAF_SQLITE_PATH": filepath.Join(t.TempDir(), "leaf.db")}, append(tt.args, "--segment=false")...)
			l := tt.layout
			var last int64
			for i := range 300 {
				before := time.Now()
				code, body := testkit.MustGet(t, a.base+"/api/snowflake/get")
				if code != 200 {
					t.Fatalf("get = %d %s", code, body)
				}
				id, err := strconv.ParseInt(body, 10, 64)
				if err != nil || id <= last || id > l.MaxID() {
					t.Fatalf("id %q after %d: want a number above it, at most %d", body, last, l.MaxID())
				}
				last = id
				if i%50 != 0 {
					continue
				}
				code, body = testkit.MustGet(t, a.base+"/api/snowflake/decode/"+strconv.FormatInt(id, 10))
				idText := strconv.FormatInt(id, 10)
				var d struct {
					ID          string `json:"id"`
					TimestampMs int64  `json:"timestamp_ms"`
					Time        string `json:"time"`
					WorkerID    int64  `json:"worker_id"`
					Sequence    int64  `json:"sequence"`
				}
				if err := json.Unmarshal([]byte(body), &d); code != 200 || err != nil {
					t.Fatalf("decode = %d %s (%v)", code, body, err)
				}
				// The layout by hand: T bits of time, then W of worker and S
				// of sequence, or S of sequence and W of worker.
				s, w := uint(l.SequenceBits), uint(l.WorkerBits)
				wantMs := snowflake.DefaultEpochMs + id>>(w+s)*l.Unit.Milliseconds()
				wantWorker, wantSeq := id>>s&(1<<w-1), id&(1<<s-1)
				if l.Order == snowflake.TimeSequenceWorker {
					wantWorker, wantSeq = id&(1<<w-1), id>>w&(1<<s-1)
				}
				if d.ID != idText || d.TimestampMs != wantMs || d.WorkerID != wantWorker || d.Sequence != wantSeq ||
					d.Time != time.UnixMilli(wantMs).UTC().Format("2006-01-02T15:04:05.000Z07:00") {
					t.Fatalf("decode(%d) = %+v, want ms %d worker %d sequence %d", id, d, wantMs, wantWorker, wantSeq)
				}
				if tt.worker >= 0 && d.WorkerID != tt.worker {
					t.Fatalf("worker id %d, want %d", d.WorkerID, tt.worker)
				}
				if got := time.UnixMilli(d.TimestampMs); got.After(time.Now()) || got.Before(before.Add(-l.Unit-time.Second)) {
					t.Fatalf("id of %s issued at %s", got, before)
				}
			}

			end := l.End(snowflake.DefaultEpochMs)
			_, metrics := testkit.MustGet(t, a.base+"/metrics")
			wantGauge := "leaf_snowflake_epoch_end_timestamp_seconds " + strconv.FormatFloat(float64(end.UnixMilli())/1000, 'g', -1, 64)
			if !strings.Contains(metrics, wantGauge) {
				t.Errorf("/metrics lacks %q", wantGauge)
			}
			_, status := testkit.MustGet(t, a.base+"/status.json")
			if !strings.Contains(status, `"epoch_exhausts":"`+end.Format("2006-01-02T15:04:05.000Z07:00")+`"`) {
				t.Errorf("/status.json does not show the end %s: %s", end, status)
			}
			order := map[snowflake.Order]string{snowflake.TimeWorkerSequence: "time,worker,sequence", snowflake.TimeSequenceWorker: "time,sequence,worker"}[l.Order]
			wantLayout := fmt.Sprintf(`"layout":{"time_unit":"%s","time_bits":%d,"worker_bits":%d,"sequence_bits":%d,"order":"%s","ids_per_second":%d}`,
				map[time.Duration]string{time.Millisecond: "ms", 10 * time.Millisecond: "10ms", time.Second: "s"}[l.Unit],
				l.TimeBits, l.WorkerBits, l.SequenceBits, order, l.IDsPerSecond())
			if !strings.Contains(status, wantLayout) {
				t.Errorf("/status.json lacks %s: %s", wantLayout, status)
			}
			_, page := testkit.MustGet(t, a.base+"/status")
			fields := fmt.Sprintf("%d + %d + %d bits", l.TimeBits, l.WorkerBits, l.SequenceBits)
			if l.Order == snowflake.TimeSequenceWorker {
				fields = fmt.Sprintf("%d + %d + %d bits", l.TimeBits, l.SequenceBits, l.WorkerBits)
			}
			if !strings.Contains(html.UnescapeString(page), fields) {
				t.Errorf("/status lacks %q", fields)
			}

			// An id above the layout's bits is not one of its ids.
			if l.Bits() < snowflake.IDBits {
				code, body := testkit.MustGet(t, a.base+"/api/snowflake/decode/"+strconv.FormatInt(l.MaxID()+1, 10))
				if code != 400 || !strings.Contains(body, "invalid_id") {
					t.Errorf("decode of 2^%d = %d %s, want 400 invalid_id", l.Bits(), code, body)
				}
			}
		})
	}
}

// --snowflake-lease reaches the server's configuration, from the flag or
// its variable, the default when neither is given.
func TestSnowflakeLeaseFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  env
		want time.Duration
	}{
		{want: snowflake.DefaultLeaseTTL},
		{args: []string{"--snowflake-lease", "90s"}, want: 90 * time.Second},
		{env: env{"LEAF_SNOWFLAKE_LEASE": "2m"}, want: 2 * time.Minute},
	} {
		a, err := newApp(tt.args, tt.env.get, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.cfg.SnowflakeLease; got != tt.want {
			t.Errorf("%q %v: SnowflakeLease %v, want %v", tt.args, tt.env, got, tt.want)
		}
	}
}
