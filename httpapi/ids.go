package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/segment"
)

// timeLayout is RFC 3339 in UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// parseCount reads a batch size: 1..MaxCount in plain decimal digits.
func parseCount(s string) (int, error) {
	if s == "" {
		return 0, newError(http.StatusBadRequest, codeInvalidCount, "count is required, 1 to %d", MaxCount)
	}
	if !allDigits(s) {
		return 0, newError(http.StatusBadRequest, codeInvalidCount, "count must be a whole number from 1 to %d", MaxCount)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxCount {
		return 0, newError(http.StatusBadRequest, codeInvalidCount, "count must be a whole number from 1 to %d", MaxCount)
	}
	return n, nil
}

// parseID reads a snowflake id: a non-negative base-10 int64, digits only.
func parseID(s string) (int64, error) {
	if s == "" || !allDigits(s) {
		return 0, newError(http.StatusBadRequest, codeInvalidID, "id must be a non-negative base-10 64-bit integer")
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, newError(http.StatusBadRequest, codeInvalidID, "id must be a non-negative base-10 64-bit integer")
	}
	return id, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pathTag reads, unescapes and validates the :tag parameter: clients that
// escape every character outside A-Z a-z 0-9 (":" as %3A, say) reach the
// same tag.
func pathTag(c echo.Context) (string, error) {
	tag := c.Param("tag")
	if strings.Contains(tag, "%") {
		unescaped, err := url.PathUnescape(tag)
		if err != nil {
			return "", fmt.Errorf("%w: %q is not a valid escaped path segment", segment.ErrInvalidTag, tag)
		}
		tag = unescaped
	}
	if err := segment.ValidateTag(tag); err != nil {
		return "", err
	}
	return tag, nil
}

func modeOff(mode string) error {
	return newError(http.StatusNotFound, codeNotFound, "%s mode is not enabled", mode)
}

// appendIDs writes ids as a JSON array of strings.
func appendIDs(b []byte, ids []int64) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, id, 10)
		b = append(b, '"')
	}
	return append(b, ']')
}

func checkBatch(ids []int64, n int) error {
	if len(ids) != n {
		return fmt.Errorf("asked for %d ids, got %d", n, len(ids))
	}
	return nil
}

func (s *server) segmentGet(c echo.Context) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	id, err := s.cfg.Segments.Next(c.Request().Context(), tag)
	if err != nil {
		return withTag(tag, err)
	}
	return c.Blob(http.StatusOK, echo.MIMETextPlainCharsetUTF8, strconv.AppendInt(nil, id, 10))
}

func (s *server) segmentBatch(c echo.Context) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	n, err := parseCount(c.QueryParam("count"))
	if err != nil {
		return err
	}
	ids, err := s.cfg.Segments.NextN(c.Request().Context(), tag, n)
	if err != nil {
		return withTag(tag, err)
	}
	if err := checkBatch(ids, n); err != nil {
		return err
	}
	// The tag is validated: A-Z a-z 0-9 . _ : - need no JSON escaping.
	b := make([]byte, 0, 32+len(tag)+n*22)
	b = append(b, `{"tag":"`...)
	b = append(b, tag...)
	b = append(b, `","ids":`...)
	b = appendIDs(b, ids)
	b = append(b, '}')
	return c.JSONBlob(http.StatusOK, b)
}

func (s *server) snowflakeGet(c echo.Context) error {
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	id, err := s.cfg.Snowflake.Next(c.Request().Context())
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMETextPlainCharsetUTF8, strconv.AppendInt(nil, id, 10))
}

func (s *server) snowflakeBatch(c echo.Context) error {
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	n, err := parseCount(c.QueryParam("count"))
	if err != nil {
		return err
	}
	ids, err := s.cfg.Snowflake.NextN(c.Request().Context(), n)
	if err != nil {
		return err
	}
	if err := checkBatch(ids, n); err != nil {
		return err
	}
	b := make([]byte, 0, 16+n*22)
	b = append(b, `{"ids":`...)
	b = appendIDs(b, ids)
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
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	raw, err := parseID(c.Param("id"))
	if err != nil {
		return err
	}
	d, err := s.cfg.Snowflake.Decode(raw)
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

// formatTime renders t in UTC, or "" for the zero time.
func formatTime(t time.Time, layout string) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(layout)
}
