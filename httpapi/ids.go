package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/segment"
)

func modeOff(mode string) error {
	return newError(http.StatusNotFound, codeNotFound, "%s mode is not enabled", mode)
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
	form, err := singleForm(c)
	if err != nil {
		return err
	}
	if s.special(tag) {
		return s.serveNotPlain(c, tag, 1, form, false)
	}
	id, err := s.cfg.Segments.Next(c.Request().Context(), tag)
	if errors.Is(err, segment.ErrNotPlain) {
		return s.serveNotPlain(c, tag, 1, form, false)
	}
	if err != nil {
		return withTag(tag, err)
	}
	return writeID(c, id, form)
}

func (s *server) segmentBatch(c echo.Context) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	tag, err := pathTag(c)
	if err != nil {
		return err
	}
	n, form, err := batchQuery(c, MaxCount)
	if err != nil {
		return err
	}
	if s.special(tag) {
		return s.serveNotPlain(c, tag, n, form, true)
	}
	ids, err := s.cfg.Segments.NextN(c.Request().Context(), tag, n)
	if errors.Is(err, segment.ErrNotPlain) {
		return s.serveNotPlain(c, tag, n, form, true)
	}
	if err != nil {
		return withTag(tag, err)
	}
	if err := checkBatch(ids, n); err != nil {
		return err
	}
	b := make([]byte, 0, 32+len(tag)+n*22)
	b = append(b, `{"tag":`...)
	b = appendJSONString(b, tag)
	b = append(b, `,"ids":`...)
	b = appendIDs(b, ids, form)
	b = append(b, '}')
	return c.JSONBlob(http.StatusOK, b)
}

func (s *server) segmentRange(c echo.Context) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	tag, err := pathTag(c)
	if err != nil {
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
	if s.special(tag) {
		return s.refuseNotPlainRange(c, tag)
	}
	start, count, err := s.cfg.Segments.NextRange(c.Request().Context(), tag, n)
	if errors.Is(err, segment.ErrNotPlain) {
		return s.refuseNotPlainRange(c, tag)
	}
	if err != nil {
		return withTag(tag, err)
	}
	if count < 1 || count > n {
		return fmt.Errorf("asked for a range of up to %d ids, got %d", n, count)
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
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	form, err := singleForm(c)
	if err != nil {
		return err
	}
	id, err := s.cfg.Snowflake.Next(c.Request().Context())
	if err != nil {
		return err
	}
	return writeID(c, id, form)
}
func (s *server) snowflakeBatch(c echo.Context) error {
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	n, form, err := batchQuery(c, MaxCount)
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
	if s.cfg.Snowflake == nil {
		return modeOff("snowflake")
	}
	raw, err := parseID(c)
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
