package httpapi

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/service"
)

// via is how a request reached this instance: forwarded by another
// instance when it carries HeaderForwarded, from a caller trust accepts
// (Config.TrustForwarded).
type via struct {
	r     *http.Request
	trust func(*http.Request) bool
}

func (v via) Forwarded() bool {
	return v.r.Header.Get(HeaderForwarded) != "" && (v.trust == nil || v.trust(v.r))
}

// via is how r reached this instance.
func (s *server) via(r *http.Request) via { return via{r: r, trust: s.cfg.TrustForwarded} }

// want is what a route can answer with: texts only in decimal form.
func want(tag string, form idForm) service.Want {
	if form != decimalForm {
		return service.Want{TextsRefused: textForm(tag)}
	}
	return service.Want{}
}

func (s *server) segmentGet(c echo.Context) error {
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	if err := s.svc.SegmentCall(tag); err != nil {
		return err
	}
	form, err := singleForm(c)
	if err != nil {
		return err
	}
	req := c.Request()
	id, err := s.svc.SegmentID(req.Context(), tag, want(tag, form), s.via(req))
	switch {
	case err != nil:
		return err
	case id.Text != "":
		return writeText(c, id.Text)
	}
	return writeID(c, id.N, form)
}

func (s *server) segmentBatch(c echo.Context) error {
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	if err := s.svc.SegmentCall(tag); err != nil {
		return err
	}
	n, form, err := batchQuery(c, MaxCount)
	if err != nil {
		return err
	}
	req := c.Request()
	ids, err := s.svc.SegmentIDs(req.Context(), tag, n, want(tag, form), s.via(req))
	if err != nil {
		return err
	}
	b := make([]byte, 0, 32+len(tag)+n*24)
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, tag)
	b = append(b, `,"ids":`...)
	if ids.Texts != nil {
		b = append(b, '[')
		for i, t := range ids.Texts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, t)
		}
		b = append(b, ']')
	} else {
		b = appendIDs(b, ids.Nums, form)
	}
	b = append(b, '}')
	return c.JSONBlob(http.StatusOK, b)
}

func (s *server) segmentRange(c echo.Context) error {
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	if err := s.svc.SegmentCall(tag); err != nil {
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
	start, count, err := s.svc.SegmentRange(c.Request().Context(), tag, n, "get or batch")
	if err != nil {
		return err
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
	form, err := singleForm(c)
	if err != nil {
		return err
	}
	id, err := s.svc.SnowflakeID(c.Request().Context())
	if err != nil {
		return err
	}
	return writeID(c, id, form)
}

func (s *server) snowflakeBatch(c echo.Context) error {
	n, form, err := batchQuery(c, MaxCount)
	if err != nil {
		return err
	}
	ids, err := s.svc.SnowflakeIDs(c.Request().Context(), n)
	if err != nil {
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
	if err := s.svc.Off(service.ModeSnowflake); err != nil {
		return err
	}
	raw, err := parseID(c)
	if err != nil {
		return err
	}
	d, err := s.svc.DecodeSnowflake(raw)
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
