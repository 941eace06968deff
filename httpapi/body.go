package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// A request body is read as exactly one JSON object, member by member, so
// that what encoding/json would let pass unnoticed is refused: a member
// given twice (encoding/json keeps the last), a name in another case
// (encoding/json matches names without case), and members of the wrong
// type, null or not, named in the message.

// jsonObject is a request body's members, raw, by name.
type jsonObject map[string]json.RawMessage

// readObject reads the body as one JSON object whose members are among
// allowed, each given once. Bodies over the limit, bodies that stop
// arriving and trailing data are errors for the client.
func readObject(c echo.Context, allowed ...string) (jsonObject, error) {
	body := c.Request().Body
	if body == nil {
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "a JSON body is required")
	}
	b, err := io.ReadAll(body) // bounded by bodyLimit
	if err != nil {
		return nil, readError(err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "a JSON body is required")
	}
	if b[0] != '{' {
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "the body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, syntaxError(err)
	}
	obj := make(jsonObject, len(allowed))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		name, _ := tok.(string) // inside an object, a token before ':' is a name
		if !slices.Contains(allowed, name) {
			return nil, newError(http.StatusBadRequest, codeInvalidRequest, "unknown field %s", quoteShort(name))
		}
		if _, dup := obj[name]; dup {
			return nil, newError(http.StatusBadRequest, codeInvalidRequest, "field %q is given more than once", name)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, syntaxError(err)
		}
		obj[name] = v
	}
	if _, err := dec.Token(); err != nil { // the '}'
		return nil, syntaxError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "the body must hold one JSON object and nothing after it")
	}
	return obj, nil
}

// maxNameShown bounds a client's member name quoted back in a message.
const maxNameShown = 64

// quoteShort quotes s, cut to maxNameShown characters.
func quoteShort(s string) string {
	if utf8.RuneCountInString(s) <= maxNameShown {
		return strconv.Quote(s)
	}
	r := []rune(s)[:maxNameShown]
	return strconv.Quote(string(r) + "…")
}

// readError is a failure to read the body. Its text names the
// connection's addresses, so it is never shown.
func readError(err error) error {
	var (
		mbe *http.MaxBytesError
		ne  net.Error
	)
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		// The server's read timeout passed before the body was complete.
		return newError(http.StatusRequestTimeout, codeInvalidRequest, "the request body did not arrive in time")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return newError(http.StatusBadRequest, codeInvalidRequest, "the request body ended before its announced length")
	}
	return newError(http.StatusBadRequest, codeInvalidRequest, "the request body could not be read")
}

// syntaxError is a body that is not one well-formed JSON object.
func syntaxError(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is not complete JSON")
	case errors.As(err, &syn):
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is not JSON: %s", syn.Error())
	}
	return newError(http.StatusBadRequest, codeInvalidRequest, "invalid JSON body: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func fieldError(name, format string, args ...any) error {
	return newError(http.StatusBadRequest, codeInvalidRequest, "%s %s", name, fmt.Sprintf(format, args...))
}

// int64 reads member name as a whole number: a JSON number, or a string
// of decimal digits with an optional minus sign (ids above 2^53 lose
// precision as JSON numbers in JavaScript). ok is false when it is absent.
func (o jsonObject) int64(name string) (v int64, ok bool, err error) {
	raw, ok := o[name]
	if !ok {
		return 0, false, nil
	}
	s := string(raw)
	switch {
	case s == "null":
		return 0, false, fieldError(name, "must not be null")
	case s[0] == '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, fieldError(name, "must be a number")
		}
		if !allDigits(strings.TrimPrefix(s, "-")) || strings.TrimPrefix(s, "-") == "" {
			return 0, false, fieldError(name, "must be a number")
		}
	case s[0] == '-' || '0' <= s[0] && s[0] <= '9':
		if strings.ContainsAny(s, ".eE") {
			return 0, false, fieldError(name, "must be a whole number")
		}
	default:
		return 0, false, fieldError(name, "must be a number")
	}
	v, err = strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fieldError(name, "must be a whole number from %d to %d", int64(math.MinInt64), int64(math.MaxInt64))
	}
	return v, true, nil
}

// bool reads member name as true or false; absent is false.
func (o jsonObject) bool(name string) (bool, error) {
	raw, ok := o[name]
	if !ok {
		return false, nil
	}
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fieldError(name, "must be true or false")
}

// string reads member name as a string; ok is false when it is absent.
func (o jsonObject) string(name string) (v string, ok bool, err error) {
	raw, ok := o[name]
	if !ok {
		return "", false, nil
	}
	if string(raw) == "null" {
		return "", false, fieldError(name, "must not be null")
	}
	if raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", false, fieldError(name, "must be a string")
	}
	return v, true, nil
}
