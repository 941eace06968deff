package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/leafid/leaf/sequence"
)

// OrderedLookup tells the ordered tags: the Sequencer that serves them,
// or a store's rows where none is served (leaf tag add).
type OrderedLookup interface {
	// Ordered says whether tag is ordered.
	Ordered(ctx context.Context, tag string) (bool, error)
}

// OrderedTags serves the segment tags whose ids strictly increase across
// the fleet, each from one owner (sequence.Sequencer implements it).
type OrderedTags interface {
	OrderedLookup
	// NextTag returns n increasing ids of an ordered tag, or a
	// *sequence.NotOwnerError naming the owner.
	NextTag(ctx context.Context, tag string, n int) ([]int64, error)
}

// CheckOrdered returns nil when tag, which the segment allocator refused
// as not plain (segment.ErrNotPlain), is an ordered tag that tags can
// serve, and the error to answer otherwise. A nil tags serves none: the
// instance runs without sequences.
func CheckOrdered(ctx context.Context, tags OrderedTags, tag string) error {
	if tags == nil {
		return Errorf(Unavailable, "biz tag %q is ordered, and ordered tags are served by instances with --sequences on; retry later", tag)
	}
	ordered, err := tags.Ordered(ctx, tag)
	switch {
	case err != nil:
		return WithTag(tag, err)
	case !ordered: // the store says not plain, and not ordered either
		return Errorf(Unavailable, "biz tag %q is not served here; retry later", tag)
	}
	return nil
}

// RefuseOrderedRange answers a range of a tag the allocator refused as
// not plain and no business id serves: an ordered tag's range handed out
// whole would be used out of order with the owner's later ids. use names
// the calls that serve the tag.
func RefuseOrderedRange(ctx context.Context, tags OrderedTags, tag, use string) error {
	if err := CheckOrdered(ctx, tags, tag); err != nil {
		return err
	}
	return Errorf(InvalidRequest, "biz tag %q is ordered: its ids are issued one by one by its owner, never as ranges; use %s", tag, use)
}

// NextOrdered serves n ids of tag, which the segment allocator refused as
// not plain: from tags when this instance owns the tag, else from the
// owner through f, in one request with the other calls for the tag
// waiting here. forwarded says the request came forwarded already: then
// it is refused rather than sent on again. f is not used when tags is nil.
func (f *Forwarder) NextOrdered(ctx context.Context, tags OrderedTags, tag string, n int, forwarded bool) (ids []int64, err error) {
	if err := CheckOrdered(ctx, tags, tag); err != nil {
		return nil, err
	}
	ids, err = tags.NextTag(ctx, tag, n)
	var no *sequence.NotOwnerError
	switch {
	case errors.As(err, &no) && forwarded:
		return nil, f.refuseForwarded()
	case errors.As(err, &no):
		return f.takeOwned(ctx, takeKey{addr: no.Addr, tag: tag}, n)
	case err != nil:
		return nil, WithTag(tag, err)
	case len(ids) != n:
		return nil, fmt.Errorf("biz tag %q: asked for %d ids, got %d", tag, n, len(ids))
	}
	return ids, nil
}
