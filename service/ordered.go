package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/leafid/leaf/sequence"
)

// OrderedTags serves the segment tags whose ids strictly increase across
// the fleet, each from one owner (sequence.Sequencer implements it).
type OrderedTags interface {
	// AddedOrdered tells of an ordered tag just created, so that it is
	// served at once.
	AddedOrdered(ctx context.Context, tag string)
	// NextTag returns n increasing ids of an ordered tag, or a
	// *sequence.NotOwnerError naming the owner.
	NextTag(ctx context.Context, tag string, n int) ([]int64, error)
}

// orderedOff is the answer for an ordered tag where this instance serves
// none: it runs without sequences.
func orderedOff(tag string) error {
	return Errorf(Unavailable, "biz tag %q is ordered, and ordered tags are served by instances with --sequences on; retry later", tag)
}

// NextOrdered serves n ids of tag, an ordered tag: from tags when this instance owns the tag, else from the
// owner through f, in one request with the other calls for the tag
// waiting here. forwarded says the request came forwarded already: then
// it is refused rather than sent on again. f is not used when tags is nil.
func (f *Forwarder) NextOrdered(ctx context.Context, tags OrderedTags, tag string, n int, forwarded bool) (ids []int64, err error) {
	if tags == nil {
		return nil, orderedOff(tag)
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
