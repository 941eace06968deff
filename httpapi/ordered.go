package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

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

// serveOrdered answers a get (batch false) or a batch of n ids of tag
// when the tag is ordered, from this instance if it owns the tag, else by
// forwarding the request to the owner once. served is false for a tag
// that is not ordered, which the segment allocator serves.
func (s *server) serveOrdered(c echo.Context, tag string, n int, form idForm, batch bool) (served bool, err error) {
	if s.cfg.Ordered == nil {
		return false, nil
	}
	ctx := c.Request().Context()
	ordered, err := s.cfg.Ordered.Ordered(ctx, tag)
	if err != nil {
		return true, withTag(tag, err)
	}
	if !ordered {
		return false, nil
	}
	ids, err := s.cfg.Ordered.NextTag(ctx, tag, n)
	var no *sequence.NotOwnerError
	switch {
	case errors.As(err, &no):
		return true, s.toOwner(c, no.Addr)
	case err != nil:
		return true, withTag(tag, err)
	case len(ids) != n:
		return true, checkBatch(ids, n)
	case !batch:
		return true, writeID(c, ids[0], form)
	}
	b := make([]byte, 0, 32+len(tag)+n*22)
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, tag)
	b = append(b, `,"ids":`...)
	b = appendIDs(b, ids, form)
	b = append(b, '}')
	return true, c.JSONBlob(http.StatusOK, b)
}

// refuseOrderedRange refuses a range of an ordered tag: a range handed
// out whole would be used out of order with the owner's later ids.
func (s *server) refuseOrderedRange(c echo.Context, tag string) error {
	if s.cfg.Ordered == nil {
		return nil
	}
	ordered, err := s.cfg.Ordered.Ordered(c.Request().Context(), tag)
	if err != nil {
		return withTag(tag, err)
	}
	if ordered {
		return newError(http.StatusBadRequest, codeInvalidRequest,
			"biz tag %q is ordered: its ids are issued one by one by its owner, never as ranges; use get or batch", tag)
	}
	return nil
}
