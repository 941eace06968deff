package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/service"
)

// Bounds of time: the lowest and highest id of an interval, for finding
// the rows made in it by their key.

// queryTime reads the time parameter name: given once, in RFC 3339
// ("2026-12-07T10:00:00Z", fractions of a second allowed) or in Unix
// milliseconds.
func queryTime(q url.Values, name string) (time.Time, error) {
	vs := q[name]
	if len(vs) != 1 || vs[0] == "" {
		return time.Time{}, newError(http.StatusBadRequest, codeInvalidRequest,
			"%s must be given once, a time in RFC 3339 (2026-12-07T10:00:00Z) or in Unix milliseconds", name)
	}
	s := vs[0]
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, newError(http.StatusBadRequest, codeInvalidRequest,
			"%s %q is neither a time in RFC 3339 (2026-12-07T10:00:00Z) nor in Unix milliseconds", name, s)
	}
	return t, nil
}

// interval reads the from and to parameters.
func interval(c echo.Context) (from, to time.Time, err error) {
	q, err := query(c)
	if err != nil {
		return from, to, err
	}
	if from, err = queryTime(q, "from"); err != nil {
		return from, to, err
	}
	to, err = queryTime(q, "to")
	return from, to, err
}

type snowflakeBounds struct {
	Lowest  string `json:"lowest"`
	Highest string `json:"highest"`
	// LowestTime and HighestTime are the starts of their units of time,
	// as the decode route says them.
	LowestTime  string `json:"lowest_time"`
	HighestTime string `json:"highest_time"`
}

func (s *server) snowflakeBounds(c echo.Context) error {
	if err := s.svc.Off(service.ModeSnowflake); err != nil {
		return err
	}
	from, to, err := interval(c)
	if err != nil {
		return err
	}
	lo, hi, err := s.svc.SnowflakeBounds(from, to)
	if err != nil {
		return err
	}
	dlo, err := s.svc.DecodeSnowflake(lo)
	if err != nil {
		return err
	}
	dhi, err := s.svc.DecodeSnowflake(hi)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, snowflakeBounds{
		Lowest: strconv.FormatInt(lo, 10), Highest: strconv.FormatInt(hi, 10),
		LowestTime: dlo.Time.Format(timeLayout), HighestTime: dhi.Time.Format(timeLayout),
	})
}

type uuidBounds struct {
	Lowest      string `json:"lowest"`
	Highest     string `json:"highest"`
	LowestTime  string `json:"lowest_time"`
	HighestTime string `json:"highest_time"`
}

func (s *server) uuidBounds(c echo.Context) error {
	from, to, err := interval(c)
	if err != nil {
		return err
	}
	lo, hi, err := s.svc.UUIDBounds(from, to)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, uuidBounds{
		Lowest: lo.String(), Highest: hi.String(),
		LowestTime: lo.Time().Format(timeLayout), HighestTime: hi.Time().Format(timeLayout),
	})
}

type apiLayoutJSON struct {
	TimeUnit     string `json:"time_unit"` // "ms", "10ms" or "s"
	TimeBits     int    `json:"time_bits"`
	WorkerBits   int    `json:"worker_bits"`
	SequenceBits int    `json:"sequence_bits"`
	Order        string `json:"order"`
	EpochMs      int64  `json:"epoch_ms"`
	Epoch        string `json:"epoch"`
}

func layoutJSON(l service.Layout) apiLayoutJSON {
	return apiLayoutJSON{
		TimeUnit: l.TimeUnit, TimeBits: l.TimeBits, WorkerBits: l.WorkerBits,
		SequenceBits: l.SequenceBits, Order: l.Order, EpochMs: l.Epoch.UnixMilli(), Epoch: l.Epoch.Format(timeLayout),
	}
}

func (s *server) snowflakeLayout(c echo.Context) error {
	l, err := s.svc.SnowflakeLayout()
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, layoutJSON(l))
}
