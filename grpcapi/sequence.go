package grpcapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"

	"connectrpc.com/connect"

	"github.com/leafid/leaf/leafapi"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/sequence"
)

// Sequences issues per-key sequences (sequence.Sequencer implements it).
// A key whose section another instance owns is a *sequence.NotOwnerError,
// which the call forwards to that owner.
type Sequences interface {
	// NextN takes n numbers of key and returns the first.
	NextN(ctx context.Context, space, key string, n int) (int64, error)
	// Current is the last number issued to key.
	Current(ctx context.Context, space, key string) (int64, error)
}

// SpaceAdmin manages the sequence spaces for the admin calls.
type SpaceAdmin interface {
	CreateSpace(ctx context.Context, s sequence.Space) (sequence.Space, error)
	Space(ctx context.Context, name string) (sequence.Space, error)
	Spaces(ctx context.Context) ([]sequence.Space, error)
}

// OrderedTags serves the segment tags whose ids strictly increase across
// the fleet, each from one owner (sequence.Sequencer implements it).
type OrderedTags = leafapi.OrderedTags

// DefaultForwardTimeout bounds a call forwarded to an owner when
// Config.ForwardTimeout is 0, as the HTTP API's default.
const DefaultForwardTimeout = leafapi.DefaultForwardTimeout

// owned reads the owner's answer to a call forwarded to it through
// leafapi.Forwarder, over its HTTP API (grpcapi does not import httpapi):
// the JSON member of a batch answer (n numbers as strings), or the number
// of a text answer when member is empty.
func owned(ans *leafapi.Answer, member string, n int) ([]int64, error) {
	body, err := ans.OK()
	if err != nil {
		return nil, err
	}
	if member == "" {
		v, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the owner answered %q, not a number", body)
		}
		return []int64{v}, nil
	}
	var batch map[string]json.RawMessage
	var texts []string
	if err := json.Unmarshal(body, &batch); err != nil {
		return nil, fmt.Errorf("the owner's answer: %w", err)
	}
	if err := json.Unmarshal(batch[member], &texts); err != nil {
		return nil, fmt.Errorf("the owner's answer, %s: %w", member, err)
	}
	return decimals(texts, n)
}

// decimals reads the decimal strings of a JSON batch answer.
func decimals(in []string, n int) ([]int64, error) {
	if len(in) != n {
		return nil, errShort(n, len(in))
	}
	out := make([]int64, n)
	for i, s := range in {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the owner answered %q, not a number", s)
		}
		out[i] = v
	}
	return out, nil
}

// sequenceServer implements leaf.v1.SequenceService.
type sequenceServer struct {
	cfg Config
	log *slog.Logger
	fwd *leafapi.Forwarder
}

func sequencesOff() error {
	return fail(leafapi.NotFound, "sequences are not enabled")
}

// spaceKey checks a call's space and key, as the HTTP routes do.
func spaceKey(space, key string) error {
	if err := sequence.ValidateSpace(space); err != nil {
		return withCode(leafapi.Classify(err))
	}
	if err := sequence.ValidateKey(key); err != nil {
		return withCode(leafapi.Classify(err))
	}
	return nil
}

// sequencePath is the HTTP route of a key's next or current number.
func sequencePath(route, space, key string) string {
	return "/api/sequence/" + route + "/" + url.PathEscape(space) + "/" + url.PathEscape(key)
}

func (s *sequenceServer) Next(ctx context.Context, req *connect.Request[leafv1.NextRequest]) (*connect.Response[leafv1.NextResponse], error) {
	if s.cfg.Sequences == nil {
		return nil, sequencesOff()
	}
	space, key := req.Msg.GetSpace(), req.Msg.GetKey()
	if err := spaceKey(space, key); err != nil {
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
	first, err := s.cfg.Sequences.NextN(ctx, space, key, n)
	var no *sequence.NotOwnerError
	switch {
	case errors.As(err, &no):
		if out.Seqs, err = s.fromOwner(ctx, req.Spec().Procedure, no.Addr, sequencePath("next", space, key)+"?count="+strconv.Itoa(n), "seqs", n); err != nil {
			return nil, err
		}
		return connect.NewResponse(out), nil
	case err != nil:
		return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithSpace(space, err))
	}
	out.Seqs = make([]int64, n)
	for i := range out.Seqs {
		out.Seqs[i] = first + int64(i)
	}
	return connect.NewResponse(out), nil
}

// fromOwner forwards a call to the owner at addr as target, a request of
// its HTTP API, and reads the answer's numbers (see owned).
func (s *sequenceServer) fromOwner(ctx context.Context, procedure, addr, target, member string, n int) ([]int64, error) {
	ans, err := s.fwd.Forward(ctx, addr, target, false)
	if err != nil {
		return nil, toError(ctx, s.log, procedure, err)
	}
	v, err := owned(ans, member, n)
	if err != nil {
		return nil, toError(ctx, s.log, procedure, err)
	}
	return v, nil
}

func (s *sequenceServer) Current(ctx context.Context, req *connect.Request[leafv1.CurrentRequest]) (*connect.Response[leafv1.CurrentResponse], error) {
	if s.cfg.Sequences == nil {
		return nil, sequencesOff()
	}
	space, key := req.Msg.GetSpace(), req.Msg.GetKey()
	if err := spaceKey(space, key); err != nil {
		return nil, err
	}
	v, err := s.cfg.Sequences.Current(ctx, space, key)
	var no *sequence.NotOwnerError
	switch {
	case errors.As(err, &no):
		got, err := s.fromOwner(ctx, req.Spec().Procedure, no.Addr, sequencePath("current", space, key), "", 1)
		if err != nil {
			return nil, err
		}
		v = got[0]
	case err != nil:
		return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithSpace(space, err))
	}
	return connect.NewResponse(&leafv1.CurrentResponse{Space: space, Key: key, Seq: v}), nil
}

// ordered serves n ids of a tag the segment allocator refused as not
// plain (segment.ErrNotPlain): an ordered tag, from this instance if it
// owns the tag, else from the owner, asked for a batch through its HTTP
// API. Only such tags get here, so a plain tag's call asks nothing of the
// Sequencer.
func (s *idServer) ordered(ctx context.Context, procedure, tag string, n int) ([]int64, error) {
	target := "/api/segment/batch/" + url.PathEscape(tag) + "?count=" + strconv.Itoa(n)
	ids, ans, err := s.fwd.NextOrdered(ctx, s.cfg.Ordered, tag, n, target, false)
	if err == nil && ans != nil {
		ids, err = owned(ans, "ids", n)
	}
	if err != nil {
		return nil, toError(ctx, s.log, procedure, err)
	}
	return ids, nil
}

func toSpace(sp sequence.Space) *leafv1.Space {
	return &leafv1.Space{Space: sp.Name, Step: sp.Step, Sections: int32(sp.Sections)}
}

func (s *adminServer) spacesOff() error {
	if s.cfg.Spaces == nil {
		return sequencesOff()
	}
	return nil
}

func (s *adminServer) CreateSpace(ctx context.Context, req *connect.Request[leafv1.CreateSpaceRequest]) (*connect.Response[leafv1.CreateSpaceResponse], error) {
	if err := s.spacesOff(); err != nil {
		return nil, err
	}
	m := req.Msg
	sp := sequence.Space{Name: m.GetSpace(), Step: sequence.DefaultStep, Sections: sequence.DefaultSections}
	if m.Step != nil {
		sp.Step = m.GetStep()
	}
	if m.Sections != nil {
		if v := m.GetSections(); v < 1 || v > sequence.MaxSections {
			return nil, withCode(leafapi.Classify(fmt.Errorf("%w: %d, want 1..%d", sequence.ErrInvalidSections, v, sequence.MaxSections)))
		}
		sp.Sections = int(m.GetSections())
	}
	if err := sp.Validate(); err != nil {
		return nil, withCode(leafapi.Classify(err))
	}
	created, err := s.cfg.Spaces.CreateSpace(ctx, sp)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithSpace(sp.Name, err))
	}
	return connect.NewResponse(&leafv1.CreateSpaceResponse{Space: toSpace(created)}), nil
}

func (s *adminServer) ListSpaces(ctx context.Context, req *connect.Request[leafv1.ListSpacesRequest]) (*connect.Response[leafv1.ListSpacesResponse], error) {
	if err := s.spacesOff(); err != nil {
		return nil, err
	}
	spaces, err := s.cfg.Spaces.Spaces(ctx)
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
	name := req.Msg.GetSpace()
	if err := sequence.ValidateSpace(name); err != nil {
		return nil, withCode(leafapi.Classify(err))
	}
	sp, err := s.cfg.Spaces.Space(ctx, name)
	if err != nil {
		return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithSpace(name, err))
	}
	return connect.NewResponse(&leafv1.GetSpaceResponse{Space: toSpace(sp)}), nil
}
