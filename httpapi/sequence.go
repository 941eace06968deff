package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// HeaderForwarded marks a request that an instance forwarded to the owner
// of the key's section or of an ordered or formatted tag (Peer). An
// instance that gets one for a section or tag it does not own answers 503
// with Retry-After rather than forward it again: a request hops at most
// once.
const HeaderForwarded = "Leaf-Forwarded"

// DefaultForwardTimeout bounds a forwarded request when NewPeer is given
// no timeout.
const DefaultForwardTimeout = service.DefaultForwardTimeout

// pathSpaceKey reads the :space and :key parameters, and asks the
// service whether they can be a space's and a key's.
func (s *server) pathSpaceKey(c echo.Context, withKey bool) (string, string, error) {
	space, err := pathParam(c, "space")
	if err != nil {
		return "", "", fmt.Errorf("%w: the space is one path segment, percent-encoded", sequence.ErrInvalidSpace)
	}
	if !withKey {
		return space, "", s.svc.SpaceCall(space)
	}
	key, err := pathParam(c, "key")
	if err != nil {
		return "", "", fmt.Errorf(`%w: the key is one path segment; send a "/" in it as %%2F`, sequence.ErrInvalidKey)
	}
	return space, key, s.svc.SequenceCall(space, key)
}

func (s *server) sequenceNext(c echo.Context) error {
	if err := s.svc.Off(service.ModeSequences); err != nil {
		return err
	}
	space, key, err := s.pathSpaceKey(c, true)
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
	req := c.Request()
	first, err := s.svc.SequenceNext(req.Context(), space, key, n, s.via(req))
	switch {
	case err != nil:
		return err
	case !batch:
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
	return s.current(c, false)
}

// sequenceKey is current as JSON, {"space":…,"key":…,"seq":"…"}, for
// clients that read every answer as JSON (and would read a number above
// 2^53 wrong).
func (s *server) sequenceKey(c echo.Context) error {
	return s.current(c, true)
}

// current answers the last number issued to a key, as plain text or as
// JSON. Another owner is asked with current's path either way, so that an
// owner of an earlier version answers it too; its plain-text answer is
// then written as JSON here.
func (s *server) current(c echo.Context, asJSON bool) error {
	if err := s.svc.Off(service.ModeSequences); err != nil {
		return err
	}
	space, key, err := s.pathSpaceKey(c, true)
	if err != nil {
		return err
	}
	if c.Request().URL.RawQuery != "" {
		return newError(http.StatusBadRequest, codeInvalidRequest, "current takes no query parameters")
	}
	req := c.Request()
	v, err := s.svc.SequenceCurrent(req.Context(), space, key, s.via(req))
	switch {
	case err != nil:
		return err
	case asJSON:
		return c.JSONBlob(http.StatusOK, currentJSON(space, key, strconv.AppendInt(nil, v, 10)))
	}
	return writeID(c, v, decimalForm)
}

// currentJSON is a key's last number, seq (digits), as JSON.
func currentJSON(space, key string, seq []byte) []byte {
	b := make([]byte, 0, 40+len(space)+len(key)+len(seq))
	b = append(b, `{"space":`...)
	b = appendJSONString(b, space)
	b = append(b, `,"key":`...)
	b = appendJSONString(b, key)
	b = append(b, `,"seq":`...)
	b = appendJSONString(b, string(seq))
	return append(b, '}')
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
	if err := s.svc.SpacesOff(); err != nil {
		return err
	}
	body, err := readObject(c, fieldSpace, fieldStep, fieldSections)
	if err != nil {
		return err
	}
	var ns service.NewSpace
	if ns.Name, _, err = body.string(fieldSpace); err != nil {
		return err
	}
	if v, ok, err := body.int64(fieldStep); err != nil {
		return err
	} else if ok {
		ns.Step = &v
	}
	if v, ok, err := body.int64(fieldSections); err != nil {
		return err
	} else if ok {
		ns.Sections = &v
	}
	created, err := s.svc.CreateSpace(c.Request().Context(), ns)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toSpaceJSON(created))
}

func (s *server) adminListSpaces(c echo.Context) error {
	spaces, err := s.svc.Spaces(c.Request().Context())
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
	if err := s.svc.SpacesOff(); err != nil {
		return err
	}
	name, _, err := s.pathSpaceKey(c, false)
	if err != nil {
		return err
	}
	sp, err := s.svc.Space(c.Request().Context(), name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSpaceJSON(sp))
}
