package grpcapi

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/leafapi"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/uuidv7"
)

// idServer implements leaf.v1.IdService.
type idServer struct {
	cfg Config
	log *slog.Logger
	fwd *leafapi.Forwarder
}

func modeOff(mode string) error {
	return fail(leafapi.NotFound, "%s mode is not enabled", mode)
}

// checkCount is the rule of a batch or range's count: 1 to limit.
func checkCount(n int32, limit int) error {
	if n < 1 || int(n) > limit {
		return fail(leafapi.InvalidCount, "count must be a whole number from 1 to %d", limit)
	}
	return nil
}

func (s *idServer) segments(tag string) error {
	if s.cfg.Segments == nil {
		return modeOff("segment")
	}
	if err := segment.ValidateTag(tag); err != nil {
		return withCode(leafapi.Classify(err))
	}
	return nil
}

// special reports whether the allocator serves tag only transformed (a
// formatted or opaque tag it has loaded: segment.Allocator.Special), as
// the HTTP edge asks; a tag's first call learns it from the allocator's
// segment.ErrSpecial.
func (s *idServer) special(tag string) bool {
	sp, ok := s.cfg.Segments.(interface{ Special(tag string) bool })
	return ok && sp.Special(tag)
}

// bizTag returns the tag when it is opaque, nil when it is plain, and
// not_numeric when it is formatted (or ranges is set and it is opaque).
func (s *idServer) bizTag(ctx context.Context, tag string, ranges bool) (*bizid.Tag, error) {
	if s.cfg.Biz == nil {
		return nil, nil
	}
	bt, err := s.cfg.Biz.Lookup(ctx, tag)
	switch {
	case err != nil:
		return nil, withCode(leafapi.Classify(leafapi.WithTag(tag, err)))
	case bt == nil:
		return nil, nil
	case bt.Formatted():
		return nil, fail(leafapi.NotNumeric, "biz tag %q is formatted: its ids are texts, which the HTTP API serves (GET /api/segment/get/{tag})", tag)
	case ranges:
		return nil, fail(leafapi.NotNumeric, "biz tag %q is opaque: a range would be its numbers, which its ids hide; ask for ids one at a time or in batches", tag)
	}
	return bt, nil
}

func (s *idServer) GetSegmentId(ctx context.Context, req *connect.Request[leafv1.GetSegmentIdRequest]) (*connect.Response[leafv1.GetSegmentIdResponse], error) {
	tag := req.Msg.GetTag()
	if err := s.segments(tag); err != nil {
		return nil, err
	}
	if !s.special(tag) {
		id, err := s.cfg.Segments.Next(ctx, tag)
		switch {
		case err == nil:
			return connect.NewResponse(&leafv1.GetSegmentIdResponse{Id: id}), nil
		case !errors.Is(err, segment.ErrNotPlain):
			return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithTag(tag, err))
		}
	}
	// Not plain: an opaque tag, or an ordered one.
	if bt, err := s.bizTag(ctx, tag, false); err != nil {
		return nil, err
	} else if bt != nil {
		id, err := s.cfg.Biz.Next(ctx, bt)
		if err != nil {
			return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithTag(tag, err))
		}
		return connect.NewResponse(&leafv1.GetSegmentIdResponse{Id: id.N}), nil
	}
	ids, err := s.ordered(ctx, req.Spec().Procedure, tag, 1)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&leafv1.GetSegmentIdResponse{Id: ids[0]}), nil
}

func (s *idServer) BatchSegmentIds(ctx context.Context, req *connect.Request[leafv1.BatchSegmentIdsRequest]) (*connect.Response[leafv1.BatchSegmentIdsResponse], error) {
	tag := req.Msg.GetTag()
	if err := s.segments(tag); err != nil {
		return nil, err
	}
	if err := checkCount(req.Msg.GetCount(), leafapi.MaxCount); err != nil {
		return nil, err
	}
	n := int(req.Msg.GetCount())
	if !s.special(tag) {
		ids, err := s.cfg.Segments.NextN(ctx, tag, n)
		if err == nil && len(ids) != n {
			err = errShort(n, len(ids))
		}
		switch {
		case err == nil:
			return connect.NewResponse(&leafv1.BatchSegmentIdsResponse{Tag: tag, Ids: ids}), nil
		case !errors.Is(err, segment.ErrNotPlain):
			return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithTag(tag, err))
		}
	}
	// Not plain: an opaque tag, or an ordered one.
	if bt, err := s.bizTag(ctx, tag, false); err != nil {
		return nil, err
	} else if bt != nil {
		got, err := s.cfg.Biz.NextN(ctx, bt, n)
		if err == nil && len(got) != n {
			err = errShort(n, len(got))
		}
		if err != nil {
			return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithTag(tag, err))
		}
		ids := make([]int64, n)
		for i, id := range got {
			ids[i] = id.N
		}
		return connect.NewResponse(&leafv1.BatchSegmentIdsResponse{Tag: tag, Ids: ids}), nil
	}
	ids, err := s.ordered(ctx, req.Spec().Procedure, tag, n)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&leafv1.BatchSegmentIdsResponse{Tag: tag, Ids: ids}), nil
}

func (s *idServer) GetSegmentRange(ctx context.Context, req *connect.Request[leafv1.GetSegmentRangeRequest]) (*connect.Response[leafv1.GetSegmentRangeResponse], error) {
	tag := req.Msg.GetTag()
	if err := s.segments(tag); err != nil {
		return nil, err
	}
	if err := checkCount(req.Msg.GetCount(), leafapi.MaxRangeCount); err != nil {
		return nil, err
	}
	n := int(req.Msg.GetCount())
	if !s.special(tag) {
		start, count, err := s.cfg.Segments.NextRange(ctx, tag, n)
		if err == nil && (count < 1 || count > n) {
			err = errShort(n, count)
		}
		switch {
		case err == nil:
			return connect.NewResponse(&leafv1.GetSegmentRangeResponse{Tag: tag, Start: start, Count: int32(count)}), nil
		case !errors.Is(err, segment.ErrNotPlain):
			return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithTag(tag, err))
		}
	}
	// Not plain: no range of a formatted, opaque or ordered tag.
	if _, err := s.bizTag(ctx, tag, true); err != nil {
		return nil, err
	}
	err := leafapi.RefuseOrderedRange(ctx, s.cfg.Ordered, tag, "GetSegmentId or BatchSegmentIds")
	return nil, toError(ctx, s.log, req.Spec().Procedure, err)
}

func (s *idServer) GetSnowflakeId(ctx context.Context, req *connect.Request[leafv1.GetSnowflakeIdRequest]) (*connect.Response[leafv1.GetSnowflakeIdResponse], error) {
	if s.cfg.Snowflake == nil {
		return nil, modeOff("snowflake")
	}
	id, err := s.cfg.Snowflake.Next(ctx)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetSnowflakeIdResponse{Id: id}), nil
}

func (s *idServer) BatchSnowflakeIds(ctx context.Context, req *connect.Request[leafv1.BatchSnowflakeIdsRequest]) (*connect.Response[leafv1.BatchSnowflakeIdsResponse], error) {
	if s.cfg.Snowflake == nil {
		return nil, modeOff("snowflake")
	}
	if err := checkCount(req.Msg.GetCount(), leafapi.MaxCount); err != nil {
		return nil, err
	}
	n := int(req.Msg.GetCount())
	ids, err := s.cfg.Snowflake.NextN(ctx, n)
	if err == nil && len(ids) != n {
		err = errShort(n, len(ids))
	}
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.BatchSnowflakeIdsResponse{Ids: ids}), nil
}

func (s *idServer) DecodeSnowflakeId(ctx context.Context, req *connect.Request[leafv1.DecodeSnowflakeIdRequest]) (*connect.Response[leafv1.DecodeSnowflakeIdResponse], error) {
	if s.cfg.Snowflake == nil {
		return nil, modeOff("snowflake")
	}
	if req.Msg.GetId() < 0 {
		return nil, fail(leafapi.InvalidID, "id must be a non-negative 64-bit integer")
	}
	d, err := s.cfg.Snowflake.Decode(req.Msg.GetId())
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.DecodeSnowflakeIdResponse{
		Id:          d.ID,
		Time:        timestamppb.New(d.Time),
		TimestampMs: d.TimestampMs(),
		WorkerId:    d.WorkerID,
		Sequence:    d.Sequence,
	}), nil
}

func (s *idServer) GetUuid(ctx context.Context, req *connect.Request[leafv1.GetUuidRequest]) (*connect.Response[leafv1.GetUuidResponse], error) {
	if s.cfg.UUIDs == nil {
		return nil, modeOff("uuid")
	}
	return connect.NewResponse(&leafv1.GetUuidResponse{Uuid: s.cfg.UUIDs.New().String()}), nil
}

func (s *idServer) BatchUuids(ctx context.Context, req *connect.Request[leafv1.BatchUuidsRequest]) (*connect.Response[leafv1.BatchUuidsResponse], error) {
	if s.cfg.UUIDs == nil {
		return nil, modeOff("uuid")
	}
	if err := checkCount(req.Msg.GetCount(), leafapi.MaxCount); err != nil {
		return nil, err
	}
	out := make([]string, req.Msg.GetCount())
	for i := range out {
		out[i] = s.cfg.UUIDs.New().String()
	}
	return connect.NewResponse(&leafv1.BatchUuidsResponse{Uuids: out}), nil
}

// DecodeUuid needs no generator: the time is in the UUID.
func (s *idServer) DecodeUuid(ctx context.Context, req *connect.Request[leafv1.DecodeUuidRequest]) (*connect.Response[leafv1.DecodeUuidResponse], error) {
	u, err := uuidv7.Parse(req.Msg.GetUuid())
	if err != nil {
		return nil, fail(leafapi.InvalidID, "%s", err.Error())
	}
	t := u.Time()
	return connect.NewResponse(&leafv1.DecodeUuidResponse{
		Uuid:        u.String(),
		Version:     int32(u.Version()),
		Time:        timestamppb.New(t),
		TimestampMs: t.UnixMilli(),
	}), nil
}

// shortError is an allocator that gave other than what it was asked: a
// bug, answered as internal.
type shortError struct{ asked, got int }

func (e shortError) Error() string {
	return "asked for " + itoa(e.asked) + " ids, got " + itoa(e.got)
}

func errShort(asked, got int) error { return shortError{asked, got} }
