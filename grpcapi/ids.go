package grpcapi

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/uuidv7"
)

// idServer implements leaf.v1.IdService.
type idServer struct {
	svc *service.Service
	log *slog.Logger
}

// checkCount is the rule of a batch or range's count: 1 to limit.
func checkCount(n int32, limit int) error {
	if n < 1 || int(n) > limit {
		return fail(service.InvalidCount, "count must be a whole number from 1 to %d", limit)
	}
	return nil
}

// numbers: leaf.v1's ids are int64, so a formatted tag's texts are refused
// before any is issued; the HTTP API serves them.
func numbers(tag string) service.Want {
	return service.Want{TextsRefused: service.Errorf(service.NotNumeric, "biz tag %q is formatted: its ids are texts, which the HTTP API serves (GET /api/segment/get/{tag})", tag)}
}

func (s *idServer) GetSegmentId(ctx context.Context, req *connect.Request[leafv1.GetSegmentIdRequest]) (*connect.Response[leafv1.GetSegmentIdResponse], error) {
	tag := req.Msg.GetTag()
	if err := s.segmentsOn(tag); err != nil {
		return nil, err
	}
	// A gRPC call comes from a client, never forwarded (nil Via).
	id, err := s.svc.SegmentID(ctx, tag, numbers(tag), nil)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetSegmentIdResponse{Id: id.N}), nil
}

func (s *idServer) BatchSegmentIds(ctx context.Context, req *connect.Request[leafv1.BatchSegmentIdsRequest]) (*connect.Response[leafv1.BatchSegmentIdsResponse], error) {
	tag := req.Msg.GetTag()
	if err := s.segmentsOn(tag); err != nil {
		return nil, err
	}
	if err := checkCount(req.Msg.GetCount(), service.MaxCount); err != nil {
		return nil, err
	}
	n := int(req.Msg.GetCount())
	ids, err := s.svc.SegmentIDs(ctx, tag, n, numbers(tag), nil)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.BatchSegmentIdsResponse{Tag: tag, Ids: ids.Nums}), nil
}

func (s *idServer) GetSegmentRange(ctx context.Context, req *connect.Request[leafv1.GetSegmentRangeRequest]) (*connect.Response[leafv1.GetSegmentRangeResponse], error) {
	tag := req.Msg.GetTag()
	if err := s.segmentsOn(tag); err != nil {
		return nil, err
	}
	if err := checkCount(req.Msg.GetCount(), service.MaxRangeCount); err != nil {
		return nil, err
	}
	start, count, err := s.svc.SegmentRange(ctx, tag, int(req.Msg.GetCount()), "GetSegmentId or BatchSegmentIds")
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetSegmentRangeResponse{Tag: tag, Start: start, Count: int32(count)}), nil
}

// segmentsOn answers, before a call's count is read, a call for segment
// mode where it is off, and a tag that is not valid.
func (s *idServer) segmentsOn(tag string) error {
	if err := s.svc.SegmentCall(tag); err != nil {
		return withCode(service.Classify(err))
	}
	return nil
}

func (s *idServer) GetSnowflakeId(ctx context.Context, req *connect.Request[leafv1.GetSnowflakeIdRequest]) (*connect.Response[leafv1.GetSnowflakeIdResponse], error) {
	id, err := s.svc.SnowflakeID(ctx)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetSnowflakeIdResponse{Id: id}), nil
}

func (s *idServer) BatchSnowflakeIds(ctx context.Context, req *connect.Request[leafv1.BatchSnowflakeIdsRequest]) (*connect.Response[leafv1.BatchSnowflakeIdsResponse], error) {
	if err := s.svc.Off(service.ModeSnowflake); err != nil {
		return nil, withCode(service.Classify(err))
	}
	if err := checkCount(req.Msg.GetCount(), service.MaxCount); err != nil {
		return nil, err
	}
	ids, err := s.svc.SnowflakeIDs(ctx, int(req.Msg.GetCount()))
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.BatchSnowflakeIdsResponse{Ids: ids}), nil
}

func (s *idServer) DecodeSnowflakeId(ctx context.Context, req *connect.Request[leafv1.DecodeSnowflakeIdRequest]) (*connect.Response[leafv1.DecodeSnowflakeIdResponse], error) {
	d, err := s.svc.DecodeSnowflake(req.Msg.GetId())
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
	u, err := s.svc.UUID()
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetUuidResponse{Uuid: u.String()}), nil
}

func (s *idServer) BatchUuids(ctx context.Context, req *connect.Request[leafv1.BatchUuidsRequest]) (*connect.Response[leafv1.BatchUuidsResponse], error) {
	if err := s.svc.Off(service.ModeUUID); err != nil {
		return nil, withCode(service.Classify(err))
	}
	if err := checkCount(req.Msg.GetCount(), service.MaxCount); err != nil {
		return nil, err
	}
	uuids, err := s.svc.UUIDs(int(req.Msg.GetCount()))
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	out := make([]string, len(uuids))
	for i, u := range uuids {
		out[i] = u.String()
	}
	return connect.NewResponse(&leafv1.BatchUuidsResponse{Uuids: out}), nil
}

// DecodeUuid needs no generator: the time is in the UUID.
func (s *idServer) DecodeUuid(ctx context.Context, req *connect.Request[leafv1.DecodeUuidRequest]) (*connect.Response[leafv1.DecodeUuidResponse], error) {
	u, err := uuidv7.Parse(req.Msg.GetUuid())
	if err != nil {
		return nil, fail(service.InvalidID, "%s", err.Error())
	}
	t := u.Time()
	return connect.NewResponse(&leafv1.DecodeUuidResponse{
		Uuid:        u.String(),
		Version:     int32(u.Version()),
		Time:        timestamppb.New(t),
		TimestampMs: t.UnixMilli(),
	}), nil
}
