package grpcapi

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/service"
)

// interval reads an interval of time: both ends given and valid.
func interval(from, to *timestamppb.Timestamp) (time.Time, time.Time, error) {
	for _, t := range []struct {
		name string
		ts   *timestamppb.Timestamp
	}{{"from", from}, {"to", to}} {
		if t.ts == nil {
			return time.Time{}, time.Time{}, fail(service.InvalidRequest, "%s is required", t.name)
		}
		if err := t.ts.CheckValid(); err != nil {
			return time.Time{}, time.Time{}, fail(service.InvalidRequest, "%s: %v", t.name, err)
		}
	}
	return from.AsTime(), to.AsTime(), nil
}

func (s *idServer) GetSnowflakeBounds(ctx context.Context, req *connect.Request[leafv1.GetSnowflakeBoundsRequest]) (*connect.Response[leafv1.GetSnowflakeBoundsResponse], error) {
	if err := s.svc.Off(service.ModeSnowflake); err != nil {
		return nil, withCode(service.Classify(err))
	}
	from, to, err := interval(req.Msg.GetFrom(), req.Msg.GetTo())
	if err != nil {
		return nil, err
	}
	lo, hi, err := s.svc.SnowflakeBounds(from, to)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	dlo, err := s.svc.DecodeSnowflake(lo)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	dhi, err := s.svc.DecodeSnowflake(hi)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetSnowflakeBoundsResponse{
		Lowest: lo, Highest: hi, LowestTime: timestamppb.New(dlo.Time), HighestTime: timestamppb.New(dhi.Time),
	}), nil
}

func (s *idServer) GetSnowflakeLayout(ctx context.Context, req *connect.Request[leafv1.GetSnowflakeLayoutRequest]) (*connect.Response[leafv1.GetSnowflakeLayoutResponse], error) {
	l, err := s.svc.SnowflakeLayout()
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(toLayout(l)), nil
}

func (s *idServer) GetUuidBounds(ctx context.Context, req *connect.Request[leafv1.GetUuidBoundsRequest]) (*connect.Response[leafv1.GetUuidBoundsResponse], error) {
	from, to, err := interval(req.Msg.GetFrom(), req.Msg.GetTo())
	if err != nil {
		return nil, err
	}
	lo, hi, err := s.svc.UUIDBounds(from, to)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetUuidBoundsResponse{
		Lowest: lo.String(), Highest: hi.String(), LowestTime: timestamppb.New(lo.Time()), HighestTime: timestamppb.New(hi.Time()),
	}), nil
}
