package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
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

// Members of the admin bodies for formatted and opaque tags.
const (
	fieldFormat   = "format"
	fieldReset    = "reset"
	fieldTimeZone = "time_zone"
	fieldOpaque   = "opaque"
)

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
		return withTag(tag, err)
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
		return withTag(tag, err)
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

func textForm(tag string) error {
	return newError(http.StatusBadRequest, codeInvalidRequest, "biz tag %q is formatted: its ids are texts, which have no decimal or base62 form", tag)
}

// readSettings reads the members of a formatted or opaque tag from an
// admin body; ok says whether any was given.
func readSettings(body jsonObject) (set bizid.Settings, ok bool, err error) {
	var any bool
	if set.Format, any, err = body.string(fieldFormat); err != nil {
		return set, false, err
	}
	ok = ok || any
	var r string
	if r, any, err = body.string(fieldReset); err != nil {
		return set, false, err
	}
	ok = ok || any
	set.Reset = bizid.Reset(r)
	if set.TimeZone, any, err = body.string(fieldTimeZone); err != nil {
		return set, false, err
	}
	ok = ok || any
	var bits int64
	if bits, any, err = body.int64(fieldOpaque); err != nil {
		return set, false, err
	}
	if any && bits != bizid.Bits63 && bits != bizid.Bits53 {
		return set, false, fieldError(fieldOpaque, "must be 63 or 53 (the bits of the ids)")
	}
	set.OpaqueBits = int(bits)
	ok = ok || any
	if set.Formatted() && set.Reset == "" {
		set.Reset = bizid.Never
	}
	return set, ok, nil
}

// bizOff refuses settings when this server cannot keep them.
func (s *server) bizOff() error {
	return newError(http.StatusBadRequest, codeInvalidRequest, "formatted and opaque tags are not enabled on this server (they need one store)")
}

// withKey gives an opaque tag the fingerprint of the current key.
func (s *server) withKey(set *bizid.Settings) error {
	if !set.Opaque() {
		return nil
	}
	id, ok := s.cfg.Biz.CurrentKeyID()
	if !ok {
		return newError(http.StatusBadRequest, codeInvalidFormat, "opaque tags need a key: set --opaque-key (LEAF_OPAQUE_KEY) on every instance")
	}
	set.KeyID = id
	return nil
}

// createSpecialTag creates a formatted or opaque tag.
func (s *server) createSpecialTag(c echo.Context, t segment.Tag, set bizid.Settings) error {
	if s.cfg.Biz == nil || s.cfg.BizTags == nil {
		return s.bizOff()
	}
	set.Tag = t.Name
	if err := s.withKey(&set); err != nil {
		return err
	}
	if set.Opaque() && t.MaxID > int64(1)<<set.OpaqueBits-1 {
		return newError(http.StatusBadRequest, codeInvalidFormat, "max_id %d is outside the %d bits of the tag's opaque ids", t.MaxID, set.OpaqueBits)
	}
	if err := set.Validate(); err != nil {
		return withTag(t.Name, err)
	}
	created, err := s.cfg.BizTags.CreateSpecialTag(c.Request().Context(), t, set)
	if err != nil {
		return withTag(t.Name, err)
	}
	if s.cfg.OnCreate != nil {
		s.cfg.OnCreate(created.Name)
	}
	s.cfg.Biz.Put(set)
	return c.JSON(http.StatusCreated, toSpecialJSON(created, set, true))
}

// updateSettings applies the settings members of a PATCH: settings for
// a plain tag, or a formatted tag's new zone (bizid.CheckChange).
func (s *server) updateSettings(ctx context.Context, name string, given bizid.Settings, body jsonObject) error {
	if s.cfg.Biz == nil || s.cfg.BizTags == nil {
		return s.bizOff()
	}
	old, kind, err := s.cfg.BizTags.LookupTag(ctx, name)
	if err != nil {
		return err
	}
	if kind == bizid.NoRow {
		return segment.ErrUnknownTag
	}
	had := kind == bizid.Special
	if !had && s.cfg.Ordered != nil {
		// An ordered tag is served by its owner as plain numbers; it never
		// takes a format or opaque ids (docs/business-ids.md).
		ordered, err := s.cfg.Ordered.Ordered(ctx, name)
		if err != nil {
			return err
		}
		if ordered {
			return fmt.Errorf("%w: the tag is ordered, and an ordered tag cannot be made formatted or opaque", bizid.ErrFixed)
		}
	}
	next := given
	next.Tag = name
	if had { // members not given keep their values
		next.KeyID, next.PrunedBefore = old.KeyID, old.PrunedBefore
		if _, ok := body[fieldFormat]; !ok {
			next.Format = old.Format
		}
		if _, ok := body[fieldReset]; !ok {
			next.Reset = old.Reset
		}
		if _, ok := body[fieldTimeZone]; !ok {
			next.TimeZone = old.TimeZone
		}
		if _, ok := body[fieldOpaque]; !ok {
			next.OpaqueBits = old.OpaqueBits
		}
	} else if err := s.withKey(&next); err != nil {
		return err
	}
	// What may change at all comes first: a new format of a formatted
	// tag is format_fixed whether or not it would be valid.
	if err := bizid.CheckChange(old, had, next); err != nil {
		return err
	}
	if err := next.Validate(); err != nil {
		return err
	}
	if err := s.cfg.BizTags.SetTagSettings(ctx, old, had, next); err != nil {
		return err
	}
	s.cfg.Biz.Put(next)
	return nil
}

// specialJSON is a tag as the API shows it, with its settings.
type specialJSON struct {
	tagJSON
	Format       string `json:"format,omitempty"`
	Reset        string `json:"reset,omitempty"`
	TimeZone     string `json:"time_zone,omitempty"`
	Opaque       int    `json:"opaque,omitempty"`
	KeyID        string `json:"key_id,omitempty"`
	PrunedBefore string `json:"pruned_before,omitempty"`
}

func toSpecialJSON(t segment.Tag, set bizid.Settings, has bool) any {
	if !has {
		return toTagJSON(t)
	}
	out := specialJSON{tagJSON: toTagJSON(t), Format: set.Format, TimeZone: set.TimeZone,
		Opaque: set.OpaqueBits, KeyID: set.KeyID, PrunedBefore: set.PrunedBefore}
	if set.Formatted() {
		out.Reset = string(set.Reset)
		if out.TimeZone == "" {
			out.TimeZone = "UTC"
		}
	}
	return out
}

// adminReveal turns an opaque id back into its number:
// GET /api/admin/tags/{tag}/reveal/{id}.
func (s *server) adminReveal(c echo.Context) error {
	if s.cfg.Biz == nil {
		return s.bizOff()
	}
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	id, err := parseID(c)
	if err != nil {
		return err
	}
	n, err := s.cfg.Biz.Reveal(c.Request().Context(), tag, id)
	if err != nil {
		return withTag(tag, err)
	}
	b := make([]byte, 0, 64+len(tag))
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, tag)
	b = append(b, `,"id":"`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `","number":"`...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, `"}`...)
	return c.JSONBlob(http.StatusOK, b)
}
