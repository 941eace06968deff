package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
)

// OrderedTags serves the segment tags whose ids strictly increase across
// the fleet, each from one owner (sequence.Sequencer implements it).
type OrderedTags interface {
	// Ordered says whether tag is ordered.
	Ordered(ctx context.Context, tag string) (bool, error)
	// NextTag returns n increasing ids of an ordered tag.
	NextTag(ctx context.Context, tag string, n int) ([]int64, error)
}

// OrderedTagAdmin creates ordered tags; the TagAdmin of the config
// implements it where ordered tags can be made.
type OrderedTagAdmin interface {
	CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error)
}

// special reports whether the allocator serves tag only transformed (a
// formatted or opaque tag it has loaded: segment.Allocator.Special). It is
// asked before the allocator's Next, whose hot path does not look; a
// tag's first request learns it from Next's segment.ErrSpecial.
func (s *server) special(tag string) bool {
	sp, ok := s.cfg.Segments.(interface{ Special(tag string) bool })
	return ok && sp.Special(tag)
}

// serveNotPlain answers a get (batch false) or a batch of n ids of a tag
// the segment allocator does not serve as plain numbers: a formatted or
// opaque tag (segment.ErrSpecial), from the business ids; an ordered tag
// (segment.ErrNotPlain), from this instance if it owns the tag, else by
// forwarding the request to the owner once. Only such tags get here, so a
// plain tag's request costs nothing for the tags that are not.
func (s *server) serveNotPlain(c echo.Context, tag string, n int, form idForm, batch bool) error {
	if s.cfg.Biz != nil {
		bt, err := s.bizTag(c, tag)
		switch {
		case err != nil:
			return err
		case bt != nil && batch:
			return s.bizBatch(c, tag, bt, n, form)
		case bt != nil:
			return s.bizGet(c, tag, bt, form)
		}
	}
	ctx := c.Request().Context()
	if err := s.checkOrdered(ctx, tag); err != nil {
		return err
	}
	ids, err := s.cfg.Ordered.NextTag(ctx, tag, n)
	var no *sequence.NotOwnerError
	switch {
	case errors.As(err, &no):
		return s.toOwner(c, no.Addr)
	case err != nil:
		return withTag(tag, err)
	case len(ids) != n:
		return checkBatch(ids, n)
	case !batch:
		return writeID(c, ids[0], form)
	}
	b := make([]byte, 0, 32+len(tag)+n*22)
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, tag)
	b = append(b, `,"ids":`...)
	b = appendIDs(b, ids, form)
	b = append(b, '}')
	return c.JSONBlob(http.StatusOK, b)
}

// checkOrdered returns nil when tag, which the allocator refused as not
// plain, is an ordered tag this instance can serve, and the error to
// answer otherwise.
func (s *server) checkOrdered(ctx context.Context, tag string) error {
	if s.cfg.Ordered == nil {
		return newError(http.StatusServiceUnavailable, codeUnavailable,
			"biz tag %q is ordered, and ordered tags are served by instances with --sequences on; retry later", tag)
	}
	ordered, err := s.cfg.Ordered.Ordered(ctx, tag)
	switch {
	case err != nil:
		return withTag(tag, err)
	case !ordered: // the store says not plain, and not ordered either
		return withTag(tag, fmt.Errorf("%w: biz tag %q is not served here", sequence.ErrUnavailable, tag))
	}
	return nil
}

// refuseNotPlainRange answers a range of a tag the allocator does not
// serve as plain numbers: a formatted tag's ids are texts, an opaque
// tag's range would show the numbers its ids hide, and a range of an
// ordered tag handed out whole would be used out of order with the
// owner's later ids.
func (s *server) refuseNotPlainRange(c echo.Context, tag string) error {
	if s.cfg.Biz != nil {
		if bt, err := s.bizTag(c, tag); err != nil {
			return err
		} else if bt != nil {
			what := "its ids are texts"
			if bt.Opaque() {
				what = "its ids are opaque: a range would be their numbers, which they hide"
			}
			return withTag(tag, fmt.Errorf("%w: %s, asked for one at a time or in batches", bizid.ErrNotNumeric, what))
		}
	}
	if err := s.checkOrdered(c.Request().Context(), tag); err != nil {
		return err
	}
	return newError(http.StatusBadRequest, codeInvalidRequest,
		"biz tag %q is ordered: its ids are issued one by one by its owner, never as ranges; use get or batch", tag)
}
