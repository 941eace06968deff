package sequence

import (
	"maps"
	"sync"
)

// Numbers an ordered tag skipped: taken from its row by this instance and
// never issued, where the tag promises no gap. Each is counted by its
// cause and told as an Event of kind "skipped" (Event.Row, First, Count
// and Cause), so that an operator can say how many numbers were never
// issued, and why. A process killed skips what it held too (the rest of
// its range and the range ahead, two steps near the database); that it
// cannot count.

// Causes of numbers skipped.
const (
	// SkipLeaseLost: the owner lost its lease (it could not renew it in
	// time, or the row went back in time) holding numbers it had taken.
	SkipLeaseLost = "lease_lost"
	// SkipHandBack: a release, or a raise that ended after one, could not
	// hand its numbers back: the row had moved on, or the store failed.
	SkipHandBack = "handback_failed"
	// SkipPeriodEnd: a period of a formatted tag ended with numbers of its
	// range not issued.
	SkipPeriodEnd = "period_end"
)

// Skip is a tag and a cause of its numbers skipped.
type Skip struct{ Tag, Cause string }

// skips counts the numbers skipped since the start.
type skips struct {
	mu sync.Mutex
	n  map[Skip]int64
}

// skip counts count numbers of tag's row, from first on, skipped for
// cause, and tells it.
func (q *Sequencer) skip(tag, row string, first, count int64, cause string) {
	if count <= 0 {
		return
	}
	q.skips.mu.Lock()
	if q.skips.n == nil {
		q.skips.n = map[Skip]int64{}
	}
	q.skips.n[Skip{tag, cause}] += count
	q.skips.mu.Unlock()
	q.opts.OnEvent(Event{Kind: "skipped", Space: tag, Section: OrderedSection, Row: row, First: first, Count: count, Cause: cause})
}

// Skipped is the numbers of each ordered tag skipped since the start, by
// cause.
func (q *Sequencer) Skipped() map[Skip]int64 {
	q.skips.mu.Lock()
	defer q.skips.mu.Unlock()
	return maps.Clone(q.skips.n)
}

// skipHeldLocked counts what the owner of an ordered tag took of its row
// and has not issued (the rest of the range in use, base+1..max, and the
// range ahead) as skipped for cause, and forgets it.
func (s *section) skipHeldLocked(q *Sequencer, cause string) {
	if !s.tag || !s.owned || s.row == "" {
		return
	}
	q.skip(s.space, s.row, s.base+1, s.max-s.base, cause)
	if a := &s.ahead; a.last != 0 {
		q.skip(s.space, s.row, a.first, a.last-a.first+1, cause)
	}
	s.base = s.max
	s.ahead.first, s.ahead.last = 0, 0
}
