package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// tagJSON is a tag as the API shows it.
type tagJSON struct {
	Tag         string `json:"tag"`
	MaxID       string `json:"max_id"`
	Step        int64  `json:"step"`
	Description string `json:"description"`
	UpdateTime  string `json:"update_time"`
	// Ordered is shown in the answer of a creation with "ordered": true.
	Ordered bool `json:"ordered,omitempty"`
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

// Members of the admin bodies.
const (
	fieldTag         = "tag"
	fieldStep        = "step"
	fieldMaxID       = "max_id"
	fieldDescription = "description"
	fieldOrdered     = "ordered"
)

func (s *server) tagsOff() error {
	return newError(http.StatusNotFound, codeNotFound, "tag administration is not enabled")
}

func (s *server) adminCreateTag(c echo.Context) error {
	if s.cfg.Tags == nil {
		return s.tagsOff()
	}
	body, err := readObject(c, fieldTag, fieldStep, fieldMaxID, fieldDescription, fieldOrdered,
		fieldFormat, fieldReset, fieldTimeZone, fieldOpaque)
	if err != nil {
		return err
	}
	ordered, err := body.bool(fieldOrdered)
	if err != nil {
		return err
	}
	set, special, err := readSettings(body)
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
	if ordered && special {
		// Refused rather than half served: an ordered tag's numbers come
		// from its owner, and formatted or opaque ids from the period rows
		// or the keyed bijection of every instance (docs/business-ids.md).
		return newError(http.StatusBadRequest, codeInvalidFormat,
			"a tag is either ordered or formatted/opaque, not both: give ordered, or format/reset/time_zone/opaque")
	}
	if special {
		return s.createSpecialTag(c, t, set)
	}
	if ordered {
		oa, ok := s.cfg.Tags.(OrderedTagAdmin)
		if !ok || s.cfg.Ordered == nil {
			return newError(http.StatusBadRequest, codeInvalidRequest, "ordered tags are not served here: they need sequences on and one store")
		}
		created, err := oa.CreateOrderedTag(c.Request().Context(), t)
		if err != nil {
			return withTag(t.Name, err)
		}
		out := toTagJSON(created)
		out.Ordered = true
		return c.JSON(http.StatusCreated, out)
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
	sets := map[string]bizid.Settings{}
	if s.cfg.BizTags != nil {
		all, err := s.cfg.BizTags.TagSettings(c.Request().Context())
		if err != nil {
			return err
		}
		for _, set := range all {
			sets[set.Tag] = set
		}
	}
	out := struct {
		Tags []any `json:"tags"`
	}{Tags: make([]any, 0, len(tags))}
	for _, t := range tags {
		set, ok := sets[t.Name]
		out.Tags = append(out.Tags, toSpecialJSON(t, set, ok))
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
	return c.JSON(http.StatusOK, s.tagWithSettings(c.Request().Context(), t))
}

// tagWithSettings is t as the API shows it, with its settings when it has
// some. A failed read of them shows the tag without.
func (s *server) tagWithSettings(ctx context.Context, t segment.Tag) any {
	if s.cfg.BizTags == nil {
		return toTagJSON(t)
	}
	set, kind, err := s.cfg.BizTags.LookupTag(ctx, t.Name)
	return toSpecialJSON(t, set, err == nil && kind == bizid.Special)
}

func (s *server) adminUpdateTag(c echo.Context) error {
	if s.cfg.Tags == nil {
		return s.tagsOff()
	}
	name, err := pathTag(c)
	if err != nil {
		return err
	}
	body, err := readObject(c, fieldStep, fieldMaxID, fieldDescription,
		fieldFormat, fieldReset, fieldTimeZone, fieldOpaque)
	if err != nil {
		return err
	}
	set, special, err := readSettings(body)
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
	if u.Step == nil && u.MaxID == nil && u.Description == nil && !special {
		return newError(http.StatusBadRequest, codeInvalidRequest, "nothing to update: give step, max_id, description, format, reset, time_zone or opaque")
	}
	if err := u.Validate(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if special {
		if err := s.updateSettings(ctx, name, set, body); err != nil {
			return withTag(name, err)
		}
	}
	var t segment.Tag
	if u.Step == nil && u.MaxID == nil && u.Description == nil {
		t, err = s.cfg.Tags.Tag(ctx, name)
	} else {
		t, err = s.cfg.Tags.UpdateTag(ctx, name, u)
	}
	if err != nil {
		return withTag(name, err)
	}
	return c.JSON(http.StatusOK, s.tagWithSettings(ctx, t))
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
