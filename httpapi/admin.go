package httpapi

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
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
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/segment"
)

func tokenSum(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// requireToken admits a request carrying the admin token.
func (s *server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return requireBearer(s.tokenSum)(next)
}

// requireBearer admits a request carrying "Authorization: Bearer <token>"
// where sum is the token's tokenSum. Both sides are hashed first so the
// comparison takes the same time whatever the length or content of the
// guess.
func requireBearer(sum [32]byte) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			scheme, token, ok := strings.Cut(h, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				return newError(http.StatusUnauthorized, codeUnauthorized, "missing bearer token")
			}
			got := tokenSum(strings.TrimSpace(token))
			if subtle.ConstantTimeCompare(got[:], sum[:]) != 1 {
				return newError(http.StatusUnauthorized, codeUnauthorized, "wrong bearer token")
			}
			return next(c)
		}
	}
}

// tagJSON is a tag as the API shows it.
type tagJSON struct {
	Tag         string `json:"tag"`
	MaxID       string `json:"max_id"`
	Step        int64  `json:"step"`
	Description string `json:"description"`
	UpdateTime  string `json:"update_time"`
}

func toTagJSON(t segment.Tag) tagJSON {
	return tagJSON{
		Tag:         t.Name,
		MaxID:       strconv.FormatInt(t.MaxID, 10),
		Step:        t.Step,
		Description: t.Description,
		UpdateTime:  formatTime(t.UpdateTime, time.RFC3339),
	}
}

// A request body is read as exactly one JSON object, member by member, so
// that what encoding/json would let pass unnoticed is refused: a member
// given twice (encoding/json keeps the last), a name in another case
// (encoding/json matches names without case), and members of the wrong
// type, null or not, named in the message.

// Members of the admin bodies.
const (
	fieldTag         = "tag"
	fieldStep        = "step"
	fieldMaxID       = "max_id"
	fieldDescription = "description"
)

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

func (s *server) tagsOff() error {
	return newError(http.StatusNotFound, codeNotFound, "tag administration is not enabled")
}

func (s *server) adminCreateTag(c echo.Context) error {
	if s.cfg.Tags == nil {
		return s.tagsOff()
	}
	body, err := readObject(c, fieldTag, fieldStep, fieldMaxID, fieldDescription)
	if err != nil {
		return err
	}
	t := segment.Tag{Step: segment.DefaultStep, MaxID: 1}
	if t.Name, _, err = body.string(fieldTag); err != nil {
		return err
	}
	if v, ok, err := body.int64(fieldStep); err != nil {
		return err
	} else if ok {
		t.Step = v
	}
	if v, ok, err := body.int64(fieldMaxID); err != nil {
		return err
	} else if ok {
		t.MaxID = v
	}
	if t.Description, _, err = body.string(fieldDescription); err != nil {
		return err
	}
	if err := t.Validate(); err != nil {
		return err
	}
	created, err := s.cfg.Tags.CreateTag(c.Request().Context(), t)
	if err != nil {
		return withTag(t.Name, err)
	}
	return c.JSON(http.StatusCreated, toTagJSON(created))
}

func (s *server) adminListTags(c echo.Context) error {
	if s.cfg.Tags == nil {
		return s.tagsOff()
	}
	tags, err := s.cfg.Tags.Tags(c.Request().Context())
	if err != nil {
		return err
	}
	out := struct {
		Tags []tagJSON `json:"tags"`
	}{Tags: make([]tagJSON, 0, len(tags))}
	for _, t := range tags {
		out.Tags = append(out.Tags, toTagJSON(t))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) adminGetTag(c echo.Context) error {
	if s.cfg.Tags == nil {
		return s.tagsOff()
	}
	name, err := pathTag(c)
	if err != nil {
		return err
	}
	t, err := s.cfg.Tags.Tag(c.Request().Context(), name)
	if err != nil {
		return withTag(name, err)
	}
	return c.JSON(http.StatusOK, toTagJSON(t))
}

func (s *server) adminUpdateTag(c echo.Context) error {
	if s.cfg.Tags == nil {
		return s.tagsOff()
	}
	name, err := pathTag(c)
	if err != nil {
		return err
	}
	body, err := readObject(c, fieldStep, fieldMaxID, fieldDescription)
	if err != nil {
		return err
	}
	var u segment.TagUpdate
	if v, ok, err := body.int64(fieldStep); err != nil {
		return err
	} else if ok {
		u.Step = &v
	}
	if v, ok, err := body.int64(fieldMaxID); err != nil {
		return err
	} else if ok {
		u.MaxID = &v
	}
	if v, ok, err := body.string(fieldDescription); err != nil {
		return err
	} else if ok {
		u.Description = &v
	}
	if u.Step == nil && u.MaxID == nil && u.Description == nil {
		return newError(http.StatusBadRequest, codeInvalidRequest, "nothing to update: give step, max_id or description")
	}
	if err := u.Validate(); err != nil {
		return err
	}
	t, err := s.cfg.Tags.UpdateTag(c.Request().Context(), name, u)
	if err != nil {
		return withTag(name, err)
	}
	return c.JSON(http.StatusOK, toTagJSON(t))
}

// segmentJSON is one half of a tag's buffer.
type segmentJSON struct {
	Start     string `json:"start"`
	End       string `json:"end"`
	Next      string `json:"next"`
	Remaining string `json:"remaining"`
	LoadedAt  string `json:"loaded_at,omitempty"`
}

// bufferJSON is one tag's double buffer.
type bufferJSON struct {
	Tag          string          `json:"tag"`
	Segments     [2]*segmentJSON `json:"segments"`
	Current      int             `json:"current"`
	Loading      bool            `json:"loading"`
	Step         int64           `json:"step"`
	MinStep      int64           `json:"min_step"`
	LastLoad     string          `json:"last_load,omitempty"`
	LastError    string          `json:"last_error,omitempty"`
	Issued       string          `json:"issued"`
	Loads        uint64          `json:"loads"`
	LoadFailures uint64          `json:"load_failures"`
	Waits        uint64          `json:"waits"`
	// HighMaxID is the highest max_id this process received for the tag;
	// Regressions counts the times the row was found behind it.
	HighMaxID   string `json:"high_max_id"`
	Regressions uint64 `json:"regressions"`
}

func toBufferJSON(b segment.BufferState) bufferJSON {
	out := bufferJSON{
		Tag:          b.Tag,
		Current:      b.Current,
		Loading:      b.Loading,
		Step:         b.Step,
		MinStep:      b.MinStep,
		LastLoad:     formatTime(b.LastLoad, timeLayout),
		LastError:    b.LastError,
		Issued:       strconv.FormatUint(b.Issued, 10),
		Loads:        b.Loads,
		LoadFailures: b.LoadFailures,
		Waits:        b.Waits,
		HighMaxID:    strconv.FormatInt(b.HighMaxID, 10),
		Regressions:  b.Regressions,
	}
	for i, seg := range b.Segments {
		if seg == nil {
			continue
		}
		out.Segments[i] = &segmentJSON{
			Start:     strconv.FormatInt(seg.Start, 10),
			End:       strconv.FormatInt(seg.End, 10),
			Next:      strconv.FormatInt(seg.Next, 10),
			Remaining: strconv.FormatInt(seg.Remaining, 10),
			LoadedAt:  formatTime(seg.LoadedAt, timeLayout),
		}
	}
	return out
}

func (s *server) adminSegments(c echo.Context) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	snap := s.cfg.Segments.Snapshot()
	out := struct {
		Segments []bufferJSON `json:"segments"`
	}{Segments: make([]bufferJSON, 0, len(snap))}
	for _, b := range snap {
		out.Segments = append(out.Segments, toBufferJSON(b))
	}
	return c.JSON(http.StatusOK, out)
}
