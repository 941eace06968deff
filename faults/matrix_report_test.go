package faults

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The checks and figures of each kind of TestMatrix, once its load has
// stopped: one RESULT line per shape and kind, a BOUND line per bound.

// windowOf is the index of the window that holds at.
// holeSlack is how long before an attempt that skipped numbers a call
// above them may have begun: the longest an owned kind's call waits for
// its owner (--forward-timeout 1s) with room.
const holeSlack = 2 * time.Second

func (m *matrixRun) windowOf(at time.Duration) int {
	i := 0
	for j, w := range m.windows {
		if w.from <= at {
			i = j
		}
	}
	return i
}

// byWindow writes a figure per window: warmup:0,kill1:57,…
func (m *matrixRun) byWindow(f func(i int) string) string {
	parts := make([]string, len(m.windows))
	for i, w := range m.windows {
		parts[i] = w.name + ":" + f(i)
	}
	return strings.Join(parts, ",")
}

// describeCall tells a call apart in a failure message.
func (m *matrixRun) describeCall(kl *kindLoad, i int32) string {
	c := kl.calls[i]
	who := "no instance"
	if c.target >= 0 {
		who = "instance " + m.ins[c.target].name
	}
	what := ""
	if c.key >= 0 {
		what = " key " + kl.keys[c.key]
	}
	return fmt.Sprintf("call %d%s answered by %s, %v to %v", i, what, who, c.start.Round(time.Millisecond), c.end.Round(time.Millisecond))
}

// describeHoles logs up to maxExamples of the holes counted in window w:
// the numbers, the calls right below and above them.
func (m *matrixRun) describeHoles(kl *kindLoad, holes []hole, w int) {
	n := 0
	for _, h := range holes {
		if m.windowOf(kl.calls[h.above].start) != w || n == maxExamples {
			continue
		}
		n++
		below := "none"
		if h.below >= 0 {
			below = m.describeCall(kl, h.below)
		}
		m.t.Logf("%s: numbers %d..%d of group %d never issued; below: %s; above: %s",
			kl.kind.name, h.lo, h.hi, h.group, below, m.describeCall(kl, h.above))
	}
}

// describeLeases logs what each instance said of the leases of space
// (an owned tag's) and of the hand back of its rows' numbers, read by the
// suite at the times shown: who owned it when, for a person to tell a
// bound the suite counted wrong from one the service broke.
func (m *matrixRun) describeLeases(space string) {
	for _, in := range m.ins {
		for _, l := range in.logs.match(func(l logLine) bool {
			row := l.str("row")
			return l.str("space") == space || row == space || strings.HasPrefix(row, space+"@") // a period's row
		}) {
			m.t.Logf("%s (start %d), read at %v: %s", in.name, l.run, m.clk.at(l.at), l.text)
		}
	}
}

func (m *matrixRun) describePairs(kl *kindLoad, pairs [][2]int32) []string {
	var out []string
	for _, p := range pairs {
		out = append(out, m.describeCall(kl, p[0])+" and "+m.describeCall(kl, p[1]))
	}
	return out
}

// reportKind checks a kind's promises and prints its RESULT line.
func (m *matrixRun) reportKind(kl *kindLoad, drained bool) {
	k := kl.kind
	r := newReport(m.t, "matrix_"+m.shape.name+"_"+k.name)
	r.add("created", kl.created)
	if !kl.created {
		r.add("create_error", kl.createErr)
		r.bound("created", false, "%s %s: %s", k.createPath, k.createBody, kl.createErr)
		r.print()
		return
	}
	kl.gather()
	calls := kl.calls
	ids := int64(0)
	for _, v := range kl.values {
		ids += v.hi - v.n + 1
	}
	r.add("calls", len(calls))
	r.add("ids", ids)

	// Answers: 200, a capped period's end (409 sequence_full), no answer
	// from any instance; anything else breaks the contract.
	final := map[string]int{}
	unexpected, bad := 0, 0
	var badEx []string
	for i, c := range calls {
		switch {
		case c.bad:
			bad++
			if len(badEx) < maxExamples {
				badEx = append(badEx, m.describeCall(kl, int32(i))+": "+c.code)
			}
		case c.status == 200:
		case c.status == 0:
			final["none"]++
		case c.status == http.StatusConflict && c.code == "sequence_full" && k.capped > 0:
			final["sequence_full"]++
		default:
			unexpected++
			final[fmt.Sprintf("http_%d_%s", c.status, c.code)]++
			if len(badEx) < maxExamples {
				badEx = append(badEx, fmt.Sprintf("%s in %s: %d %s", m.describeCall(kl, int32(i)), m.windows[m.windowOf(c.start)].name, c.status, strings.TrimSpace(c.msg)))
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(final)) {
		r.add("final_"+key, final[key])
	}
	// An attempt that got no answer within requestTimeout, or a 503
	// without Retry-After, breaks the contract too, even when the next
	// instance answered.
	badAttempts := 0
	for _, f := range kl.fails {
		if f.what == "conn_timeout" || strings.HasSuffix(f.what, "_no_retry_after") {
			badAttempts++
		}
	}
	r.bound("answers", unexpected == 0 && bad == 0 && badAttempts == 0,
		"%d answers other than 200%s and failures to answer, %d answers 200 that break the API's promises, %d attempts that timed out or were 503 without Retry-After (%v)%s",
		unexpected, map[bool]string{true: ", 409 sequence_full", false: ""}[k.capped > 0], bad, badAttempts, final, listed(badEx))

	// None twice.
	var dups int64
	var dupEx [][2]int32
	if k.form == formFormatted {
		texts := make([]textRef, len(kl.values))
		for i, v := range kl.values {
			texts[i] = textRef{text: v.text, call: v.call}
		}
		dups, dupEx = duplicateTexts(texts)
	} else {
		spans := make([]numSpan, len(kl.values))
		for i, v := range kl.values {
			spans[i] = numSpan{group: v.group, lo: v.id, hi: v.id + v.hi - v.n, call: v.call}
		}
		dups, dupEx = duplicateNumbers(spans)
	}
	r.add("duplicates", dups)
	r.bound("duplicates", dups == 0, "%d ids answered twice among %d%s", dups, ids, listed(m.describePairs(kl, dupEx)))

	// Order.
	if k.order != orderNone {
		var oc []orderCall
		slack := time.Duration(0)
		for i, c := range calls {
			if c.status != 200 || c.bad {
				continue
			}
			o := orderCall{start: c.start, end: c.end, lo: c.lo, hi: c.hi, call: int32(i)}
			switch k.order {
			case orderProcess:
				o.group, slack = int64(c.target)*1000+int64(c.run), m.d.orderSlack
			case orderKey:
				o.group = int64(c.key)
			}
			oc = append(oc, o)
		}
		n, ex := orderViolations(oc, slack)
		what := map[orderRule]string{
			orderProcess: fmt.Sprintf("of one process of an instance, ended more than %v before", slack),
			orderFleet:   "of any instance, ended before",
			orderKey:     "for the key, ended before",
		}[k.order]
		r.add("order_violations", n)
		r.bound("order", n == 0, "%d of %d calls got an id not above one a call %s they began got%s",
			n, len(oc), what, listed(m.describePairs(kl, ex)))
	}

	// The same promises, checked by Porcupine over the history of calls.
	m.checkHistories(r, kl)

	// Numbers skipped, per window, and the end of a capped period.
	if k.tag != "" {
		m.checkSkipped(r, kl)
	}
	// Calls that failed, per window.
	m.checkAvailability(r, kl)
	if k.capped > 0 {
		r.bound("capped_end_reached", drained, "the capped period reached its end within %v of the drain: %v", drainMax, drained)
	}
	r.print()
}

// leasesLost counts, per window, the leases of space (an owned tag's, or a
// space's section) that an instance logged as lost.
func (m *matrixRun) leasesLost(space string) []int {
	out := make([]int, len(m.windows))
	for _, in := range m.ins {
		for _, l := range in.logs.match(func(l logLine) bool { return l.msg() == msgSectionLost && l.str("space") == space }) {
			out[m.windowOf(m.clk.at(l.at))]++
		}
	}
	return out
}

// checkSkipped counts the numbers of each row (each period, each key)
// never issued below its highest, by the window of the call that got the
// number above them, and bounds them for the dense kinds.
func (m *matrixRun) checkSkipped(r *report, kl *kindLoad) {
	k := kl.kind
	spans := make([]numSpan, len(kl.values))
	for i, v := range kl.values {
		spans[i] = numSpan{group: v.group, lo: v.n, hi: v.hi, call: v.call}
	}
	base := func(group int64) int64 {
		switch {
		case k.form == formKeyed:
			return 0 // a key's first number is its section's max_seq then
		case k.capped > 0 && group == m.cappedDay:
			return m.cappedBase
		}
		return 1
	}
	floor, block := int64(0), int64(0)
	if k.order == orderProcess { // a plain tag: striped over the stores
		floor, block = m.d.floor, m.d.block
	}
	holes := findHoles(spans, base, floor, block)
	per := make([]int64, len(m.windows))
	var total int64
	for _, h := range holes {
		per[m.windowOf(kl.calls[h.above].start)] += h.size()
		total += h.size()
	}
	r.add("skipped", total)
	r.add("skipped_by_window", m.byWindow(func(i int) string { return strconv.FormatInt(per[i], 10) }))
	if !k.dense {
		return
	}
	// The numbers of calls cut off mid-way (the connection reset, the
	// answer lost, or a forward to the owner that got no answer in time:
	// a 503 of the instance forwarding) may have been issued and never
	// received: each such attempt may skip the numbers it asked for,
	// whoever owned the tag. An attempt refused before it was sent may
	// not (one sent on a kept-alive connection and then sent again to a
	// refused dial is conn_refused_after_sent).
	// A hole is counted in the window where the call above it began,
	// which may be the window before the attempt that skipped it (a call
	// above it already waiting) or after it (the attempt cut off by the
	// fault that opened the next window): each attempt allows its numbers
	// in every window from holeSlack before it began to when it failed.
	inFlight := make([]int64, len(m.windows))
	for _, f := range kl.fails {
		if f.what != "conn_refused" {
			for i := m.windowOf(f.at - holeSlack); i <= m.windowOf(f.end); i++ {
				inFlight[i] += int64(f.count)
			}
		}
	}
	// An owner lost: the owner killed, and every lease an instance logged
	// as lost (an outage may cost the owner its lease, and its heir too
	// while a cluster reconfigures).
	losses := m.leasesLost(k.tag)
	allowed := make([]int64, len(m.windows))
	for i, w := range m.windows {
		owners := losses[i]
		if w.lost[k.name] && (w.fault == "kill" || w.fault == "pause") {
			owners++
		}
		if w.lost[k.name] && w.fault == "outage" {
			owners = max(owners, 1)
		}
		// An owner lost loses the rest of its range and the range it
		// loaded ahead: two steps, near the database (the suite's).
		allowed[i] = 2*k.step*int64(owners) + inFlight[i]
		r.bound("skipped_"+w.name, per[i] <= allowed[i],
			"%d numbers skipped in %s (%s of %s), want at most %d: two steps of %d (a range and the one loaded ahead) for each of the %d owners lost, and the %d numbers of calls cut off mid-way, none else",
			per[i], w.name, cmpOr(w.fault, "no fault"), cmpOr(w.victim, "-"), allowed[i], k.step, owners, inFlight[i])
		if per[i] > allowed[i] {
			m.describeHoles(kl, holes, i)
			m.describeLeases(k.tag)
		}
	}
	if k.capped == 0 {
		return
	}
	// A capped period is refused as full only once every number of it
	// was issued, or skipped within the bounds above.
	var first *mcall
	for i := range kl.calls {
		c := &kl.calls[i]
		if c.status == http.StatusConflict && c.code == "sequence_full" && (first == nil || c.end < first.end) {
			first = c
		}
	}
	r.add("full_refusals", func() int {
		n := 0
		for _, c := range kl.calls {
			if c.status == http.StatusConflict && c.code == "sequence_full" {
				n++
			}
		}
		return n
	}())
	if first == nil {
		r.add("first_full_missing", "none refused")
		return
	}
	day := m.clk.day(first.start)
	var issued []numSpan
	for _, v := range kl.values {
		if v.group == day && kl.calls[v.call].start < first.end {
			issued = append(issued, numSpan{group: day, lo: v.n, hi: v.hi, call: v.call})
		}
	}
	from := base(day)
	want := k.capped - from + 1
	got := int64(0)
	for _, h := range findHoles(append(issued, numSpan{group: day, lo: k.capped + 1, hi: k.capped + 1, call: -1}), base, 0, 0) {
		got += h.size()
	}
	got = want - got // the numbers from..capped issued before the refusal ended
	var mayMiss int64
	for i, w := range m.windows {
		if w.from < first.end {
			mayMiss += allowed[i]
		}
	}
	r.add("first_full_at_ms", first.start)
	r.add("first_full_missing", want-got)
	r.bound("full_at_the_end", want-got <= mayMiss,
		"the period %d was first refused as full at %v with %d of its numbers %d..%d not issued, want at most %d (the steps of owners lost before)",
		day, first.start.Round(time.Millisecond), want-got, from, k.capped, mayMiss)
}

// checkAvailability counts the calls no instance answered and the
// attempts that failed, per window, measures each window's longest time
// without an answer 200 (per section for sequences), and bounds them: no
// failed call for the kinds every instance serves; the owned kinds
// answer again within about a lease of their owner's death.
func (m *matrixRun) checkAvailability(r *report, kl *kindLoad) {
	k := kl.kind
	n := len(m.windows)
	failed := make([]int, n)
	attempts := make([]map[string]int, n)
	for i := range attempts {
		attempts[i] = map[string]int{}
	}
	var ans []answered
	for _, c := range kl.calls {
		if c.status == 0 {
			failed[m.windowOf(c.end)]++ // by its end: a call under way when a fault began failed of it
		}
		if c.status == 200 || c.status == 0 {
			ans = append(ans, answered{unit: kl.unit(c), start: c.start, end: c.end, ok: c.status == 200})
		}
	}
	for _, f := range kl.fails {
		who := "other"
		if w := m.windows[m.windowOf(f.at)]; w.victim == m.ins[f.target].name {
			who = "victim"
		}
		attempts[m.windowOf(f.at)][who+"_"+f.what]++
	}
	r.add("failed_by_window", m.byWindow(func(i int) string { return strconv.Itoa(failed[i]) }))
	r.add("attempts_failed", m.byWindow(func(i int) string {
		var parts []string
		for _, key := range slices.Sorted(maps.Keys(attempts[i])) {
			parts = append(parts, fmt.Sprintf("%s=%d", key, attempts[i][key]))
		}
		return cmpOr(strings.Join(parts, "/"), "0")
	}))
	gaps := make([]time.Duration, n)
	for i, w := range m.windows {
		gaps[i] = longestGap(ans, w.from, w.to)
	}
	r.add("gap_ms_by_window", m.byWindow(func(i int) string { return fmt.Sprintf("%.0f", float64(gaps[i])/float64(time.Millisecond)) }))
	for i, w := range m.windows {
		if !k.owned || w.fault == "" || w.fault == "drain" {
			r.bound("failed_"+w.name, failed[i] == 0,
				"%d calls in %s (%s of %s) that no instance answered, want none (longest time without an answer %v)",
				failed[i], w.name, cmpOr(w.fault, "no fault"), cmpOr(w.victim, "-"), gaps[i].Round(time.Millisecond))
			continue
		}
		bound := map[string]time.Duration{
			"kill":    matrixLease + ownerSlack,
			"restart": restartBound,
			"outage":  w.back - w.from + matrixLease + ownerSlack,
			// The calls sent to the paused owner wait for it (the
			// clients' timeout is longer than the pause), and each
			// kind's few workers all come to one of them within the
			// pause: the gap is the pause's, whatever the others serve.
			"pause": w.back - w.from + ownerSlack,
		}[w.fault]
		what := "section"
		if k.form != formKeyed {
			what = "tag"
		}
		r.bound("answers_"+w.name, gaps[i] <= bound,
			"the %s went %v without an answer in %s (%s of %s, over %v after it began), want at most %v; %d calls no instance answered",
			what, gaps[i].Round(time.Millisecond), w.name, w.fault, w.victim, (w.back - w.from).Round(time.Millisecond), bound, failed[i])
	}
}

func cmpOr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// checkHistories checks a kind's history with Porcupine: every kind
// against the set model (no number twice), the kinds ordered across the
// fleet or per key against the counter model. The verdicts and the time
// each check took go on the RESULT line.
func (m *matrixRun) checkHistories(r *report, kl *kindLoad) {
	k := kl.kind
	about := func(c mcall) string {
		if c.target < 0 {
			return ""
		}
		return fmt.Sprintf("instance %s, its process %d", m.ins[c.target].name, c.run)
	}
	// The set model: each call's numbers; a formatted kind's texts
	// numbered in the order they were answered.
	spans := make([][]valSpan, len(kl.calls))
	texts := map[string]int64{}
	for _, v := range kl.values {
		s := valSpan{group: v.group, lo: v.id, hi: v.id + v.hi - v.n}
		if k.form == formFormatted {
			x, ok := texts[v.text]
			if !ok {
				x = int64(len(texts))
				texts[v.text] = x
			}
			s = valSpan{lo: x, hi: x}
		}
		spans[v.call] = append(spans[v.call], s)
	}
	var sets, counters []historyOp
	for i, c := range kl.calls {
		if c.status != 200 || c.bad {
			continue
		}
		sets = append(sets, historyOp{start: c.start, end: c.end, out: spans[i], about: about(c)})
		if k.order == orderFleet || k.order == orderKey {
			g := int64(0)
			if k.order == orderKey {
				g = int64(c.key)
			}
			counters = append(counters, historyOp{start: c.start, end: c.end, in: counterIn{group: g}, out: counterTake{c.lo, c.hi}, about: about(c)})
		}
	}
	r.checkModel("set", setModel, sets)
	if counters != nil {
		r.checkModel("counter", counterModel, counters)
	}
}
