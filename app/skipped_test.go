package app

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/store"
)

// TestSkippedCounted: every skip this process knows of is counted in
// leaf_ids_skipped_total by tag and cause, and logged: an ordered tag's
// numbers held when its lease was lost (at WARN), a period's tail (INFO),
// the jump of a fence (the --failover-jump), none for a fence that failed.
func TestSkippedCounted(t *testing.T) {
	var buf bytes.Buffer
	cfg := testConfig(t)
	cfg.FailoverJump = 1000
	a := New(cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	a.logSkipped(sequence.Event{Kind: "skipped", Space: "orders", Row: "orders", First: 4, Count: 97, Cause: sequence.SkipLeaseLost})
	a.logSkipped(sequence.Event{Kind: "skipped", Space: "inv", Row: "inv@20261207", First: 51, Count: 50, Cause: sequence.SkipPeriodEnd})
	a.logRegression(segment.Regression{Tag: "plain", High: 200, Found: 100, MaxID: 1300})
	a.logRegression(segment.Regression{Tag: "plain", High: 200, Found: 100, Err: errors.New("store down")})
	a.restartLogger("")(store.RestartJump{Jump: 1000, Rows: 3, Sections: 2})
	for _, c := range []struct {
		tag, cause string
		want       float64
	}{
		{"orders", sequence.SkipLeaseLost, 97},
		{"inv", sequence.SkipPeriodEnd, 50},
		{"plain", skipFenceJump, 1000},
		{everyRow, skipRestartJump, 5000},
	} {
		if got := testutil.ToFloat64(a.skips.WithLabelValues(c.tag, c.cause)); got != c.want {
			t.Errorf("leaf_ids_skipped_total{tag=%q,cause=%q} = %v, want %v", c.tag, c.cause, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(a.skips); n != 4 {
		t.Errorf("%d series, want 4", n)
	}
	out := buf.String()
	for _, want := range []string{
		`level=WARN msg="sequences: numbers of an ordered tag skipped" tag=orders row=orders from=4 ids=97 cause=lease_lost`,
		`level=INFO msg="sequences: the unused numbers of a period's range are never issued" tag=inv row=inv@20261207 from=51 ids=50 cause=period_end`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
}
