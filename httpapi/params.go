package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/segment"
)

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

// pathTag reads the :tag parameter; the service judges the name. Any
// name a row of leaf_alloc can have is reachable, percent-encoded where a
// URL path needs it ("/" as %2F, "%" as %25).
func pathTag(c echo.Context) (string, error) {
	tag, err := pathParam(c, "tag")
	switch {
	case errors.Is(err, errSlashInParam):
		return "", fmt.Errorf(`%w: a tag is one path segment; send a "/" in it as %%2F`, segment.ErrInvalidTag)
	case err != nil:
		return "", fmt.Errorf("%w: the tag is not validly percent-encoded", segment.ErrInvalidTag)
	}
	return tag, nil
}
