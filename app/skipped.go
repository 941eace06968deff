package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
)

// Numbers never issued. leaf bounds the gaps of every kind (README, "Gaps");
// what this process knows it skipped, it counts by tag and cause in
// leaf_ids_skipped_total and logs: the numbers an ordered or capped tag's
// owner held when it lost its lease, hand-backs that failed, a period's
// unused tail, the jump of a row past a database gone back in time, the
// unused ids of a clean stop that could not go back. A process killed
// cannot count what it held (at most two ranges per tag); that stays the
// bound the README gives.

// Causes of leaf_ids_skipped_total beyond the sequencer's (sequence.Skip*).
const (
	// skipFenceJump: a row moved past a database gone back in time, by
	// --failover-jump: numbers the lost window may have issued elsewhere,
	// counted whole.
	skipFenceJump = "fence_jump"
	// skipStop: the unused ids of a clean stop that could not go back to
	// the row (another instance took a range after them, or the store
	// failed).
	skipStop = "stop"
	// skipRestartJump: every row of a store moved forward by the jump
	// after the database started again and may have forgotten commits:
	// the jump times the rows and sections moved, under everyRow.
	skipRestartJump = "restart_jump"
)

// everyRow is the tag label of a skip of every row at once.
const everyRow = "(every row)"

// opaqueLabel stands for every opaque tag: per tag, the numbers skipped
// would tell how many ids it issues, which its ids hide.
const opaqueLabel = "(opaque)"

func newSkipped() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leaf_ids_skipped_total",
		Help: "Ids (numbers) this process took and never issued, by tag (every opaque tag as \"(opaque)\"; \"(every row)\" for a restart jump) and cause: lease_lost, handback_failed, period_end, fence_jump, restart_jump, stop. A process killed skips what it held uncounted."},
		[]string{"tag", "cause"})
}

// skipped counts n ids of tag skipped for cause.
func (a *Server) skipped(tag, cause string, n int64) {
	if n <= 0 {
		return
	}
	if a.kinds != nil && a.kinds.Opaque(tag) {
		tag = opaqueLabel
	}
	a.skips.WithLabelValues(tag, cause).Add(float64(n))
}

// logSkipped logs and counts an ordered tag's numbers skipped.
func (a *Server) logSkipped(e sequence.Event) {
	a.skipped(e.Space, e.Cause, e.Count)
	args := []any{"tag", e.Space, "row", e.Row, "from", e.First, "ids", e.Count, "cause", e.Cause}
	if e.Cause == sequence.SkipPeriodEnd {
		a.log.Info("sequences: the unused numbers of a period's range are never issued", args...)
		return
	}
	a.log.Warn("sequences: numbers of an ordered tag skipped", args...)
}

// fenceSkipped counts the ids a fence jumped over: from the highest max_id
// this process received to the new range.
func (a *Server) fenceSkipped(r segment.Regression) {
	if r.Err == nil && r.MaxID > r.High {
		a.skipped(r.Tag, skipFenceJump, a.cfg.FailoverJump)
	}
}
