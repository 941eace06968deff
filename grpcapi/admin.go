package grpcapi

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

// requireToken admits a call carrying "authorization: Bearer <token>",
// checked as the HTTP admin API checks it: one refused is counted and
// logged (Service.AdminRefused), one admitted marked with the token's
// fingerprint for the trail of the changes it makes.
func requireToken(svc *service.Service, token string) connect.UnaryInterceptorFunc {
	return requireBearer(svc, token, "grpc", true)
}

// requireBearer admits a call carrying "Authorization: Bearer <token>";
// one refused is counted and logged as edge's (Service.AdminRefused). A
// call admitted is marked with the token's fingerprint when mark is set.
func requireBearer(svc *service.Service, token, edge string, mark bool) connect.UnaryInterceptorFunc {
	want, fingerprint := service.NewToken(token), service.TokenFingerprint(token)
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if err := want.Check(req.Header().Get("Authorization")); err != nil {
				svc.AdminRefused(ctx, edge, req.Peer().Addr, err)
				return nil, fail(service.Unauthorized, "%s", err.Error())
			}
			if mark {
				ctx = service.WithAdmin(ctx, fingerprint)
			}
			return next(ctx, req)
		}
	}
}

// adminServer implements leaf.v1.AdminService.
type adminServer struct {
	svc *service.Service
	log *slog.Logger
}

func toTag(v service.TagView) *leafv1.Tag {
	out := &leafv1.Tag{
		Tag:          v.Name,
		MaxId:        v.MaxID,
		Step:         v.Step,
		Description:  v.Description,
		Ordered:      v.Ordered,
		Format:       v.Format,
		Reset_:       v.Reset,
		TimeZone:     v.TimeZone,
		Opaque:       int32(v.Opaque),
		KeyId:        v.KeyID,
		PrunedBefore: v.PrunedBefore,
		Max:          v.Bound,
	}
	if !v.UpdateTime.IsZero() {
		out.UpdateTime = timestamppb.New(v.UpdateTime)
	}
	return out
}

// settings are the settings members of a call; absent ones stay nil.
func settings(format, reset, timeZone *string, opaque *int32) service.TagSettings {
	g := service.TagSettings{Format: format, Reset: reset, TimeZone: timeZone}
	if opaque != nil {
		bits := int64(*opaque)
		g.Opaque = &bits
	}
	return g
}

func (s *adminServer) CreateTag(ctx context.Context, req *connect.Request[leafv1.CreateTagRequest]) (*connect.Response[leafv1.CreateTagResponse], error) {
	m := req.Msg
	created, err := s.svc.Tags().Create(ctx, service.NewTag{
		Name: m.GetTag(), Step: m.Step, MaxID: m.MaxId, Description: m.GetDescription(),
		Ordered: m.GetOrdered(), Settings: settings(m.Format, m.Reset_, m.TimeZone, m.Opaque),
	})
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.CreateTagResponse{Tag: toTag(created)}), nil
}

func (s *adminServer) ListTags(ctx context.Context, req *connect.Request[leafv1.ListTagsRequest]) (*connect.Response[leafv1.ListTagsResponse], error) {
	tags, err := s.svc.Tags().List(ctx)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	out := &leafv1.ListTagsResponse{Tags: make([]*leafv1.Tag, 0, len(tags))}
	for _, t := range tags {
		out.Tags = append(out.Tags, toTag(t))
	}
	return connect.NewResponse(out), nil
}

func (s *adminServer) GetTag(ctx context.Context, req *connect.Request[leafv1.GetTagRequest]) (*connect.Response[leafv1.GetTagResponse], error) {
	name := req.Msg.GetTag()
	t, err := s.svc.Tags().Get(ctx, name)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.GetTagResponse{Tag: toTag(t)}), nil
}

func (s *adminServer) UpdateTag(ctx context.Context, req *connect.Request[leafv1.UpdateTagRequest]) (*connect.Response[leafv1.UpdateTagResponse], error) {
	m := req.Msg
	name := m.GetTag()
	u := segment.TagUpdate{Step: m.Step, Description: m.Description, MaxID: m.MaxId, Bound: m.Max}
	t, err := s.svc.Tags().Update(ctx, name, u, settings(m.Format, m.Reset_, m.TimeZone, m.Opaque))
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.UpdateTagResponse{Tag: toTag(t)}), nil
}

// RevealId mirrors GET /api/admin/tags/{tag}/reveal/{id}: the checks,
// errors and answer are service.TagAdmin.Reveal's. Like the route, it
// needs the business ids, not the tag administration.
func (s *adminServer) RevealId(ctx context.Context, req *connect.Request[leafv1.RevealIdRequest]) (*connect.Response[leafv1.RevealIdResponse], error) {
	r, err := s.svc.Tags().Reveal(ctx, req.Msg.GetTag(), req.Msg.GetId())
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&leafv1.RevealIdResponse{Tag: r.Tag, Id: r.ID, Number: r.Number}), nil
}

func (s *adminServer) ListSegments(ctx context.Context, req *connect.Request[leafv1.ListSegmentsRequest]) (*connect.Response[leafv1.ListSegmentsResponse], error) {
	if err := s.svc.Off(service.ModeSegment); err != nil {
		return nil, withCode(service.Classify(err))
	}
	seg := s.svc.Parts().Segments
	snap := seg.Snapshot()
	out := &leafv1.ListSegmentsResponse{Buffers: make([]*leafv1.Buffer, 0, len(snap))}
	for _, b := range snap {
		out.Buffers = append(out.Buffers, toBuffer(b))
	}
	return connect.NewResponse(out), nil
}

func toBuffer(b segment.BufferState) *leafv1.Buffer {
	out := &leafv1.Buffer{
		Tag:          b.Tag,
		First:        toSegment(b.Segments[0]),
		Second:       toSegment(b.Segments[1]),
		Current:      int32(b.Current),
		Loading:      b.Loading,
		Step:         b.Step,
		MinStep:      b.MinStep,
		LastError:    b.LastError,
		Issued:       b.Issued,
		Loads:        b.Loads,
		LoadFailures: b.LoadFailures,
		Waits:        b.Waits,
		HighMaxId:    b.HighMaxID,
		Regressions:  b.Regressions,
	}
	if !b.LastLoad.IsZero() {
		out.LastLoad = timestamppb.New(b.LastLoad)
	}
	return out
}

func toSegment(s *segment.SegmentState) *leafv1.Segment {
	if s == nil {
		return nil
	}
	out := &leafv1.Segment{Start: s.Start, End: s.End, Next: s.Next, Remaining: s.Remaining}
	if !s.LoadedAt.IsZero() {
		out.LoadedAt = timestamppb.New(s.LoadedAt)
	}
	return out
}
