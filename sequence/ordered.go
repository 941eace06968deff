package sequence

import (
	"context"
	"fmt"
	"maps"
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
	// RaiseTag raises the tag's max_id by its row's step and returns the
	// range taken, first..last, from the statement that raised it. Its
	// errors are the segment store's (unknown tag, exhausted, store
	// unavailable).
	RaiseTag(ctx context.Context, tag string) (first, last int64, err error)
}

// OrderedStore is the part of the store about ordered tags.
type OrderedStore interface {
	// OrderedTags lists the ordered tags.
	OrderedTags(ctx context.Context) ([]string, error)
	// TagOrdered says whether the tag exists (has a row in leaf_alloc)
	// and whether it is ordered.
	TagOrdered(ctx context.Context, tag string) (exists, ordered bool, err error)
}

// Ordered says whether tag is an ordered tag. A tag not known here is read
// from the store once; a tag that exists and is not ordered is remembered
// as such, since a tag is ordered from its creation or never.
func (q *Sequencer) Ordered(ctx context.Context, tag string) (bool, error) {
	if _, ok := (*q.ordered.Load())[tag]; ok {
		return true, nil
	}
	if _, ok := q.plain.Load(tag); ok {
		return false, nil
	}
	if q.opts.Ordered == nil {
		return false, nil
	}
	exists, ordered, err := q.opts.Ordered.TagOrdered(ctx, tag)
	switch {
	case err != nil:
		return false, fmt.Errorf("is the tag ordered: %w", err) // the store's own error
	case ordered:
		q.addOrdered(tag)
		q.Kick()
		return true, nil
	case exists:
		q.plain.Store(tag, struct{}{})
	}
	return false, nil
}

// AddedOrdered tells the Sequencer of an ordered tag just created.
func (q *Sequencer) AddedOrdered(tag string) {
	q.addOrdered(tag)
	q.Kick()
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

// NextTag returns n ids of the ordered tag, increasing, each above every
// id of the tag issued before by any instance.
func (q *Sequencer) NextTag(ctx context.Context, tag string, n int) ([]int64, error) {
	if n < 1 || n > MaxCount {
		return nil, fmt.Errorf("sequence: count %d outside 1..%d", n, MaxCount)
	}
	s := (*q.ordered.Load())[tag]
	if s == nil {
		return nil, fmt.Errorf("%w: %q is not an ordered tag here", ErrUnavailable, tag)
	}
	return s.nextTag(ctx, q, n)
}

// nextTag takes n ids from the ranges of the tag's row: base is the last
// id issued, max the last of the current range.
func (s *section) nextTag(ctx context.Context, q *Sequencer, n int) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.servingLocked(q); err != nil {
		return nil, err
	}
	if q.opts.Tags == nil {
		return nil, fmt.Errorf("%w: no store of tag rows", ErrUnavailable)
	}
	out := make([]int64, 0, n)
	for len(out) < n {
		if s.base >= s.max {
			first, last, err := q.opts.Tags.RaiseTag(ctx, s.space)
			if err != nil {
				return nil, fmt.Errorf("raise ordered tag %q: %w", s.space, err)
			}
			if first <= s.base {
				// Only the owner raises the row: a range at or below what
				// it issued means the row went back in time.
				s.dropLocked(q)
				err := fmt.Errorf("%w: ordered tag %q: range from %d, not above the %d issued", ErrLeaseLost, s.space, first, s.base)
				q.opts.OnEvent(Event{Kind: "lost", Space: s.space, Section: s.index, Err: err})
				return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
			}
			s.base, s.max = first-1, last
			if err := s.servingLocked(q); err != nil {
				return nil, err
			}
		}
		for s.base < s.max && len(out) < n {
			s.base++
			out = append(out, s.base)
		}
	}
	return out, nil
}
