package service

import (
	"time"

	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// SnowflakeBounds is the lowest and the highest snowflake id of this
// service's layout and epoch made at any instant from from to to, both
// included (snowflake.Layout.Bounds).
func (s *Service) SnowflakeBounds(from, to time.Time) (lo, hi int64, err error) {
	if s.cfg.Snowflake == nil {
		return 0, 0, ModeOff("snowflake")
	}
	return s.cfg.Snowflake.Bounds(from, to)
}

// SnowflakeLayout is the layout and the epoch of this service's snowflake
// ids: what a client needs to decode them and to compute their bounds
// without a call.
func (s *Service) SnowflakeLayout() (snowflake.Layout, time.Time, error) {
	if s.cfg.Snowflake == nil {
		return snowflake.Layout{}, time.Time{}, ModeOff("snowflake")
	}
	st := s.cfg.Snowflake.Stats()
	return st.Layout, st.Epoch, nil
}

// UUIDBounds is the lowest and the highest version 7 UUID made at any
// instant from from to to, both included (uuidv7.Bounds): any service's,
// so it is answered with uuid mode off too, as decoding is.
func (s *Service) UUIDBounds(from, to time.Time) (lo, hi uuidv7.UUID, err error) {
	return uuidv7.Bounds(from, to)
}
