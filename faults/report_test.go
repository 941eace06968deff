package faults

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// report gathers a scenario's figures and the bounds it checked, and prints
// them as one RESULT line, with a BOUND line per bound.
type report struct {
	tb       testing.TB
	scenario string
	fields   []string
	missed   []string
}

func newReport(tb testing.TB, scenario string) *report {
	return &report{tb: tb, scenario: scenario}
}

// add appends key=value to the RESULT line. Durations are written in
// milliseconds.
func (r *report) add(key string, v any) {
	r.fields = append(r.fields, key+"="+format(v))
}

func format(v any) string {
	switch v := v.(type) {
	case time.Duration:
		return fmt.Sprintf("%.1f", float64(v)/float64(time.Millisecond))
	case float64:
		return fmt.Sprintf("%.1f", v)
	case string:
		if v == "" || strings.ContainsAny(v, " \t") {
			return fmt.Sprintf("%q", v)
		}
		return v
	}
	return fmt.Sprint(v)
}

// bound records a bound, prints a BOUND line and fails the test if missed.
// detail says what was measured against what.
func (r *report) bound(name string, ok bool, detail string, args ...any) {
	r.tb.Helper()
	d := fmt.Sprintf(detail, args...)
	verdict := "ok"
	if !ok {
		verdict = "MISSED"
		r.missed = append(r.missed, name)
		r.tb.Errorf("bound %s missed: %s", name, d)
		missedMu.Lock()
		missedAll = append(missedAll, fmt.Sprintf("%s %s: %s", r.scenario, name, d))
		missedMu.Unlock()
	}
	fmt.Printf("BOUND scenario=%s bound=%s %s: %s\n", r.scenario, name, verdict, d)
}

// missedAll holds every bound missed in this run, for the summary the
// suite prints last (printMissed): in a long log the tail is what is read.
var (
	missedMu  sync.Mutex
	missedAll []string
)

// printMissed prints the bounds missed in the run, if any, one per line.
func printMissed() {
	missedMu.Lock()
	defer missedMu.Unlock()
	if len(missedAll) == 0 {
		return
	}
	fmt.Printf("MISSED %d bounds in this run:\n", len(missedAll))
	for _, m := range missedAll {
		fmt.Printf("MISSED %s\n", m)
	}
}

// print writes the RESULT line.
func (r *report) print() {
	missed := "none"
	if len(r.missed) > 0 {
		missed = strings.Join(r.missed, ",")
	}
	fmt.Printf("RESULT scenario=%s %s bounds_missed=%s\n", r.scenario, strings.Join(r.fields, " "), missed)
}

// duplicates counts the ids that occur more than once in refs (an id seen
// three times counts two) and returns up to five examples, each the refs
// of one repeated id. It sorts refs.
func duplicates(refs []idRef) (n int, examples [][]idRef) {
	slices.SortFunc(refs, func(a, b idRef) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	for i := 0; i < len(refs); {
		j := i + 1
		for j < len(refs) && refs[j].id == refs[i].id {
			j++
		}
		if j-i > 1 {
			n += j - i - 1
			if len(examples) < 5 {
				examples = append(examples, slices.Clone(refs[i:j]))
			}
		}
		i = j
	}
	return n, examples
}

// idCounts are the ids a load received and their duplicates.
type idCounts struct {
	segIDs, snowIDs, segDups, snowDups int
}

// checkDuplicates counts the duplicates of segment ids per tag and of
// snowflake ids, adds them to the report, and checks that there are none.
func checkDuplicates(r *report, l *load) idCounts {
	r.tb.Helper()
	segIDs, snowIDs, segDups := 0, 0, 0
	var segEx, snowEx []string
	for _, tag := range l.tagNames {
		refs := l.segRefs(tag)
		segIDs += len(refs)
		n, ex := duplicates(refs)
		segDups += n
		for _, e := range ex {
			segEx = append(segEx, describeDup(l, "segment "+tag, e))
		}
	}
	snow := l.snowRefs()
	snowIDs = len(snow)
	snowDups, ex := duplicates(snow)
	for _, e := range ex {
		snowEx = append(snowEx, describeDup(l, "snowflake", e))
	}
	r.add("ids", segIDs)
	r.add("snowflake_ids", snowIDs)
	r.add("segment_dup", segDups)
	r.add("snowflake_dup", snowDups)
	r.bound("segment_dup", segDups == 0, "%d duplicate segment ids among %d%s", segDups, segIDs, listed(segEx))
	r.bound("snowflake_dup", snowDups == 0, "%d duplicate snowflake ids among %d%s", snowDups, snowIDs, listed(snowEx))
	checkIDHistory(r, l)
	return idCounts{segIDs: segIDs, snowIDs: snowIDs, segDups: segDups, snowDups: snowDups}
}

func describeDup(l *load, what string, refs []idRef) string {
	parts := make([]string, len(refs))
	for i, ref := range refs {
		parts[i] = l.describe(ref)
	}
	return fmt.Sprintf("%s id %d from %s", what, refs[0].id, strings.Join(parts, " and "))
}

func listed(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return "; e.g.\n  " + strings.Join(lines, "\n  ")
}

// statusCounts counts samples by status (0: no answer).
func statusCounts(samples []sample) map[int]int {
	out := map[int]int{}
	for _, s := range samples {
		out[int(s.status)]++
	}
	return out
}

// addStatuses adds the requests, failures without an answer (by kind) and
// answers by status to the report, and checks the answers that must never
// come: a 500 (a bug, by the contract), any other 5xx than 503, a 4xx (the
// suite sends only valid requests for existing tags) and a 200 whose body
// breaks the API's promises.
func addStatuses(r *report, l *load, samples []sample) {
	r.tb.Helper()
	counts := statusCounts(samples)
	r.add("requests", len(samples))
	non2xx := 0
	for st, n := range counts {
		if st != 200 && st != 0 {
			non2xx += n
		}
	}
	r.add("non2xx", non2xx)
	for _, st := range slices.Sorted(maps.Keys(counts)) {
		if st != 200 && st != 0 {
			r.add(fmt.Sprintf("http_%d", st), counts[st])
		}
	}
	kinds := l.errKinds()
	r.add("conn_errors", counts[0])
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		r.add("conn_"+k, kinds[k])
	}
	unexpected, bad := 0, 0
	for _, s := range samples {
		if s.bad {
			bad++
		}
		if s.status != 0 && s.status != 200 && s.status != 503 {
			unexpected++
		}
	}
	r.bound("unexpected_status", unexpected == 0, "%d answers other than 200 and 503 (%v)", unexpected, counts)
	r.bound("bad_body", bad == 0, "%d answers 200 whose ids are missing, malformed, not positive or not increasing", bad)
}

// percentile is the p-th percentile (0..1) of ds, nearest rank; 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func maxDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return slices.Max(ds)
}

// checkIDHistory checks the load's history with Porcupine's set model: the
// ids of each request, per tag (snowflake ids as one more), none twice.
func checkIDHistory(r *report, l *load) {
	r.tb.Helper()
	type at struct{ worker, sample int32 }
	got := map[at][]valSpan{}
	add := func(group int64, refs []idRef) {
		for _, ref := range refs {
			k := at{ref.worker, ref.sample}
			got[k] = append(got[k], valSpan{group, ref.id, ref.id})
		}
	}
	for i, tag := range l.tagNames {
		add(int64(i), l.segRefs(tag))
	}
	add(-1, l.snowRefs())
	h := make([]historyOp, 0, len(got))
	for k, spans := range got {
		s := l.workers[k.worker].samples[k.sample]
		h = append(h, historyOp{start: s.start, end: s.start + s.dur, out: spans, about: l.describe(idRef{worker: k.worker, sample: k.sample})})
	}
	r.checkModel("set", setModel, h)
}
