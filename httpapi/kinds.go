package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/base62"
	"github.com/leafid/leaf/uuidv7"
)

// UUIDs makes RFC 9562 version 7 UUIDs (uuidv7.Generator implements it).
type UUIDs interface {
	New() uuidv7.UUID
	Issued() uint64
}

func (s *server) uuidGet(c echo.Context) error {
	if s.cfg.UUIDs == nil {
		return modeOff("uuid")
	}
	u := s.cfg.UUIDs.New()
	return c.Blob(http.StatusOK, echo.MIMETextPlainCharsetUTF8, u.Append(nil))
}

func (s *server) uuidBatch(c echo.Context) error {
	if s.cfg.UUIDs == nil {
		return modeOff("uuid")
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	n, err := queryCount(q, MaxCount)
	if err != nil {
		return err
	}
	b := make([]byte, 0, 16+n*39)
	b = append(b, `{"uuids":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = s.cfg.UUIDs.New().Append(b)
		b = append(b, '"')
	}
	b = append(b, "]}"...)
	return c.JSONBlob(http.StatusOK, b)
}

type decodedUUID struct {
	UUID        string `json:"uuid"`
	Version     int    `json:"version"`
	TimestampMs int64  `json:"timestamp_ms"`
	Time        string `json:"time"`
}

// uuidDecode tells when a version 7 UUID was made. It needs no generator:
// the time is in the UUID.
func (s *server) uuidDecode(c echo.Context) error {
	raw, err := pathParam(c, "uuid")
	if err != nil || raw == "" {
		return newError(http.StatusBadRequest, codeInvalidID, "a UUID in the form xxxxxxxx-xxxx-7xxx-xxxx-xxxxxxxxxxxx is required")
	}
	u, err := uuidv7.Parse(raw)
	if err != nil {
		return newError(http.StatusBadRequest, codeInvalidID, "%s", err.Error())
	}
	t := u.Time()
	return c.JSON(http.StatusOK, decodedUUID{
		UUID:        u.String(),
		Version:     u.Version(),
		TimestampMs: t.UnixMilli(),
		Time:        t.Format(timeLayout),
	})
}

type convertedID struct {
	Decimal string `json:"decimal"`
	Base62  string `json:"base62"`
}

// convert turns an id in one text form into both: /api/convert/decimal/{id}
// reads a decimal id, /api/convert/base62/{id} a base62 one. The form is
// in the path because a string of 11 digits is valid in both.
func (s *server) convert(c echo.Context) error {
	raw, err := pathParam(c, "id")
	if err != nil {
		return newError(http.StatusBadRequest, codeInvalidID, "the id is not validly percent-encoded")
	}
	var id int64
	switch form := c.Param("form"); form {
	case "decimal":
		if raw == "" || !allDigits(raw) {
			return newError(http.StatusBadRequest, codeInvalidID, "a decimal id is a non-negative base-10 64-bit integer")
		}
		if id, err = strconv.ParseInt(raw, 10, 64); err != nil {
			return newError(http.StatusBadRequest, codeInvalidID, "a decimal id is a non-negative base-10 64-bit integer")
		}
	case "base62":
		if id, err = base62.Decode(raw); err != nil {
			if errors.Is(err, base62.ErrInvalid) {
				return newError(http.StatusBadRequest, codeInvalidID, "%s", err.Error())
			}
			return err
		}
	default:
		return newError(http.StatusNotFound, codeNotFound, "no such form: want /api/convert/decimal/{id} or /api/convert/base62/{id}")
	}
	return c.JSON(http.StatusOK, convertedID{Decimal: strconv.FormatInt(id, 10), Base62: base62.Encode(id)})
}

// uuidIssuedDesc is leaf_ids_issued_total for mode "uuid".
var uuidIssuedDesc = prometheus.NewDesc("leaf_ids_issued_total", issuedHelp,
	[]string{"tag"}, prometheus.Labels{"mode": "uuid"})

// uuidCollector exports the UUIDs made as leaf_ids_issued_total{mode="uuid",tag=""}.
type uuidCollector struct{ u UUIDs }

// NewUUIDCollector returns the collector of u's count.
func NewUUIDCollector(u UUIDs) prometheus.Collector { return uuidCollector{u} }

func (c uuidCollector) Describe(ch chan<- *prometheus.Desc) { ch <- uuidIssuedDesc }

func (c uuidCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(uuidIssuedDesc, prometheus.CounterValue, float64(c.u.Issued()), "")
}
