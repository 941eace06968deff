package faults

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Histories and their checker. Every call of a scenario is an operation
// with its invocation and completion on the scenario's monotonic clock and
// the numbers it was answered; Porcupine checks the history against a
// sequential model of what the kind promises:
//
//   - counterModel, for the ordered kinds (ordered, capped and formatted
//     ordered tags, per-key sequences): one counter per group (a tag, a
//     key) that only grows; a call takes lo..hi, all above every number
//     taken before it in the linearization. So a number answered after
//     another call returned is larger, and calls that overlap in time are
//     still held to one order among themselves.
//   - setModel, for every kind: the numbers taken so far, a set that fails
//     on any number seen twice.
//
// A call that got no answer (cut off, refused by every instance) is left
// out: it may have taken numbers no one saw, and both models accept that,
// since a counter may skip numbers and a set need not hold every one; so
// a read of the counter may answer above the model's top, never below.

// counterTake is the output of a call of an ordered kind: lo..hi, in the
// kind's order.
type counterTake struct{ lo, hi int64 }

// counterIn is the input of a call of an ordered kind: its group, and
// whether it reads the counter (a sequence's current) rather than takes.
type counterIn struct {
	group int64
	read  bool
}

var counterModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		return partitionBy(h, func(op porcupine.Operation) int64 { return op.Input.(counterIn).group })
	},
	Init: func() any { return int64(-1) << 62 },
	Step: func(state, input, output any) (bool, any) {
		top, t := state.(int64), output.(counterTake)
		if input.(counterIn).read {
			// A read answers the top; numbers taken by calls left out
			// may have raised it past what the model holds.
			if t.lo < top {
				return false, state
			}
			return true, t.lo
		}
		if t.lo <= top || t.hi < t.lo {
			return false, state
		}
		return true, t.hi
	},
	DescribeOperation: func(in, out any) string {
		t := out.(counterTake)
		switch {
		case in.(counterIn).read:
			return fmt.Sprintf("read → %d", t.lo)
		case t.lo == t.hi:
			return fmt.Sprintf("take → %d", t.lo)
		}
		return fmt.Sprintf("take → %d..%d", t.lo, t.hi)
	},
	DescribeState: func(state any) string {
		if top := state.(int64); top != int64(-1)<<62 {
			return fmt.Sprintf("top %d", top)
		}
		return "none taken"
	},
	DescribeOperationMetadata: func(info any) string { s, _ := info.(string); return s },
}

// valSpan is the numbers lo..hi of one group (a key; a formatted kind's
// texts are numbered), as the set model holds them.
type valSpan struct{ group, lo, hi int64 }

func compareSpan(a, b valSpan) int {
	if c := cmp.Compare(a.group, b.group); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

// setBlockBits: the set model's history is partitioned by blocks of 2^10
// numbers of a group, a span cut at their bounds, so that each state is
// small; a number seen twice is seen twice within its block.
const setBlockBits = 10

var setModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		type part struct {
			key valSpan // group and block
			ops []porcupine.Operation
		}
		index := map[valSpan]int{}
		var parts []part
		for _, op := range h {
			mine := map[valSpan][]valSpan{}
			var order []valSpan
			for _, s := range op.Output.([]valSpan) {
				for lo := s.lo; lo <= s.hi; {
					b := lo >> setBlockBits
					hi := min(s.hi, (b+1)<<setBlockBits-1)
					k := valSpan{group: s.group, lo: b}
					if _, ok := mine[k]; !ok {
						order = append(order, k)
					}
					mine[k] = append(mine[k], valSpan{s.group, lo, hi})
					if hi == s.hi {
						break
					}
					lo = hi + 1
				}
			}
			for _, k := range order {
				i, ok := index[k]
				if !ok {
					i = len(parts)
					index[k] = i
					parts = append(parts, part{key: k})
				}
				piece := op
				piece.Output = mine[k]
				parts[i].ops = append(parts[i].ops, piece)
			}
		}
		out := make([][]porcupine.Operation, len(parts))
		for i, p := range parts {
			out[i] = p.ops
		}
		return out
	},
	Init: func() any { return []valSpan(nil) },
	Step: func(state, _, output any) (bool, any) {
		next := state.([]valSpan)
		for _, s := range output.([]valSpan) {
			var ok bool
			if next, ok = insertSpan(next, s); !ok {
				return false, state
			}
		}
		return true, next
	},
	Equal: func(a, b any) bool { return slices.Equal(a.([]valSpan), b.([]valSpan)) },
	Hash: func(state any) uint64 {
		h := uint64(14695981039346656037)
		for _, s := range state.([]valSpan) {
			for _, x := range [3]int64{s.group, s.lo, s.hi} {
				h = (h ^ uint64(x)) * 1099511628211
			}
		}
		return h
	},
	DescribeOperation: func(in, out any) string {
		var parts []string
		for _, s := range out.([]valSpan) {
			if s.lo == s.hi {
				parts = append(parts, fmt.Sprint(s.lo))
			} else {
				parts = append(parts, fmt.Sprintf("%d..%d", s.lo, s.hi))
			}
		}
		return "take → " + strings.Join(parts, ",")
	},
	DescribeState:             func(state any) string { return fmt.Sprintf("%d spans taken", len(state.([]valSpan))) },
	DescribeOperationMetadata: func(info any) string { s, _ := info.(string); return s },
}

// insertSpan is spans (sorted, disjoint) with s added, a new slice, joined
// to a neighbour it continues; false if s holds a number spans hold.
func insertSpan(spans []valSpan, s valSpan) ([]valSpan, bool) {
	if s.hi < s.lo {
		return spans, false
	}
	i, _ := slices.BinarySearchFunc(spans, s, compareSpan)
	if i > 0 && spans[i-1].group == s.group && spans[i-1].hi >= s.lo {
		return spans, false
	}
	if i < len(spans) && spans[i].group == s.group && spans[i].lo <= s.hi {
		return spans, false
	}
	joinLeft := i > 0 && spans[i-1].group == s.group && spans[i-1].hi+1 == s.lo
	joinRight := i < len(spans) && spans[i].group == s.group && s.hi+1 == spans[i].lo
	out := make([]valSpan, 0, len(spans)+1)
	switch {
	case joinLeft && joinRight:
		out = append(append(append(out, spans[:i-1]...), valSpan{s.group, spans[i-1].lo, spans[i].hi}), spans[i+1:]...)
	case joinLeft:
		out = append(append(append(out, spans[:i-1]...), valSpan{s.group, spans[i-1].lo, s.hi}), spans[i:]...)
	case joinRight:
		out = append(append(append(out, spans[:i]...), valSpan{s.group, s.lo, spans[i].hi}), spans[i+1:]...)
	default:
		out = append(append(append(out, spans[:i]...), s), spans[i:]...)
	}
	return out, true
}

// partitionBy splits a history by key, each part in the history's order.
func partitionBy(h []porcupine.Operation, key func(porcupine.Operation) int64) [][]porcupine.Operation {
	index := map[int64]int{}
	var out [][]porcupine.Operation
	for _, op := range h {
		k := key(op)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], op)
	}
	return out
}

// historyOp is one call as the checker reads it.
type historyOp struct {
	start, end time.Duration
	in, out    any
	about      string // who answered, for the visualization
}

// historyOf makes Porcupine's operations of calls, each on the lane of a
// client (for the visualization: no two overlapping calls on one lane).
func historyOf(calls []historyOp) []porcupine.Operation {
	sorted := slices.Clone(calls)
	slices.SortStableFunc(sorted, func(a, b historyOp) int { return cmp.Compare(a.start, b.start) })
	var laneEnd []time.Duration
	ops := make([]porcupine.Operation, len(sorted))
	for i, c := range sorted {
		lane := slices.IndexFunc(laneEnd, func(end time.Duration) bool { return end < c.start })
		if lane < 0 {
			lane = len(laneEnd)
			laneEnd = append(laneEnd, 0)
		}
		laneEnd[lane] = c.end
		ops[i] = porcupine.Operation{ClientId: lane, Input: c.in, Call: int64(c.start), Output: c.out, Return: int64(c.end), Metadata: c.about}
	}
	return ops
}

// historyVerdict is what the checker said of one history.
type historyVerdict struct {
	model  string
	ops    int
	result porcupine.CheckResult
	took   time.Duration
	// file is a failing part of the history, drawn by Porcupine (HTML).
	file string
}

func (v historyVerdict) String() string {
	s := fmt.Sprintf("%s model: %s, %d operations checked in %v", v.model, v.result, v.ops, v.took.Round(time.Millisecond))
	if v.file != "" {
		s += "; the failing part of the history: " + v.file
	}
	return s
}

// checkerTimeout bounds one check; past it the verdict is Unknown, which
// fails as Illegal does.
const checkerTimeout = 5 * time.Minute

// checkHistory checks ops against model and, when they are not
// linearizable, draws the smallest failing part it finds into a file
// named after the test and name, and says where.
func checkHistory(tb testing.TB, name, modelName string, model porcupine.Model, ops []porcupine.Operation) historyVerdict {
	start := time.Now()
	res := porcupine.CheckOperationsTimeout(model, ops, checkerTimeout)
	v := historyVerdict{model: modelName, ops: len(ops), result: res, took: time.Since(start)}
	if res != porcupine.Ok {
		v.file = drawFailure(tb, name+"_"+modelName, model, ops)
	}
	return v
}

// checkModel checks calls against model (named modelName: "set",
// "counter") as checkHistory does, and puts the verdict on r: the
// operations checked, the time the check took, and a bound that fails
// unless the history is linearizable.
func (r *report) checkModel(modelName string, model porcupine.Model, calls []historyOp) {
	r.tb.Helper()
	v := checkHistory(r.tb, r.scenario, modelName, model, historyOf(calls))
	r.add(modelName+"_checked", v.ops)
	r.add(modelName+"_check", v.took)
	r.bound(modelName+"_model", v.result == porcupine.Ok, "%v", v)
}

// drawFailure finds a part of the history that fails on its own (a
// partition, then the shortest prefix of it by invocation, then the
// fewest last calls of that prefix) and draws it with Porcupine into a
// file under LEAF_HISTORIES (default: the system's temporary directory,
// leaf-histories), returning its path.
func drawFailure(tb testing.TB, name string, model porcupine.Model, ops []porcupine.Operation) string {
	fails := func(part []porcupine.Operation) bool {
		return porcupine.CheckOperationsTimeout(model, part, checkerTimeout) != porcupine.Ok
	}
	part := ops
	for _, p := range model.Partition(ops) {
		if fails(p) {
			part = p
			break
		}
	}
	part = slices.Clone(part)
	slices.SortStableFunc(part, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	lo, hi := 1, len(part)
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(part[:mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	part = part[:hi]
	for k := min(len(part), 64); ; k = min(len(part), 2*k) {
		if fails(part[len(part)-k:]) || k == len(part) {
			part = part[len(part)-k:]
			break
		}
	}
	_, info := porcupine.CheckOperationsVerbose(model, part, checkerTimeout)
	dir := os.Getenv("LEAF_HISTORIES")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "leaf-histories")
	}
	path := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name()+"_"+name)+".html")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Logf("history: %v", err)
		return ""
	}
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		tb.Logf("history: %v", err)
		return ""
	}
	tb.Logf("history %s: %d operations that fail on their own, drawn in %s", name, len(part), path)
	return path
}
