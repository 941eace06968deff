package sequence

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"

	"github.com/leafid/leaf/segment"
)

// Ordered tags: segment tags whose ids strictly increase across the
// fleet. Each is served by one owner at a time, as a section of a space
// is, under a lease in the store (its section row has the tag's name and
// the index OrderedSection); the owner takes ranges from the tag's own row
// (leaf_alloc) one raise at a time and hands ids out in order. The
// reasoning of the package comment holds as it is: an owner serves only
// before its deadline, a new owner only after the lease ran out, and every
// range the new owner takes is raised after every range the old one took.
//
// A tag is ordered from its creation on, or never: an instance that saw a
// tag as not ordered keeps serving it from its segment buffers.

// OrderedSection is the section index of an ordered tag's lease row.
const OrderedSection = -1

// TagRows raises the rows of ordered tags.
type TagRows interface {
	// RaiseRow raises the max_id of row (an ordered tag's own row, or the
	// row of one of its periods) by the row's step, or by atLeast when
	// that is more, and by less where limit is reached: no number above limit is taken (0: no limit). It
	// returns the range taken, first..last, from the statement that
	// raised it, and ErrFull, without a write, when every number up to
	// limit was taken already. Its other errors are the segment store's
	// (unknown tag, exhausted, store unavailable).
	RaiseRow(ctx context.Context, row string, limit, atLeast int64) (first, last int64, err error)
	// HandBack sets row's max_id back from end to first, only while it
	// is still end, and says whether it did: the numbers first..end-1
	// were taken by this owner and never issued.
	HandBack(ctx context.Context, row string, end, first int64) (bool, error)
}

// OrderedStore is the part of the store about ordered tags.
type OrderedStore interface {
	// OrderedTags lists the ordered tags.
	OrderedTags(ctx context.Context) ([]string, error)
	// EnsureOrdered makes an existing tag ordered: it creates the tag's
	// lease row unless it exists.
	EnsureOrdered(ctx context.Context, tag string) error
}

// AddedOrdered tells the Sequencer of an ordered tag, just created or
// learned of by the caller (what kind a tag is, the caller knows), and runs
// a round at once (roundNow), bounded by ctx, so that the tag is served
// without waiting for the next round: here when this instance wins it.
func (q *Sequencer) AddedOrdered(ctx context.Context, tag string) {
	if _, ok := (*q.ordered.Load())[tag]; ok {
		return
	}
	q.addOrdered(tag)
	q.roundNow(ctx, tag)
}

func (q *Sequencer) addOrdered(tag string) *section {
	q.orderedMu.Lock()
	defer q.orderedMu.Unlock()
	old := *q.ordered.Load()
	if s := old[tag]; s != nil {
		return s
	}
	next := maps.Clone(old)
	s := &section{space: tag, index: OrderedSection, tag: true}
	next[tag] = s
	q.ordered.Store(&next)
	return s
}

// Own makes tag an ordered tag, served by one owner from now on, if it
// is not one already here: a formatted tag whose numbers must be dense (a
// capped format) becomes one this way. A tag new here gets a round at once
// (roundNow), bounded by ctx.
func (q *Sequencer) Own(ctx context.Context, tag string) error {
	if _, ok := (*q.ordered.Load())[tag]; ok {
		return nil
	}
	if q.opts.Ordered == nil || q.opts.Tags == nil {
		return fmt.Errorf("%w: ordered tags are not served here", ErrUnavailable)
	}
	if err := q.opts.Ordered.EnsureOrdered(ctx, tag); err != nil {
		return fmt.Errorf("make tag %q ordered: %w", tag, err)
	}
	q.addOrdered(tag)
	q.roundNow(ctx, tag)
	return nil
}

// roundNow settles an ordered tag just learned at once (settleNew), so
// that it is served without waiting for the next round: taken here when
// this instance wins it, else routed to the winner, which does the same
// when the request reaches it.
func (q *Sequencer) roundNow(ctx context.Context, tag string) {
	s := (*q.ordered.Load())[tag]
	if s == nil {
		return
	}
	if q.opts.Interval < 0 {
		q.Kick() // the caller runs the rounds (tests)
		return
	}
	q.settleNew(ctx, s.settled.Load)
}

// NextTag returns n ids of the ordered tag, increasing, each above every
// id of the tag issued before by any instance. A tag not known here yet is
// learned of first (AddedOrdered): the caller knows it is ordered.
// Past the tag's bound (Options.Bound) it returns an error wrapping
// segment.ErrBoundReached, and takes none.
func (q *Sequencer) NextTag(ctx context.Context, tag string, n int) ([]int64, error) {
	q.AddedOrdered(ctx, tag)
	var limit int64
	if q.opts.Bound != nil {
		if b := q.opts.Bound(tag); b < math.MaxInt64 {
			limit = b
		}
	}
	ids, err := q.NextRow(ctx, tag, tag, limit, n)
	var full *FullError
	if errors.As(err, &full) {
		return nil, fmt.Errorf("%w: %q has %d ids left up to %d, %d asked for", segment.ErrBoundReached, tag, full.Left, limit, n)
	}
	return ids, err
}

// NextRow returns n numbers of row, one of the rows of the ordered tag
// tag (its own, or a period's: a formatted tag's tag@KEY), increasing,
// each above every number of the row issued before by any instance.
// limit, when above 0, bounds them: when fewer than n numbers up to limit
// are left, it returns an error wrapping ErrFull and takes none. A
// refusal takes nothing either: a batch whose raise failed leaves what
// was taken for the next call.
func (q *Sequencer) NextRow(ctx context.Context, tag, row string, limit int64, n int) ([]int64, error) {
	if n < 1 || n > MaxCount {
		return nil, fmt.Errorf("sequence: count %d outside 1..%d", n, MaxCount)
	}
	s := (*q.ordered.Load())[tag]
	if s == nil {
		return nil, fmt.Errorf("%w: %q is not an ordered tag here", ErrUnavailable, tag)
	}
	if !s.settled.Load() && q.opts.Interval >= 0 {
		q.settleNew(ctx, s.settled.Load)
	}
	return s.nextRow(ctx, q, row, limit, n)
}

// nextRow takes n numbers of row: base is the last number issued, max
// the end of the range in use; full says that row has no number left
// below the limit beyond max and the range ahead. It waits on the
// database only when the range in use and the range ahead (ahead.go) are
// spent.
func (s *section) nextRow(ctx context.Context, q *Sequencer, row string, limit int64, n int) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if err := s.servingLocked(q); err != nil {
			return nil, err
		}
		if q.opts.Tags == nil {
			return nil, fmt.Errorf("%w: no store of tag rows", ErrUnavailable)
		}
		if s.full && limit != s.fullAt {
			s.full = false // the limit moved (a tag's bound changed): raise again
		}
		if row != s.row {
			// Another period: what is left of the last one's ranges is
			// never issued (its period is over, or the clock went back).
			s.skipHeldLocked(q, SkipPeriodEnd)
			s.row, s.base, s.max, s.full = row, 0, 0, false
			s.ahead.forget()
		}
		switch {
		case s.leftLocked(limit) >= int64(n):
		case s.ahead.last != 0:
			s.useAheadLocked(q)
			continue
		case !s.full && (limit <= 0 || s.max < limit):
			if s.ahead.loading == nil {
				s.raiseRowAhead(q, limit, false)
			}
			if err := s.awaitLocked(ctx); err != nil {
				return nil, err
			}
			continue
		}
		break
	}
	if left := s.leftLocked(limit); left < int64(n) {
		return nil, &FullError{Row: row, Left: left, Limit: limit, Asked: n}
	}
	out := make([]int64, n)
	for i := range out {
		s.base++
		out[i] = s.base
	}
	// A row whose ranges are single numbers (a step of 1: dense numbers
	// at a write each) loads nothing ahead: its owner holds no number it
	// has not issued, and a kill loses none.
	if !s.full && s.ahead.size > 1 && s.ahead.due(s.max-s.base) {
		s.raiseRowAhead(q, limit, true)
	}
	return out, nil
}

// handBack returns to the row of an ordered tag the numbers taken and not
// issued, after the section stopped being served here (release, Close):
// the next owner then continues right after the last number issued, with
// no gap. It does nothing when the row moved on.
func (q *Sequencer) handBack(ctx context.Context, tag, row string, end, first int64) {
	if q.opts.Tags == nil || row == "" || first >= end {
		return
	}
	done, err := q.opts.Tags.HandBack(ctx, row, end, first)
	if err != nil {
		q.opts.OnEvent(Event{Kind: "handback", Space: row, Section: OrderedSection, Err: err})
	}
	if !done {
		q.skip(tag, row, first, end-first, SkipHandBack)
	}
}

// leftLocked is how many numbers of the range in use may be issued: up to
// its end, and up to limit when there is one (a bound lowered under a
// range taken before).
func (s *section) leftLocked(limit int64) int64 {
	if limit > 0 {
		return max(min(s.max, limit)-s.base, 0)
	}
	return s.max - s.base
}

// RowTaken is the row an owned tag numbers now (its own, or a period's)
// and the highest number this instance took of it; false when it does
// not own the tag or took nothing yet.
func (q *Sequencer) RowTaken(tag string) (row string, taken int64, ok bool) {
	s := (*q.ordered.Load())[tag]
	if s == nil {
		return "", 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.owned || s.row == "" || s.max == 0 {
		return "", 0, false
	}
	return s.row, max(s.max, s.ahead.last), true
}

// RowIssued is the row an owned tag numbers now and the last number this
// instance issued of it; false when it does not own the tag or issued
// nothing of that row.
func (q *Sequencer) RowIssued(tag string) (row string, issued int64, ok bool) {
	s := (*q.ordered.Load())[tag]
	if s == nil {
		return "", 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.owned || s.row == "" || s.base == 0 {
		return "", 0, false
	}
	return s.row, s.base, true
}
