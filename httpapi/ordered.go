package httpapi

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/leafapi"
)

// OrderedTags serves the segment tags whose ids strictly increase across
// the fleet, each from one owner (sequence.Sequencer implements it).
type OrderedTags = leafapi.OrderedTags

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
	req := c.Request()
	ids, ans, err := s.fwd.NextOrdered(req.Context(), s.cfg.Ordered, tag, n, req.URL.RequestURI(), req.Header.Get(HeaderForwarded) != "")
	switch {
	case err != nil:
		return err
	case ans != nil:
		return writeAnswer(c, ans)
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
	return leafapi.RefuseOrderedRange(c.Request().Context(), s.cfg.Ordered, tag, "get or batch")
}
