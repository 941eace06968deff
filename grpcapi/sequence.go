package grpcapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

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
type OrderedTags interface {
	Ordered(ctx context.Context, tag string) (bool, error)
	NextTag(ctx context.Context, tag string, n int) ([]int64, error)
}

// DefaultForwardTimeout bounds a call forwarded to an owner when
// Config.ForwardTimeout is 0, as the HTTP API's default.
const DefaultForwardTimeout = 2 * time.Second

// maxForwardedBody bounds the answer of a forwarded call: a batch of
// MaxCount numbers fits many times over.
const maxForwardedBody = 1 << 20

// forwarder sends calls for a section or an ordered tag owned elsewhere to
// the owner's HTTP API, marked with leafapi.HeaderForwarded, so that the
// owner answers them itself or refuses them: one hop at most, as the HTTP
// routes forward. grpcapi does not import httpapi; the HTTP API is the
// protocol between instances.
type forwarder struct {
	client *http.Client
}

func newForwarder(timeout time.Duration) *forwarder {
	if timeout <= 0 {
		timeout = DefaultForwardTimeout
	}
	return &forwarder{client: &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     time.Minute,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// get sends GET target (a path and query of the HTTP API) to the owner at
// addr and returns the body of a 200. An error answer of the owner keeps
// its code; an owner that does not answer is unavailable.
func (f *forwarder) get(ctx context.Context, log *slog.Logger, addr, target string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+target, nil)
	if err != nil {
		return nil, fail(leafapi.Unavailable, "the owner at %q cannot be asked; retry later", addr)
	}
	req.Header.Set(leafapi.HeaderForwarded, "1")
	resp, err := f.client.Do(req)
	if err != nil {
		log.DebugContext(ctx, "sequence forward failed", "owner", addr, "err", err)
		return nil, fail(leafapi.Unavailable, "the owner did not answer; retry later")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardedBody))
	if err != nil {
		return nil, fail(leafapi.Unavailable, "the owner did not answer; retry later")
	}
	if resp.StatusCode == http.StatusOK {
		return body, nil
	}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || !known(e.Error.Code) {
		return nil, fail(leafapi.Unavailable, "the owner answered %d; retry later", resp.StatusCode)
	}
	return nil, withCode(e.Error.Code, e.Error.Message)
}

// known reports whether code is one of the API's.
func known(code string) bool {
	for _, c := range leafapi.Codes() {
		if c == code {
			return true
		}
	}
	return false
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
	fwd *forwarder
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
		body, err := s.fwd.get(ctx, s.log, no.Addr, sequencePath("next", space, key)+"?count="+strconv.Itoa(n))
		if err != nil {
			return nil, err
		}
		var batch struct {
			Seqs []string `json:"seqs"`
		}
		if err := json.Unmarshal(body, &batch); err != nil {
			return nil, toError(ctx, s.log, req.Spec().Procedure, fmt.Errorf("the owner's answer: %w", err))
		}
		if out.Seqs, err = decimals(batch.Seqs, n); err != nil {
			return nil, toError(ctx, s.log, req.Spec().Procedure, err)
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
		body, err := s.fwd.get(ctx, s.log, no.Addr, sequencePath("current", space, key))
		if err != nil {
			return nil, err
		}
		if v, err = strconv.ParseInt(string(body), 10, 64); err != nil {
			return nil, toError(ctx, s.log, req.Spec().Procedure, fmt.Errorf("the owner answered %q, not a number", body))
		}
	case err != nil:
		return nil, toError(ctx, s.log, req.Spec().Procedure, leafapi.WithSpace(space, err))
	}
	return connect.NewResponse(&leafv1.CurrentResponse{Space: space, Key: key, Seq: v}), nil
}

// ordered serves n ids of a tag the segment allocator refused as not
// plain (segment.ErrNotPlain): an ordered tag, from this instance if it
// owns the tag, else from the owner through its HTTP API. Only such tags
// get here, so a plain tag's call asks nothing of the Sequencer.
func (s *idServer) ordered(ctx context.Context, procedure, tag string, n int) ([]int64, error) {
	if err := s.checkOrdered(ctx, procedure, tag); err != nil {
		return nil, err
	}
	ids, err := s.cfg.Ordered.NextTag(ctx, tag, n)
	var no *sequence.NotOwnerError
	switch {
	case errors.As(err, &no):
		body, err := s.fwd.get(ctx, s.log, no.Addr, "/api/segment/batch/"+url.PathEscape(tag)+"?count="+strconv.Itoa(n))
		if err != nil {
			return nil, err
		}
		var batch struct {
			IDs []string `json:"ids"`
		}
		if err := json.Unmarshal(body, &batch); err != nil {
			return nil, toError(ctx, s.log, procedure, fmt.Errorf("the owner's answer: %w", err))
		}
		if ids, err = decimals(batch.IDs, n); err != nil {
			return nil, toError(ctx, s.log, procedure, err)
		}
		return ids, nil
	case err == nil && len(ids) != n:
		err = errShort(n, len(ids))
	}
	if err != nil {
		return nil, toError(ctx, s.log, procedure, leafapi.WithTag(tag, err))
	}
	return ids, nil
}

// checkOrdered returns nil when tag, which the allocator refused as not
// plain, is an ordered tag this instance can serve, and the error to
// answer otherwise.
func (s *idServer) checkOrdered(ctx context.Context, procedure, tag string) error {
	if s.cfg.Ordered == nil {
		return fail(leafapi.Unavailable, "biz tag %q is ordered, and ordered tags are served by instances with --sequences on; retry later", tag)
	}
	ord, err := s.cfg.Ordered.Ordered(ctx, tag)
	switch {
	case err != nil:
		return toError(ctx, s.log, procedure, leafapi.WithTag(tag, err))
	case !ord:
		return fail(leafapi.Unavailable, "biz tag %q is not served here; retry later", tag)
	}
	return nil
}

// refuseOrderedRange answers a range of a tag the allocator refused as not
// plain, as the HTTP route does: a range of an ordered tag handed out
// whole would be used out of order with the owner's later ids.
func (s *idServer) refuseOrderedRange(ctx context.Context, procedure, tag string) error {
	if err := s.checkOrdered(ctx, procedure, tag); err != nil {
		return err
	}
	return fail(leafapi.InvalidRequest, "biz tag %q is ordered: its ids are issued one by one by its owner, never as ranges; use GetSegmentId or BatchSegmentIds", tag)
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
