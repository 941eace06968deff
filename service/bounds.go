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

// Layout is the layout and the epoch of snowflake ids, as the edges write
// them: what a client needs to decode ids and to compute their bounds
// without a call.
type Layout struct {
	TimeUnit                           string // "ms", "10ms" or "s"
	TimeBits, WorkerBits, SequenceBits int
	Order                              string // "time,worker,sequence" or "time,sequence,worker"
	Epoch                              time.Time
}

// SnowflakeLayout is the layout and the epoch of this service's snowflake
// ids.
func (s *Service) SnowflakeLayout() (Layout, error) {
	if s.cfg.Snowflake == nil {
		return Layout{}, ModeOff("snowflake")
	}
	st := s.cfg.Snowflake.Stats()
	l := st.Layout
	if l == (snowflake.Layout{}) {
		l = snowflake.DefaultLayout()
	}
	return Layout{TimeUnit: snowflake.UnitSymbol(l.Unit), TimeBits: l.TimeBits, WorkerBits: l.WorkerBits,
		SequenceBits: l.SequenceBits, Order: l.Order.String(), Epoch: st.Epoch.UTC()}, nil
}

// UUIDBounds is the lowest and the highest version 7 UUID made at any
// instant from from to to, both included (uuidv7.Bounds): any service's,
// so it is answered with uuid mode off too, as decoding is.
func (s *Service) UUIDBounds(from, to time.Time) (lo, hi uuidv7.UUID, err error) {
	return uuidv7.Bounds(from, to)
}
