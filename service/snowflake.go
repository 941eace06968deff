package service

import (
	"context"

	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// SnowflakeID issues one snowflake id.
func (s *Service) SnowflakeID(ctx context.Context) (int64, error) {
	if s.cfg.Snowflake == nil {
		return 0, ModeOff("snowflake")
	}
	return s.cfg.Snowflake.Next(ctx)
}

// SnowflakeIDs issues n snowflake ids, increasing.
func (s *Service) SnowflakeIDs(ctx context.Context, n int) ([]int64, error) {
	if s.cfg.Snowflake == nil {
		return nil, ModeOff("snowflake")
	}
	ids, err := s.cfg.Snowflake.NextN(ctx, n)
	if err != nil {
		return nil, err
	}
	return ids, checkCount(len(ids), n)
}

// DecodeSnowflake tells the parts of a snowflake id.
func (s *Service) DecodeSnowflake(id int64) (snowflake.ID, error) {
	if s.cfg.Snowflake == nil {
		return snowflake.ID{}, ModeOff("snowflake")
	}
	if id < 0 {
		return snowflake.ID{}, Errorf(InvalidID, "id must be a non-negative 64-bit integer")
	}
	return s.cfg.Snowflake.Decode(id)
}

// UUID makes one version 7 UUID.
func (s *Service) UUID() (uuidv7.UUID, error) {
	if s.cfg.UUIDs == nil {
		return uuidv7.UUID{}, ModeOff("uuid")
	}
	return s.cfg.UUIDs.New(), nil
}

// UUIDs makes n version 7 UUIDs, strictly increasing.
func (s *Service) UUIDs(n int) ([]uuidv7.UUID, error) {
	if s.cfg.UUIDs == nil {
		return nil, ModeOff("uuid")
	}
	out := make([]uuidv7.UUID, n)
	for i := range out {
		out[i] = s.cfg.UUIDs.New()
	}
	return out, nil
}
