package grpcapi

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/service"
)

// Worker-id leases for in-process generators, as the HTTP routes
// /api/snowflake/leases serve them (service/workers.go).

func toWorkerLease(l service.WorkerLease) *leafv1.WorkerLease {
	return &leafv1.WorkerLease{
		WorkerId: l.WorkerID, Lease: l.Token, FloorMs: l.Floor, ReserveMs: l.Reserve, Expires: timestamppb.New(l.Expires),
		Layout: toLayout(l.Layout),
	}
}

func toLayout(l service.Layout) *leafv1.GetSnowflakeLayoutResponse {
	return &leafv1.GetSnowflakeLayoutResponse{
		TimeUnit: l.TimeUnit, TimeBits: int32(l.TimeBits), WorkerBits: int32(l.WorkerBits),
		SequenceBits: int32(l.SequenceBits), Order: l.Order, Epoch: timestamppb.New(l.Epoch), EpochMs: l.Epoch.UnixMilli(),
	}
}

func (s *idServer) AcquireWorkerLease(ctx context.Context, req *connect.Request[leafv1.AcquireWorkerLeaseRequest]) (*connect.Response[leafv1.AcquireWorkerLeaseResponse], error) {
	m := req.Msg
	l, err := s.svc.AcquireWorker(ctx, m.GetHolder(), time.Duration(m.GetTtlMs())*time.Millisecond, m.GetReserveMs())
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.AcquireWorkerLeaseResponse{Lease: toWorkerLease(l)}), nil
}

func (s *idServer) RenewWorkerLease(ctx context.Context, req *connect.Request[leafv1.RenewWorkerLeaseRequest]) (*connect.Response[leafv1.RenewWorkerLeaseResponse], error) {
	m := req.Msg
	l, err := s.svc.RenewWorker(ctx, m.GetWorkerId(), m.GetLease(), time.Duration(m.GetTtlMs())*time.Millisecond, m.GetReserveMs())
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.RenewWorkerLeaseResponse{Lease: toWorkerLease(l)}), nil
}

func (s *idServer) ReleaseWorkerLease(ctx context.Context, req *connect.Request[leafv1.ReleaseWorkerLeaseRequest]) (*connect.Response[leafv1.ReleaseWorkerLeaseResponse], error) {
	m := req.Msg
	if err := s.svc.ReleaseWorker(ctx, m.GetWorkerId(), m.GetLease(), m.GetLastMs()); err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.ReleaseWorkerLeaseResponse{}), nil
}
