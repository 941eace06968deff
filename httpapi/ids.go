package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/base62"
	"github.com/leafid/leaf/segment"
)

// timeLayout is RFC 3339 in UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// queryCount reads the count parameter: given once, decimal digits only
// (leading zeros allowed, no sign), from 1 to limit. A query string that
// does not parse is refused whole, since the count may be what was lost.
func queryCount(q url.Values, limit int) (int, error) {
	switch vs := q["count"]; len(vs) {
	case 0:
		return parseCount("", limit)
	case 1:
		return parseCount(vs[0], limit)
	default:
		return 0, newError(http.StatusBadRequest, codeInvalidCount, "count is given %d times; give it once, a whole number from 1 to %d", len(vs), limit)
	}
}

// query parses the request's query string, refusing one that is malformed
// rather than dropping what it cannot read.
func query(c echo.Context) (url.Values, error) {
	q, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "the query string is malformed: %v", err)
	}
	return q, nil
}

// idForm is how ids are written: in decimal, Leaf's form, or as
// fixed-width base62 text that sorts as the numbers do (package base62).
type idForm uint8

const (
	decimalForm idForm = iota
	base62Form
)

// queryForm reads ?format=: absent or "decimal" is decimal, "base62" is
// base62.
func queryForm(q url.Values) (idForm, error) {
	switch vs := q["format"]; {
	case len(vs) == 0 || len(vs) == 1 && vs[0] == "decimal":
		return decimalForm, nil
	case len(vs) == 1 && vs[0] == "base62":
		return base62Form, nil
	}
	return 0, newError(http.StatusBadRequest, codeInvalidRequest, "format must be given once, decimal or base62")
}

// singleForm is queryForm for the single-id routes, which read no query
// at all when there is none: the common case stays free of parsing.
func singleForm(c echo.Context) (idForm, error) {
	if c.Request().URL.RawQuery == "" {
		return decimalForm, nil
	}
	q, err := query(c)
	if err != nil {
		return 0, err
	}
	return queryForm(q)
}

// batchQuery reads a batch's count (1..limit) and form.
func batchQuery(c echo.Context, limit int) (int, idForm, error) {
	q, err := query(c)
	if err != nil {
		return 0, 0, err
	}
	n, err := queryCount(q, limit)
	if err != nil {
		return 0, 0, err
	}
	form, err := queryForm(q)
	return n, form, err
}

// parseCount reads a count of 1..limit in plain decimal digits.
func parseCount(s string, limit int) (int, error) {
	if s == "" {
		return 0, newError(http.StatusBadRequest, codeInvalidCount, "count is required, a whole number from 1 to %d", limit)
	}
	n, err := strconv.Atoi(s)
	if !allDigits(s) || err != nil || n < 1 || n > limit {
		return 0, newError(http.StatusBadRequest, codeInvalidCount, "count must be a whole number from 1 to %d", limit)
	}
	return n, nil
}

// parseID reads a snowflake id from the path: a non-negative base-10
// int64, digits only.
func parseID(c echo.Context) (int64, error) {
	s, err := pathParam(c, "id")
	if err != nil || s == "" || !allDigits(s) {
		return 0, newError(http.StatusBadRequest, codeInvalidID, "id must be a non-negative base-10 64-bit integer")
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, newError(http.StatusBadRequest, codeInvalidID, "id must be a non-negative base-10 64-bit integer")
	}
	return id, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var (
	errSlashInParam = errors.New("a literal slash in a path parameter")
	errBadEscape    = errors.New("a path parameter that is not validly percent-encoded")
)

// pathParam is the path parameter name as the client sent it, with the
// request's percent-encoding decoded exactly once.
//
// Go keeps the path as sent in URL.RawPath only when it differs from the
// default encoding of the decoded URL.Path, and echo routes on RawPath
// when it is set, on Path when not. So the parameter is still encoded
// when RawPath is set and already decoded when it is empty: decoding it in
// both cases would turn a tag sent as "a%253Ab" ("a%3Ab") into "a:b".
//
// A parameter that ends a route gets the rest of the path from echo,
// slashes included; a literal "/" there is a trailing slash or a name
// sent unencoded, refused rather than guessed at.
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if strings.IndexByte(v, '/') >= 0 {
		return "", errSlashInParam
	}
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", errBadEscape
	}
	return u, nil
}

// pathTag reads and validates the :tag parameter. Any name a row of
// leaf_alloc can have is reachable, percent-encoded where a URL path
// needs it ("/" as %2F, "%" as %25).
func pathTag(c echo.Context) (string, error) {
	tag, err := pathParam(c, "tag")
	switch {
	case errors.Is(err, errSlashInParam):
		return "", fmt.Errorf(`%w: a tag is one path segment; send a "/" in it as %%2F`, segment.ErrInvalidTag)
	case err != nil:
		return "", fmt.Errorf("%w: the tag is not validly percent-encoded", segment.ErrInvalidTag)
	}
	if err := segment.ValidateTag(tag); err != nil {
		return "", err
	}
	return tag, nil
}

func modeOff(mode string) error {
	return newError(http.StatusNotFound, codeNotFound, "%s mode is not enabled", mode)
}

// appendIDs writes ids as a JSON array of strings.
func appendIDs(b []byte, ids []int64, form idForm) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = appendID(b, id, form)
		b = append(b, '"')
	}
	return append(b, ']')
}

func appendID(b []byte, id int64, form idForm) []byte {
	if form == base62Form {
		return base62.Append(b, id)
	}
	return strconv.AppendInt(b, id, 10)
}

// appendJSONString writes s as a JSON string. A tag may hold any
// character; the common ones that need no escaping skip encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func checkBatch(ids []int64, n int) error {
	if len(ids) != n {
		return fmt.Errorf("asked for %d ids, got %d", n, len(ids))
	}
	return nil
}

func (s *server) segmentGet(c echo.Context) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	form, err := singleForm(c)
	if err != nil {
		return err
	}
	id, err := s.cfg.Segments.Next(c.Request().Context(), tag)
	if err != nil {
		return withTag(tag, err)
	}
	return writeID(c, id, form)
}

func (s *server) segmentBatch(c echo.Context) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	n, form, err := batchQuery(c, MaxCount)
	if err != nil {
		return err
	}
	ids, err := s.cfg.Segments.NextN(c.Request().Context(), tag, n)
	if err != nil {
		return withTag(tag, err)
	}
	if err := checkBatch(ids, n); err != nil {
		return err
	}
	b := make([]byte, 0, 32+len(tag)+n*22)
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, tag)
	b = append(b, `,"ids":`...)
	b = appendIDs(b, ids, form)
	b = append(b, '}')
	return c.JSONBlob(http.StatusOK, b)
}

func (s *server) segmentRange(c echo.Context) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	n, err := queryCount(q, MaxRangeCount)
	if err != nil {
		return err
	}
	start, count, err := s.cfg.Segments.NextRange(c.Request().Context(), tag, n)
	if err != nil {
		return withTag(tag, err)
	}
	if count < 1 || count > n {
		return fmt.Errorf("asked for a range of up to %d ids, got %d", n, count)
	}
	b := make([]byte, 0, 64+len(tag))
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, tag)
	b = append(b, `,"start":"`...)
	b = strconv.AppendInt(b, start, 10)
	b = append(b, `","count":`...)
	b = strconv.AppendInt(b, int64(count), 10)
	b = append(b, '}')
	return c.JSONBlob(http.StatusOK, b)
}

func (s *server) snowflakeGet(c echo.Context) error {
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	form, err := singleForm(c)
	if err != nil {
		return err
	}
	id, err := s.cfg.Snowflake.Next(c.Request().Context())
	if err != nil {
		return err
	}
	return writeID(c, id, form)
}

// textPlain is the Content-Type of a single id, set as a ready slice:
// Header.Set would allocate one on every request. Nothing changes a
// header's values in place, so the slice is shared.
var textPlain = []string{echo.MIMETextPlainCharsetUTF8}

// idBuf holds the digits of one id while they are written; Write takes
// them through an interface, so a local array would be allocated anyway.
var idBuf = sync.Pool{New: func() any { return new([20]byte) }}

// writeID answers 200 with the id as plain text, in decimal (Leaf's
// answer) or base62.
func writeID(c echo.Context, id int64, form idForm) error {
	res := c.Response()
	res.Header()[echo.HeaderContentType] = textPlain
	res.WriteHeader(http.StatusOK)
	buf := idBuf.Get().(*[20]byte)
	_, err := res.Write(appendID(buf[:0], id, form))
	idBuf.Put(buf)
	return err
}

func (s *server) snowflakeBatch(c echo.Context) error {
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	n, form, err := batchQuery(c, MaxCount)
	if err != nil {
		return err
	}
	ids, err := s.cfg.Snowflake.NextN(c.Request().Context(), n)
	if err != nil {
		return err
	}
	if err := checkBatch(ids, n); err != nil {
		return err
	}
	b := make([]byte, 0, 16+n*22)
	b = append(b, `{"ids":`...)
	b = appendIDs(b, ids, form)
	b = append(b, '}')
	return c.JSONBlob(http.StatusOK, b)
}

type decodedID struct {
	ID          string `json:"id"`
	TimestampMs int64  `json:"timestamp_ms"`
	Time        string `json:"time"`
	WorkerID    int64  `json:"worker_id"`
	Sequence    int64  `json:"sequence"`
}

func (s *server) snowflakeDecode(c echo.Context) error {
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	raw, err := parseID(c)
	if err != nil {
		return err
	}
	d, err := s.cfg.Snowflake.Decode(raw)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, decodedID{
		ID:          strconv.FormatInt(d.ID, 10),
		TimestampMs: d.TimestampMs(),
		Time:        d.Time.UTC().Format(timeLayout),
		WorkerID:    d.WorkerID,
		Sequence:    d.Sequence,
	})
}

// formatTime renders t in UTC, or "" for the zero time.
func formatTime(t time.Time, layout string) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(layout)
}
