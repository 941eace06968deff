package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/leafapi"
	"github.com/leafid/leaf/sequence"
)

// Sequences issues per-key sequences (sequence.Sequencer implements it).
type Sequences interface {
	// NextN takes n numbers of key and returns the first.
	NextN(ctx context.Context, space, key string, n int) (int64, error)
	// Current is the last number issued to key.
	Current(ctx context.Context, space, key string) (int64, error)
	// Stats are the figures of the status page.
	Stats() sequence.Stats
}

// SpaceAdmin manages the sequence spaces for the admin API.
type SpaceAdmin interface {
	CreateSpace(ctx context.Context, s sequence.Space) (sequence.Space, error)
	Space(ctx context.Context, name string) (sequence.Space, error)
	Spaces(ctx context.Context) ([]sequence.Space, error)
}

// HeaderForwarded marks a request that an instance forwarded to the owner
// of the key's section or of an ordered tag. An instance that gets one for
// a section it does not own answers 503 with Retry-After rather than
// forward it again: a request hops at most once.
const HeaderForwarded = leafapi.HeaderForwarded

// DefaultForwardTimeout bounds a forwarded request when
// Config.ForwardTimeout is 0.
const DefaultForwardTimeout = leafapi.DefaultForwardTimeout

func (s *server) sequencesOff() error {
	return newError(http.StatusNotFound, codeNotFound, "sequences are not enabled")
}

// pathSpaceKey reads the :space and :key parameters.
func pathSpaceKey(c echo.Context, withKey bool) (string, string, error) {
	space, err := pathParam(c, "space")
	if err != nil {
		return "", "", fmt.Errorf("%w: the space is one path segment, percent-encoded", sequence.ErrInvalidSpace)
	}
	if err := sequence.ValidateSpace(space); err != nil {
		return "", "", err
	}
	if !withKey {
		return space, "", nil
	}
	key, err := pathParam(c, "key")
	if err != nil {
		return "", "", fmt.Errorf(`%w: the key is one path segment; send a "/" in it as %%2F`, sequence.ErrInvalidKey)
	}
	if err := sequence.ValidateKey(key); err != nil {
		return "", "", err
	}
	return space, key, nil
}

func (s *server) sequenceNext(c echo.Context) error {
	if s.cfg.Sequences == nil {
		return s.sequencesOff()
	}
	space, key, err := pathSpaceKey(c, true)
	if err != nil {
		return err
	}
	n, batch := 1, false
	if c.Request().URL.RawQuery != "" {
		q, err := query(c)
		if err != nil {
			return err
		}
		if _, ok := q["count"]; ok {
			if n, err = queryCount(q, sequence.MaxCount); err != nil {
				return err
			}
			batch = true
		}
	}
	first, err := s.cfg.Sequences.NextN(c.Request().Context(), space, key, n)
	if err != nil {
		return s.sequenceError(c, space, err)
	}
	if !batch {
		return writeID(c, first, decimalForm)
	}
	b := make([]byte, 0, 48+len(space)+len(key)+n*22)
	b = append(b, `{"space":`...)
	b = appendJSONString(b, space)
	b = append(b, `,"key":`...)
	b = appendJSONString(b, key)
	b = append(b, `,"seqs":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, first+int64(i), 10)
		b = append(b, '"')
	}
	b = append(b, "]}"...)
	return c.JSONBlob(http.StatusOK, b)
}

func (s *server) sequenceCurrent(c echo.Context) error {
	if s.cfg.Sequences == nil {
		return s.sequencesOff()
	}
	space, key, err := pathSpaceKey(c, true)
	if err != nil {
		return err
	}
	if c.Request().URL.RawQuery != "" {
		return newError(http.StatusBadRequest, codeInvalidRequest, "current takes no query parameters")
	}
	v, err := s.cfg.Sequences.Current(c.Request().Context(), space, key)
	if err != nil {
		return s.sequenceError(c, space, err)
	}
	return writeID(c, v, decimalForm)
}

// sequenceError answers an error of the Sequencer: a section owned by
// another instance is forwarded there, once.
func (s *server) sequenceError(c echo.Context, space string, err error) error {
	var no *sequence.NotOwnerError
	if !errors.As(err, &no) {
		return leafapi.WithSpace(space, err)
	}
	return s.toOwner(c, no.Addr)
}

// toOwner forwards the request to the owner at addr, unless it was
// forwarded here already: then it is a 503, never forwarded again.
func (s *server) toOwner(c echo.Context, addr string) error {
	req := c.Request()
	ans, err := s.fwd.Forward(req.Context(), addr, req.URL.RequestURI(), req.Header.Get(HeaderForwarded) != "")
	if err != nil {
		return err
	}
	return writeAnswer(c, ans)
}

// writeAnswer answers with the owner's answer to a forwarded request.
func writeAnswer(c echo.Context, ans *leafapi.Answer) error {
	if ans.RetryAfter != "" {
		c.Response().Header().Set("Retry-After", ans.RetryAfter)
	}
	ct := ans.ContentType
	if ct == "" {
		ct = echo.MIMETextPlainCharsetUTF8
	}
	return c.Blob(ans.Status, ct, ans.Body)
}

// spaceJSON is a space as the API shows it.
type spaceJSON struct {
	Space    string `json:"space"`
	Step     int64  `json:"step"`
	Sections int    `json:"sections"`
}

func toSpaceJSON(s sequence.Space) spaceJSON {
	return spaceJSON{Space: s.Name, Step: s.Step, Sections: s.Sections}
}

// Members of the admin body of a space.
const (
	fieldSpace    = "space"
	fieldSections = "sections"
)

func (s *server) adminCreateSpace(c echo.Context) error {
	if s.cfg.Spaces == nil {
		return s.sequencesOff()
	}
	body, err := readObject(c, fieldSpace, fieldStep, fieldSections)
	if err != nil {
		return err
	}
	sp := sequence.Space{Step: sequence.DefaultStep, Sections: sequence.DefaultSections}
	if sp.Name, _, err = body.string(fieldSpace); err != nil {
		return err
	}
	if v, ok, err := body.int64(fieldStep); err != nil {
		return err
	} else if ok {
		sp.Step = v
	}
	if v, ok, err := body.int64(fieldSections); err != nil {
		return err
	} else if ok {
		if v < 1 || v > sequence.MaxSections {
			return fmt.Errorf("%w: %d, want 1..%d", sequence.ErrInvalidSections, v, sequence.MaxSections)
		}
		sp.Sections = int(v)
	}
	if err := sp.Validate(); err != nil {
		return err
	}
	created, err := s.cfg.Spaces.CreateSpace(c.Request().Context(), sp)
	if err != nil {
		return leafapi.WithSpace(sp.Name, err)
	}
	return c.JSON(http.StatusCreated, toSpaceJSON(created))
}

func (s *server) adminListSpaces(c echo.Context) error {
	if s.cfg.Spaces == nil {
		return s.sequencesOff()
	}
	spaces, err := s.cfg.Spaces.Spaces(c.Request().Context())
	if err != nil {
		return err
	}
	out := struct {
		Spaces []spaceJSON `json:"spaces"`
	}{Spaces: make([]spaceJSON, 0, len(spaces))}
	for _, sp := range spaces {
		out.Spaces = append(out.Spaces, toSpaceJSON(sp))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *server) adminGetSpace(c echo.Context) error {
	if s.cfg.Spaces == nil {
		return s.sequencesOff()
	}
	name, _, err := pathSpaceKey(c, false)
	if err != nil {
		return err
	}
	sp, err := s.cfg.Spaces.Space(c.Request().Context(), name)
	if err != nil {
		return leafapi.WithSpace(name, err)
	}
	return c.JSON(http.StatusOK, toSpaceJSON(sp))
}
