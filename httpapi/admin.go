package httpapi

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/segment"
)

func tokenSum(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// requireToken admits a request carrying "Authorization: Bearer <token>".
// Both sides are hashed first so the comparison takes the same time
// whatever the length or content of the guess.
func (s *server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return newError(http.StatusUnauthorized, codeUnauthorized, "missing bearer token")
		}
		got := tokenSum(strings.TrimSpace(token))
		if subtle.ConstantTimeCompare(got[:], s.tokenSum[:]) != 1 {
			return newError(http.StatusUnauthorized, codeUnauthorized, "wrong bearer token")
		}
		return next(c)
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

// int64Field is an int64 in a request body given as a JSON number or a
// decimal string; it remembers whether it was present.
type int64Field struct {
	set bool
	v   int64
}

func (f *int64Field) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return errors.New("must not be null")
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a base-10 64-bit integer", s)
	}
	f.set, f.v = true, v
	return nil
}

// optString is a string field that remembers whether it was present.
type optString struct {
	set bool
	v   string
}

func (f *optString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return errors.New("must not be null")
	}
	if err := json.Unmarshal(b, &f.v); err != nil {
		return errors.New("must be a string")
	}
	f.set = true
	return nil
}

type createTagRequest struct {
	Tag         string     `json:"tag"`
	Step        int64Field `json:"step"`
	MaxID       int64Field `json:"max_id"`
	Description string     `json:"description"`
}

type updateTagRequest struct {
	Step        int64Field `json:"step"`
	MaxID       int64Field `json:"max_id"`
	Description optString  `json:"description"`
}

// decodeJSON reads exactly one JSON object into v: unknown fields, wrong
// types, trailing data and bodies over the limit are errors for the client.
func decodeJSON(c echo.Context, v any) error {
	body := c.Request().Body
	if body == nil {
		return newError(http.StatusBadRequest, codeInvalidRequest, "a JSON body is required")
	}
	b, err := io.ReadAll(body) // bounded by bodyLimit
	if err != nil {
		return bodyError(err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return newError(http.StatusBadRequest, codeInvalidRequest, "a JSON body is required")
	}
	if b[0] != '{' {
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body must hold one JSON object and nothing after it")
	}
	return nil
}

func bodyError(err error) error {
	var (
		mbe  *http.MaxBytesError
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		msg  string
		errs = err.Error()
	)
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, io.EOF):
		msg = "a JSON body is required"
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the body is not complete JSON"
	case errors.As(err, &syn):
		msg = "the body is not JSON: " + syn.Error()
	case errors.As(err, &typ):
		msg = fmt.Sprintf("field %q must be a %s", typ.Field, typ.Type.String())
		if typ.Field == "" {
			msg = "the body must be a JSON object"
		}
	case strings.HasPrefix(errs, "json: unknown field "):
		msg = "unknown field " + strings.TrimPrefix(errs, "json: unknown field ")
	default:
		msg = "invalid JSON body: " + strings.TrimPrefix(errs, "json: ")
	}
	return newError(http.StatusBadRequest, codeInvalidRequest, "%s", msg)
}

func (s *server) tagsOff() error {
	return newError(http.StatusNotFound, codeNotFound, "tag administration is not enabled")
}

func (s *server) adminCreateTag(c echo.Context) error {
	if s.cfg.Tags == nil {
		return s.tagsOff()
	}
	var req createTagRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	t := segment.Tag{Name: req.Tag, Step: segment.DefaultStep, MaxID: 1, Description: req.Description}
	if req.Step.set {
		t.Step = req.Step.v
	}
	if req.MaxID.set {
		t.MaxID = req.MaxID.v
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
	var req updateTagRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	var u segment.TagUpdate
	if req.Step.set {
		u.Step = &req.Step.v
	}
	if req.MaxID.set {
		u.MaxID = &req.MaxID.v
	}
	if req.Description.set {
		u.Description = &req.Description.v
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
