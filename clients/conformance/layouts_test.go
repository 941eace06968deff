package conformance_test

import (
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/snowflake"
)

// layouts.json holds, for layouts of every unit, width and order, the
// bounds of intervals of time and ids taken apart, as the server computes
// them: every client's own tests read it and compute the same without a
// call (its SnowflakeLayout). TestLayoutVectors holds the file to the
// server's package snowflake and to the Go client; LEAF_WRITE_LAYOUTS=1
// writes it anew.

type layoutVector struct {
	Layout struct {
		TimeUnit     string `json:"time_unit"`
		TimeBits     int    `json:"time_bits"`
		WorkerBits   int    `json:"worker_bits"`
		SequenceBits int    `json:"sequence_bits"`
		Order        string `json:"order"`
		EpochMs      int64  `json:"epoch_ms"`
	} `json:"layout"`
	Bounds []boundsVector `json:"bounds"`
	Decode []decodeVector `json:"decode"`
}

// boundsVector is an interval in Unix milliseconds and its bounds; both
// empty when the interval holds no id of the layout (a 400).
type boundsVector struct {
	FromMs  int64  `json:"from_ms"`
	ToMs    int64  `json:"to_ms"`
	Lowest  string `json:"lowest,omitempty"`
	Highest string `json:"highest,omitempty"`
}

type decodeVector struct {
	ID       string `json:"id"`
	TimeMs   int64  `json:"time_ms"`
	WorkerID int64  `json:"worker_id"`
	Sequence int64  `json:"sequence"`
}

const layoutsFile = "layouts.json"

var units = map[string]time.Duration{"ms": time.Millisecond, "10ms": 10 * time.Millisecond, "s": time.Second}

func (v *layoutVector) server() snowflake.Layout {
	o, _ := snowflake.ParseOrder(v.Layout.Order)
	return snowflake.Layout{Unit: units[v.Layout.TimeUnit], TimeBits: v.Layout.TimeBits, WorkerBits: v.Layout.WorkerBits,
		SequenceBits: v.Layout.SequenceBits, Order: o}
}

func (v *layoutVector) client() client.SnowflakeLayout {
	return client.SnowflakeLayout{Unit: units[v.Layout.TimeUnit], TimeBits: v.Layout.TimeBits, WorkerBits: v.Layout.WorkerBits,
		SequenceBits: v.Layout.SequenceBits, SequenceAboveWorker: v.Layout.Order == "time,sequence,worker",
		Epoch: time.UnixMilli(v.Layout.EpochMs)}
}

// makeLayouts draws the vectors: the default layout, sonyflake's, the
// JavaScript-safe one of 53 bits, and random ones.
func makeLayouts(t *testing.T) []layoutVector {
	r := rand.New(rand.NewSource(1))
	fixed := []snowflake.Layout{
		snowflake.DefaultLayout(),
		{Unit: 10 * time.Millisecond, TimeBits: 39, WorkerBits: 16, SequenceBits: 8, Order: snowflake.TimeSequenceWorker},
		{Unit: time.Millisecond, TimeBits: 41, WorkerBits: 5, SequenceBits: 7},
		{Unit: time.Second, TimeBits: 31, WorkerBits: 10, SequenceBits: 22},
		{Unit: time.Millisecond, TimeBits: 47, WorkerBits: 6, SequenceBits: 10, Order: snowflake.TimeSequenceWorker},
	}
	var out []layoutVector
	for _, l := range fixed {
		var v layoutVector
		v.Layout.TimeUnit, v.Layout.TimeBits, v.Layout.WorkerBits, v.Layout.SequenceBits = snowflake.UnitSymbol(l.Unit), l.TimeBits, l.WorkerBits, l.SequenceBits
		v.Layout.Order, v.Layout.EpochMs = l.Order.String(), 1_288_834_974_657+r.Int63n(1e12)
		end := l.End(v.Layout.EpochMs).UnixMilli()
		at := func() int64 {
			return v.Layout.EpochMs - (end-v.Layout.EpochMs)/8 + r.Int63n((end-v.Layout.EpochMs)/4*5)
		}
		for i := range 24 {
			from, to := at(), at()
			switch i % 4 {
			case 0:
				to = from + r.Int63n(3*l.Unit.Milliseconds())
			case 1:
				to = from
			}
			b := boundsVector{FromMs: from, ToMs: to}
			if lo, hi, err := l.Bounds(v.Layout.EpochMs, time.UnixMilli(from), time.UnixMilli(to)); err == nil {
				b.Lowest, b.Highest = strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)
			}
			v.Bounds = append(v.Bounds, b)
		}
		g := generator(t, l, v.Layout.EpochMs)
		for range 12 {
			id := r.Int63() & l.MaxID()
			d, err := g.Decode(id)
			if err != nil {
				t.Fatal(err)
			}
			v.Decode = append(v.Decode, decodeVector{ID: strconv.FormatInt(id, 10), TimeMs: d.TimestampMs(), WorkerID: d.WorkerID, Sequence: d.Sequence})
		}
		out = append(out, v)
	}
	return out
}

func generator(t *testing.T, l snowflake.Layout, epochMs int64) *snowflake.Generator {
	t.Helper()
	g, err := snowflake.New(t.Context(), snowflake.Settings{Layout: l, EpochMs: epochMs, Now: func() time.Time { return time.UnixMilli(epochMs) }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLayoutVectors holds layouts.json to the server's computation and
// the Go client's.
func TestLayoutVectors(t *testing.T) {
	if os.Getenv("LEAF_WRITE_LAYOUTS") == "1" {
		b, err := json.MarshalIndent(makeLayouts(t), "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(layoutsFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(layoutsFile)
	if err != nil {
		t.Fatal(err)
	}
	var vs []layoutVector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		sl, cl := v.server(), v.client()
		for _, b := range v.Bounds {
			from, to := time.UnixMilli(b.FromMs), time.UnixMilli(b.ToMs)
			slo, shi, serr := sl.Bounds(v.Layout.EpochMs, from, to)
			clo, chi, cerr := cl.Bounds(from, to)
			want := b.Lowest + ".." + b.Highest
			if b.Lowest == "" {
				want = ".."
			}
			if got := fmtBounds(slo, shi, serr); got != want {
				t.Errorf("%v epoch %d, %d..%d: the server's bounds %s, the file's %s", sl, v.Layout.EpochMs, b.FromMs, b.ToMs, got, want)
			}
			if got := fmtBounds(clo, chi, cerr); got != want || cerr != nil && !errors.Is(cerr, client.ErrInvalidRequest) {
				t.Errorf("%v epoch %d, %d..%d: the Go client's bounds %s (%v), the file's %s", sl, v.Layout.EpochMs, b.FromMs, b.ToMs, got, cerr, want)
			}
		}
		for _, d := range v.Decode {
			id, _ := strconv.ParseInt(d.ID, 10, 64)
			p, err := cl.Decode(id)
			if err != nil || p.Time.UnixMilli() != d.TimeMs || p.WorkerID != d.WorkerID || p.Sequence != d.Sequence {
				t.Errorf("%v: the Go client decodes %d as %+v, %v; the file says %+v", sl, id, p, err, d)
			}
		}
	}
}

func fmtBounds(lo, hi int64, err error) string {
	if err != nil {
		return ".."
	}
	return strconv.FormatInt(lo, 10) + ".." + strconv.FormatInt(hi, 10)
}
