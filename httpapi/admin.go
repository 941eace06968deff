package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

// tagJSON is a tag as the API shows it, with the settings of a formatted
// or opaque tag (service.TagView).
type tagJSON struct {
	Tag         string `json:"tag"`
	MaxID       string `json:"max_id"`
	Step        int64  `json:"step"`
	Description string `json:"description"`
	UpdateTime  string `json:"update_time"`
	// Ordered is shown in the answer of a creation with "ordered": true.
	Ordered      bool   `json:"ordered,omitempty"`
	Format       string `json:"format,omitempty"`
	Reset        string `json:"reset,omitempty"`
	TimeZone     string `json:"time_zone,omitempty"`
	Opaque       int    `json:"opaque,omitempty"`
	KeyID        string `json:"key_id,omitempty"`
	PrunedBefore string `json:"pruned_before,omitempty"`
	// Max is the tag's declared bound, absent when it has none.
	Max string `json:"max,omitempty"`
}

func toTagJSON(v service.TagView) tagJSON {
	return tagJSON{
		Tag:          v.Name,
		MaxID:        strconv.FormatInt(v.MaxID, 10),
		Step:         v.Step,
		Description:  v.Description,
		UpdateTime:   formatTime(v.UpdateTime, time.RFC3339),
		Ordered:      v.Ordered,
		Format:       v.Format,
		Reset:        v.Reset,
		TimeZone:     v.TimeZone,
		Opaque:       v.Opaque,
		KeyID:        v.KeyID,
		PrunedBefore: v.PrunedBefore,
		Max:          bound(v.Bound),
	}
}

// Members of the admin bodies.
const (
	fieldTag         = "tag"
	fieldStep        = "step"
	fieldMaxID       = "max_id"
	fieldMax         = "max"
	fieldDescription = "description"
	fieldOrdered     = "ordered"
	// Formatted and opaque tags.
	fieldFormat   = "format"
	fieldReset    = "reset"
	fieldTimeZone = "time_zone"
	fieldOpaque   = "opaque"
)

// readSettings reads the members of a formatted or opaque tag from an
// admin body; service.TagAdmin checks them.
func readSettings(body jsonObject) (service.TagSettings, error) {
	var g service.TagSettings
	for _, m := range []struct {
		name string
		to   **string
	}{{fieldFormat, &g.Format}, {fieldReset, &g.Reset}, {fieldTimeZone, &g.TimeZone}} {
		if v, ok, err := body.string(m.name); err != nil {
			return g, err
		} else if ok {
			*m.to = &v
		}
	}
	if v, ok, err := body.int64(fieldOpaque); err != nil {
		return g, err
	} else if ok {
		g.Opaque = &v
	}
	return g, nil
}

func (s *server) adminCreateTag(c echo.Context) error {
	body, err := readObject(c, fieldTag, fieldStep, fieldMaxID, fieldDescription, fieldOrdered,
		fieldFormat, fieldReset, fieldTimeZone, fieldOpaque)
	if err != nil {
		return err
	}
	ordered, err := body.bool(fieldOrdered)
	if err != nil {
		return err
	}
	set, err := readSettings(body)
	if err != nil {
		return err
	}
	n := service.NewTag{Ordered: ordered, Settings: set}
	if n.Name, _, err = body.string(fieldTag); err != nil {
		return err
	}
	if v, ok, err := body.int64(fieldStep); err != nil {
		return err
	} else if ok {
		n.Step = &v
	}
	if v, ok, err := body.int64(fieldMaxID); err != nil {
		return err
	} else if ok {
		n.MaxID = &v
	}
	if n.Description, _, err = body.string(fieldDescription); err != nil {
		return err
	}
	created, err := s.svc.Tags().Create(c.Request().Context(), n)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toTagJSON(created))
}

func (s *server) adminListTags(c echo.Context) error {
	tags, err := s.svc.Tags().List(c.Request().Context())
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
	name, err := pathTag(c)
	if err != nil {
		return err
	}
	t, err := s.svc.Tags().Get(c.Request().Context(), name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toTagJSON(t))
}

func (s *server) adminUpdateTag(c echo.Context) error {
	name, err := pathTag(c)
	if err != nil {
		return err
	}
	if err := s.svc.Tags().Named(name); err != nil {
		return err
	}
	body, err := readObject(c, fieldStep, fieldMaxID, fieldDescription, fieldMax,
		fieldFormat, fieldReset, fieldTimeZone, fieldOpaque)
	if err != nil {
		return err
	}
	set, err := readSettings(body)
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
	if v, ok, err := body.int64(fieldMax); err != nil {
		return err
	} else if ok {
		u.Bound = &v
	}
	t, err := s.svc.Tags().Update(c.Request().Context(), name, u, set)
	if err != nil {
		return err
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
	if err := s.svc.Off(service.ModeSegment); err != nil {
		return err
	}
	snap := s.parts.Segments.Snapshot()
	out := struct {
		Segments []bufferJSON `json:"segments"`
	}{Segments: make([]bufferJSON, 0, len(snap))}
	for _, b := range snap {
		out.Segments = append(out.Segments, toBufferJSON(b))
	}
	return c.JSON(http.StatusOK, out)
}

// bound is a declared bound as the admin answers write it, "" for none.
func bound(b int64) string {
	if b <= 0 {
		return ""
	}
	return strconv.FormatInt(b, 10)
}
