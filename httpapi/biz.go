package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
)

// BizIDs serves formatted and opaque tags (bizid.Issuer implements it).
type BizIDs interface {
	// Lookup returns the tag when it is formatted or opaque, nil for a
	// plain tag or a name without a row.
	Lookup(ctx context.Context, tag string) (*bizid.Tag, error)
	Next(ctx context.Context, t *bizid.Tag) (bizid.ID, error)
	// AppendText issues one id of a formatted tag, appending its text.
	AppendText(ctx context.Context, t *bizid.Tag, b []byte) ([]byte, error)
	NextN(ctx context.Context, t *bizid.Tag, n int) ([]bizid.ID, error)
	// Reveal turns an opaque id back into its number.
	Reveal(ctx context.Context, tag string, id int64) (int64, error)
	// CurrentKeyID is the fingerprint of the key new opaque tags get.
	CurrentKeyID() (string, bool)
	// Put serves a tag by new settings at once, after the admin API
	// created or changed them.
	Put(s bizid.Settings) *bizid.Tag
}

// BizAdmin keeps the settings of formatted and opaque tags for the admin
// API (store.Store implements it).
type BizAdmin interface {
	CreateSpecialTag(ctx context.Context, t segment.Tag, s bizid.Settings) (segment.Tag, error)
	SetTagSettings(ctx context.Context, old bizid.Settings, had bool, s bizid.Settings) error
	LookupTag(ctx context.Context, tag string) (bizid.Settings, bizid.Kind, error)
	TagSettings(ctx context.Context) ([]bizid.Settings, error)
}

// bizTag returns the formatted or opaque tag of the request, or nil for
// a plain one (or when the business ids are off).
func (s *server) bizTag(c echo.Context, tag string) (*bizid.Tag, error) {
	if s.cfg.Biz == nil {
		return nil, nil
	}
	bt, err := s.cfg.Biz.Lookup(c.Request().Context(), tag)
	if err != nil {
		return nil, withTag(tag, err)
	}
	return bt, nil
}

// bizGet answers one id of a formatted tag (its text) or an opaque one.
func (s *server) bizGet(c echo.Context, tag string, bt *bizid.Tag, form idForm) error {
	if bt.Formatted() && form != decimalForm {
		return textForm(tag)
	}
	if !bt.Formatted() {
		id, err := s.cfg.Biz.Next(c.Request().Context(), bt)
		if err != nil {
			return withTag(tag, err)
		}
		return writeID(c, id.N, form)
	}
	buf := textBuf.Get().(*[]byte)
	defer textBuf.Put(buf)
	b, err := s.cfg.Biz.AppendText(c.Request().Context(), bt, (*buf)[:0])
	*buf = b[:0]
	if err != nil {
		return s.bizError(c, tag, err)
	}
	res := c.Response()
	res.Header()[echo.HeaderContentType] = textPlain
	res.WriteHeader(http.StatusOK)
	_, err = res.Write(b)
	return err
}

// textBuf holds a formatted id's text while it is written.
var textBuf = sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}

// bizBatch answers a batch of a formatted tag (texts, as JSON strings) or
// of an opaque one (numbers as strings, in no order).
func (s *server) bizBatch(c echo.Context, tag string, bt *bizid.Tag, n int, form idForm) error {
	if bt.Formatted() && form != decimalForm {
		return textForm(tag)
	}
	ids, err := s.cfg.Biz.NextN(c.Request().Context(), bt, n)
	if err != nil {
		return s.bizError(c, tag, err)
	}
	if len(ids) != n {
		return checkBatch(nil, n)
	}
	b := make([]byte, 0, 32+len(tag)+n*24)
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, tag)
	b = append(b, `,"ids":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		if bt.Formatted() {
			b = appendJSONString(b, id.Text)
		} else {
			b = append(b, '"')
			b = appendID(b, id.N, form)
			b = append(b, '"')
		}
	}
	b = append(b, "]}"...)
	return c.JSONBlob(http.StatusOK, b)
}

// bizError answers the error of a formatted or opaque tag's ids: a tag
// served by one owner (bizid.Tag.Owned) that another instance owns has
// its request forwarded there once.
func (s *server) bizError(c echo.Context, tag string, err error) error {
	var no *sequence.NotOwnerError
	if errors.As(err, &no) && s.fwd != nil {
		return s.toOwner(c, no.Addr)
	}
	return withTag(tag, err)
}

func textForm(tag string) error {
	return newError(http.StatusBadRequest, codeInvalidRequest, "biz tag %q is formatted: its ids are texts, which have no decimal or base62 form", tag)
}

// adminReveal turns an opaque id back into its number:
// GET /api/admin/tags/{tag}/reveal/{id}. leafapi.TagAdmin.Reveal checks
// and answers it, as it does leaf.v1.AdminService/RevealId.
func (s *server) adminReveal(c echo.Context) error {
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	id, err := parseID(c)
	if err != nil {
		return err
	}
	r, err := s.tags.Reveal(c.Request().Context(), tag, id)
	if err != nil {
		return err
	}
	b := make([]byte, 0, 64+len(r.Tag))
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, r.Tag)
	b = append(b, `,"id":"`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `","number":"`...)
	b = strconv.AppendInt(b, r.Number, 10)
	b = append(b, `"}`...)
	return c.JSONBlob(http.StatusOK, b)
}
