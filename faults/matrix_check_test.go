package faults

import (
	"cmp"
	"maps"
	"slices"
	"testing"
	"time"
)

// The checks of TestMatrix, on the calls and numbers a kind of id was
// answered with. They know nothing of HTTP or of the kinds: each works on
// spans of numbers, or on calls with the numbers they got and when they
// ran, so that TestMatrixChecks can hold them to made-up answers.

// numSpan is the numbers lo..hi of one group (a tag's row, a period, a
// key), answered to call.
type numSpan struct {
	group, lo, hi int64
	call          int32
}

// sortSpans orders spans by group, then by their first number.
func sortSpans(spans []numSpan) {
	slices.SortFunc(spans, func(a, b numSpan) int {
		if c := cmp.Compare(a.group, b.group); c != 0 {
			return c
		}
		return cmp.Compare(a.lo, b.lo)
	})
}

// duplicateNumbers counts the numbers answered more than once (a number
// answered three times counts two) and returns up to maxExamples pairs
// of calls that got the same number. It sorts spans.
func duplicateNumbers(spans []numSpan) (n int64, examples [][2]int32) {
	sortSpans(spans)
	for i := 0; i < len(spans); {
		// The spans of one group that overlap, one after another: the
		// highest number so far and the call that got it.
		top, topCall := spans[i].hi, spans[i].call
		for j := i + 1; j < len(spans) && spans[j].group == spans[i].group; j++ {
			s := spans[j]
			if s.lo <= top {
				n += min(s.hi, top) - s.lo + 1
				if len(examples) < maxExamples {
					examples = append(examples, [2]int32{topCall, s.call})
				}
			}
			if s.hi > top {
				top, topCall = s.hi, s.call
			}
			i = j
		}
		i++
	}
	return n, examples
}

// textRef is one text answered to call.
type textRef struct {
	text string
	call int32
}

// duplicateTexts counts the texts answered more than once, compared as
// texts, with up to maxExamples pairs of calls. It sorts texts.
func duplicateTexts(texts []textRef) (n int64, examples [][2]int32) {
	slices.SortFunc(texts, func(a, b textRef) int { return cmp.Compare(a.text, b.text) })
	for i := 1; i < len(texts); i++ {
		if texts[i].text == texts[i-1].text {
			n++
			if len(examples) < maxExamples {
				examples = append(examples, [2]int32{texts[i-1].call, texts[i].call})
			}
		}
	}
	return n, examples
}

// hole is the numbers lo..hi of a group that no call got, below a number
// that one did: above is the call that got the number right above, below
// the one that got the number right below (-1: none, a group's first).
type hole struct {
	group, lo, hi int64
	above, below  int32
}

func (h hole) size() int64 { return h.hi - h.lo + 1 }

// findHoles returns the numbers of each group never answered between its
// first number and the highest answered: base(group) is the group's first
// number, or 0 to count from the lowest answered. With block > 0 the
// numbers are striped over several stores in blocks of that size from
// floor, and only the holes within one block count: the rest of a block is
// another store's, or still to come. It sorts spans.
func findHoles(spans []numSpan, base func(group int64) int64, floor, block int64) []hole {
	sortSpans(spans)
	var out []hole
	for i := 0; i < len(spans); {
		g := spans[i].group
		next := base(g) // the lowest number not seen yet
		if next == 0 || block > 0 {
			next = spans[i].lo
		}
		below := int32(-1) // the call that got next-1
		for ; i < len(spans) && spans[i].group == g; i++ {
			s := spans[i]
			if s.lo > next && (block == 0 || (next-1-floor)/block == (s.lo-floor)/block) {
				out = append(out, hole{group: g, lo: next, hi: s.lo - 1, above: s.call, below: below})
			}
			if s.hi+1 > next {
				next, below = s.hi+1, s.call
			}
		}
	}
	return out
}

// orderCall is a call answered 200, for the order checks: the numbers it
// got, lo..hi, in the order the kind promises (a formatted id's period
// before its number), and when it ran. group sets apart the calls that are
// ordered among themselves (a key, a process), and holds nothing else.
type orderCall struct {
	group      int64
	start, end time.Duration
	lo, hi     int64
	call       int32
}

// orderViolations counts the calls that got a number not above every
// number of a call of their group that ended more than slack before they
// began (slack 0: that ended before they began), and returns up to
// maxExamples of them, each with the earlier call whose number was not
// below theirs. Calls that overlap in time are not ordered.
func orderViolations(calls []orderCall, slack time.Duration) (n int, examples [][2]int32) {
	byGroup := map[int64][]orderCall{}
	for _, c := range calls {
		byGroup[c.group] = append(byGroup[c.group], c)
	}
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		cs := byGroup[g]
		byStart := slices.Clone(cs)
		slices.SortFunc(byStart, func(a, b orderCall) int { return cmp.Compare(a.start, b.start) })
		byEnd := cs
		slices.SortFunc(byEnd, func(a, b orderCall) int { return cmp.Compare(a.end, b.end) })
		j := 0
		top := orderCall{call: -1}
		for _, c := range byStart {
			for j < len(byEnd) && byEnd[j].end+slack < c.start {
				if top.call < 0 || byEnd[j].hi > top.hi {
					top = byEnd[j]
				}
				j++
			}
			if top.call >= 0 && c.lo <= top.hi {
				n++
				if len(examples) < maxExamples {
					examples = append(examples, [2]int32{top.call, c.call})
				}
			}
		}
	}
	return n, examples
}

// answered is a call for availability: the unit it asked about (a
// section of a space; 0 for a tag), when it ran and whether it was
// answered 200.
type answered struct {
	unit       int
	start, end time.Duration
	ok         bool
}

// longestGap is the longest time within [from, to] during which a unit
// asked about got no answer 200: from from to the end of the first, between
// the ends of two in a row, from the last to to. A unit asked about in the
// window and never answered counts whole; one not asked about, not at all.
func longestGap(calls []answered, from, to time.Duration) time.Duration {
	ends := map[int][]time.Duration{}
	for _, c := range calls {
		if c.start > to || c.end < from {
			continue
		}
		if _, ok := ends[c.unit]; !ok {
			ends[c.unit] = nil
		}
		if c.ok && c.end >= from && c.end <= to {
			ends[c.unit] = append(ends[c.unit], c.end)
		}
	}
	var gap time.Duration
	for _, es := range ends {
		slices.Sort(es)
		last := from
		for _, e := range es {
			gap = max(gap, e-last)
			last = e
		}
		gap = max(gap, to-last)
	}
	return gap
}

// TestMatrixChecks holds the checks of TestMatrix to made-up answers: a
// check that missed what it looks for would pass anything. It starts
// nothing, so it runs in make test too.
func TestMatrixChecks(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	t.Run("duplicateNumbers", func(t *testing.T) {
		tests := []struct {
			name  string
			spans []numSpan
			want  int64
		}{
			{name: "none", want: 0},
			{name: "apart", spans: []numSpan{{0, 1, 5, 0}, {0, 6, 9, 1}, {0, 20, 20, 2}}, want: 0},
			{name: "one number twice", spans: []numSpan{{0, 1, 5, 0}, {0, 5, 9, 1}}, want: 1},
			{name: "a range inside another", spans: []numSpan{{0, 1, 100, 0}, {0, 10, 19, 1}}, want: 10},
			{name: "three times", spans: []numSpan{{0, 7, 7, 0}, {0, 7, 7, 1}, {0, 7, 7, 2}}, want: 2},
			{name: "after a long span", spans: []numSpan{{0, 1, 100, 0}, {0, 10, 10, 1}, {0, 50, 50, 2}}, want: 2},
			{name: "other groups", spans: []numSpan{{1, 5, 5, 0}, {2, 5, 5, 1}}, want: 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				n, ex := duplicateNumbers(slices.Clone(tt.spans))
				if n != tt.want || (n > 0) != (len(ex) > 0) {
					t.Errorf("duplicateNumbers = %d (%d examples), want %d", n, len(ex), tt.want)
				}
			})
		}
	})
	t.Run("duplicateTexts", func(t *testing.T) {
		n, ex := duplicateTexts([]textRef{{"O-20261126-000001", 0}, {"O-20261126-000002", 1}, {"O-20261126-000001", 2}})
		if n != 1 || len(ex) != 1 || ex[0] != [2]int32{0, 2} {
			t.Errorf("duplicateTexts = %d %v, want 1 [0 2]", n, ex)
		}
	})
	t.Run("findHoles", func(t *testing.T) {
		one := func(int64) int64 { return 1 }
		lowest := func(int64) int64 { return 0 }
		tests := []struct {
			name  string
			spans []numSpan
			base  func(int64) int64
			floor int64
			block int64
			want  []hole
		}{
			{name: "dense", spans: []numSpan{{0, 1, 3, 0}, {0, 4, 4, 1}}, base: one},
			{name: "from the first number", spans: []numSpan{{0, 4, 5, 0}}, base: one, want: []hole{{0, 1, 3, 0, -1}}},
			{name: "from the lowest", spans: []numSpan{{0, 4, 5, 0}, {0, 9, 9, 1}}, base: lowest, want: []hole{{0, 6, 8, 1, 0}}},
			{name: "overlaps", spans: []numSpan{{0, 1, 10, 0}, {0, 5, 6, 1}, {0, 12, 12, 2}}, base: one, want: []hole{{0, 11, 11, 2, 0}}},
			{name: "per group", spans: []numSpan{{1, 1, 2, 0}, {2, 2, 2, 1}}, base: one, want: []hole{{2, 1, 1, 1, -1}}},
			// Blocks 0..9, 10..19, 20..29: the hole 8..11 spans two.
			{name: "blocks", spans: []numSpan{{0, 1, 3, 0}, {0, 6, 7, 1}, {0, 12, 12, 2}, {0, 15, 15, 3}, {0, 19, 19, 4}, {0, 20, 20, 5}},
				base: one, block: 10, want: []hole{{0, 4, 5, 1, 0}, {0, 13, 14, 3, 2}, {0, 16, 18, 4, 3}}},
			{name: "blocks from a floor", spans: []numSpan{{0, 5, 5, 0}, {0, 7, 7, 1}, {0, 9, 9, 2}}, base: one, floor: 5, block: 3,
				want: []hole{{0, 6, 6, 1, 0}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := findHoles(slices.Clone(tt.spans), tt.base, tt.floor, tt.block)
				if !slices.Equal(got, tt.want) {
					t.Errorf("findHoles = %v, want %v", got, tt.want)
				}
			})
		}
	})
	t.Run("orderViolations", func(t *testing.T) {
		c := func(group int64, start, end int, lo, hi int64, call int32) orderCall {
			return orderCall{group: group, start: ms(start), end: ms(end), lo: lo, hi: hi, call: call}
		}
		tests := []struct {
			name  string
			calls []orderCall
			slack time.Duration
			want  int
		}{
			{name: "in order", calls: []orderCall{c(0, 0, 1, 1, 5, 0), c(0, 2, 3, 6, 6, 1), c(0, 4, 5, 9, 9, 2)}},
			{name: "lower after", calls: []orderCall{c(0, 0, 1, 5, 5, 0), c(0, 2, 3, 4, 4, 1)}, want: 1},
			{name: "equal after", calls: []orderCall{c(0, 0, 1, 5, 5, 0), c(0, 2, 3, 5, 6, 1)}, want: 1},
			{name: "a batch's highest", calls: []orderCall{c(0, 0, 1, 1, 10, 0), c(0, 2, 3, 8, 8, 1)}, want: 1},
			{name: "overlapping may cross", calls: []orderCall{c(0, 0, 10, 5, 5, 0), c(0, 1, 2, 3, 3, 1)}},
			{name: "other groups", calls: []orderCall{c(1, 0, 1, 5, 5, 0), c(2, 2, 3, 4, 4, 1)}},
			{name: "within the slack", calls: []orderCall{c(0, 0, 1, 5, 5, 0), c(0, 500, 501, 4, 4, 1)}, slack: time.Second},
			{name: "past the slack", calls: []orderCall{c(0, 0, 1, 5, 5, 0), c(0, 1500, 1501, 4, 4, 1)}, slack: time.Second, want: 1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				n, ex := orderViolations(tt.calls, tt.slack)
				if n != tt.want || (n > 0) != (len(ex) > 0) {
					t.Errorf("orderViolations = %d (%v), want %d", n, ex, tt.want)
				}
			})
		}
	})
	t.Run("longestGap", func(t *testing.T) {
		calls := []answered{
			{unit: 0, start: ms(0), end: ms(1), ok: true},
			{unit: 0, start: ms(100), end: ms(101), ok: false},
			{unit: 0, start: ms(700), end: ms(701), ok: true},
			{unit: 1, start: ms(10), end: ms(11), ok: true},
			{unit: 1, start: ms(990), end: ms(991), ok: true},
			{unit: 2, start: ms(2000), end: ms(2001), ok: true}, // not asked about in the window
		}
		if got := longestGap(calls, 0, ms(1000)); got != ms(980) {
			t.Errorf("longestGap = %v, want 980ms", got)
		}
		if got := longestGap([]answered{{unit: 0, start: ms(5), end: ms(6)}}, 0, ms(1000)); got != ms(1000) {
			t.Errorf("longestGap of a unit never answered = %v, want 1s", got)
		}
	})
}
