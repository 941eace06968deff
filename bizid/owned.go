package bizid

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Owned reports whether t's numbers come from one owner at a time, in the
// order issued across the fleet: an ordered tag, or a capped format
// ({seq:N!}), whose period holds a fixed count of numbers that every
// instance must be able to issue to the last, and that a refusal must
// not use up.
func (t *Tag) Owned() bool {
	if t.Ordered {
		return true
	}
	if t.tmpl == nil {
		return false
	}
	_, capped := t.tmpl.SeqWidth()
	return capped
}

// Capacity is how many numbers a period of a capped format ({seq:N!})
// holds, 0 for a tag of no cap.
func (t *Tag) Capacity() int64 {
	if t.tmpl == nil {
		return 0
	}
	return t.limit()
}

// limit is the highest number a period of t shows, 0 for no limit.
// Limit is the last number of each period of a capped format ({seq:N!}),
// 0 for another tag (an opaque one among them).
func (t *Tag) Limit() int64 {
	if t.tmpl == nil {
		return 0
	}
	return t.limit()
}

func (t *Tag) limit() int64 {
	if _, capped := t.tmpl.SeqWidth(); capped {
		return t.tmpl.MaxSeq()
	}
	return 0
}

// numbers takes n numbers of the period of the formatted tag t that holds
// now: from the owner when t is Owned, which refuses what the period
// cannot show and takes nothing then; else from the allocator, whose
// numbers past what the period shows are refused (an open format shows
// them all).
func (is *Issuer) numbers(ctx context.Context, t *Tag, now time.Time, n int) ([]int64, Period, error) {
	var ns []int64
	take := func(row string) error {
		var err error
		if n == 1 {
			var v int64
			v, err = is.opts.IDs.Next(ctx, row)
			ns = append(ns[:0], v)
		} else {
			ns, err = is.opts.IDs.NextN(ctx, row, n)
		}
		return err
	}
	if t.Owned() {
		if is.opts.Owner == nil {
			return nil, Period{}, fmt.Errorf("%w: tag %q is served by one owner at a time, and this instance serves no such tags (it runs without sequences)", ErrNoOwner, t.Tag)
		}
		if err := is.opts.Owner.Own(ctx, t.Tag); err != nil {
			return nil, Period{}, err
		}
		take = func(row string) error {
			var err error
			ns, err = is.opts.Owner.NextRow(ctx, t.Tag, row, t.limit(), n)
			return err
		}
	}
	p, err := is.issue(ctx, t, now, take)
	if errors.Is(err, ErrSequenceFull) {
		return nil, p, fullError(t, p, err)
	}
	if err != nil {
		return nil, p, err
	}
	for _, v := range ns {
		if v > t.tmpl.MaxSeq() {
			return nil, p, fullError(t, p, nil)
		}
	}
	return ns, p, nil
}

func fullError(t *Tag, p Period, why error) error {
	w, _ := t.tmpl.SeqWidth()
	var left *LeftError
	if errors.As(why, &left) {
		return fmt.Errorf("%w: {seq:%d!} shows at most %d ids in period %q, and %d are left", ErrSequenceFull, w, t.tmpl.MaxSeq(), p.Key, left.Left)
	}
	return fmt.Errorf("%w: {seq:%d!} shows at most %d ids in period %q", ErrSequenceFull, w, t.tmpl.MaxSeq(), p.Key)
}
