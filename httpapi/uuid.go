package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/uuidv7"
)

func (s *server) uuidGet(c echo.Context) error {
	u, err := s.svc.UUID()
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMETextPlainCharsetUTF8, u.Append(nil))
}

func (s *server) uuidBatch(c echo.Context) error {
	if err := s.svc.Off(service.ModeUUID); err != nil {
		return err
	}
	q, err := query(c)
	if err != nil {
		return err
	}
	n, err := queryCount(q, MaxCount)
	if err != nil {
		return err
	}
	uuids, err := s.svc.UUIDs(n)
	if err != nil {
		return err
	}
	b := make([]byte, 0, 16+n*39)
	b = append(b, `{"uuids":[`...)
	for i, u := range uuids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = u.Append(b)
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
