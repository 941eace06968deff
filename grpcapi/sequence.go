package grpcapi

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// sequenceServer implements leaf.v1.SequenceService.
type sequenceServer struct {
	svc *service.Service
	log *slog.Logger
}

// sequenceCall answers, before a call's count is read, a call where
// sequences are off, then a space or key that cannot be one.
func (s *sequenceServer) sequenceCall(space, key string) error {
	if err := s.svc.SequenceCall(space, key); err != nil {
		return withCode(service.Classify(err))
	}
	return nil
}

func (s *sequenceServer) Next(ctx context.Context, req *connect.Request[leafv1.NextRequest]) (*connect.Response[leafv1.NextResponse], error) {
	space, key := req.Msg.GetSpace(), req.Msg.GetKey()
	if err := s.sequenceCall(space, key); err != nil {
		return nil, err
	}
	n := 1
	if req.Msg.Count != nil {
		if err := checkCount(req.Msg.GetCount(), sequence.MaxCount); err != nil {
			return nil, err
		}
		n = int(req.Msg.GetCount())
	}
	out := &leafv1.NextResponse{Space: space, Key: key}
	first, err := s.svc.SequenceNext(ctx, space, key, n, nil)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	out.Seqs = make([]int64, n)
	for i := range out.Seqs {
		out.Seqs[i] = first + int64(i)
	}
	return connect.NewResponse(out), nil
}

func (s *sequenceServer) Current(ctx context.Context, req *connect.Request[leafv1.CurrentRequest]) (*connect.Response[leafv1.CurrentResponse], error) {
	space, key := req.Msg.GetSpace(), req.Msg.GetKey()
	if err := s.sequenceCall(space, key); err != nil {
		return nil, err
	}
	v, err := s.svc.SequenceCurrent(ctx, space, key, nil)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.CurrentResponse{Space: space, Key: key, Seq: v}), nil
}

func toSpace(sp sequence.Space) *leafv1.Space {
	return &leafv1.Space{Space: sp.Name, Step: sp.Step, Sections: int32(sp.Sections)}
}

func (s *adminServer) spacesOff() error {
	if err := s.svc.SpacesOff(); err != nil {
		return withCode(service.Classify(err))
	}
	return nil
}

func (s *adminServer) CreateSpace(ctx context.Context, req *connect.Request[leafv1.CreateSpaceRequest]) (*connect.Response[leafv1.CreateSpaceResponse], error) {
	if err := s.spacesOff(); err != nil {
		return nil, err
	}
	m := req.Msg
	ns := service.NewSpace{Name: m.GetSpace(), Step: m.Step}
	if m.Sections != nil {
		v := int64(m.GetSections())
		ns.Sections = &v
	}
	created, err := s.svc.CreateSpace(ctx, ns)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.CreateSpaceResponse{Space: toSpace(created)}), nil
}

func (s *adminServer) ListSpaces(ctx context.Context, req *connect.Request[leafv1.ListSpacesRequest]) (*connect.Response[leafv1.ListSpacesResponse], error) {
	if err := s.spacesOff(); err != nil {
		return nil, err
	}
	spaces, err := s.svc.Spaces(ctx)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	out := &leafv1.ListSpacesResponse{Spaces: make([]*leafv1.Space, 0, len(spaces))}
	for _, sp := range spaces {
		out.Spaces = append(out.Spaces, toSpace(sp))
	}
	return connect.NewResponse(out), nil
}

func (s *adminServer) GetSpace(ctx context.Context, req *connect.Request[leafv1.GetSpaceRequest]) (*connect.Response[leafv1.GetSpaceResponse], error) {
	if err := s.spacesOff(); err != nil {
		return nil, err
	}
	sp, err := s.svc.Space(ctx, req.Msg.GetSpace())
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetSpaceResponse{Space: toSpace(sp)}), nil
}
