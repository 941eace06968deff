package grpcapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/leafid/leaf/internal/fleettest"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// procedure is a call of leaf.v1 and its messages.
type procedure struct {
	path    string
	in, out protoreflect.MessageType
}

// procedures are the calls FuzzConnect picks from.
var procedures = func() []procedure {
	var out []procedure
	services := leafv1.File_leaf_v1_leaf_proto.Services()
	for i := range services.Len() {
		svc := services.Get(i)
		for j := range svc.Methods().Len() {
			m := svc.Methods().Get(j)
			in, err1 := protoregistry.GlobalTypes.FindMessageByName(m.Input().FullName())
			res, err2 := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
			if err1 != nil || err2 != nil {
				panic(fmt.Sprint(err1, err2))
			}
			out = append(out, procedure{path: "/" + string(svc.FullName()) + "/" + string(m.Name()), in: in, out: res})
		}
	}
	return out
}()

// pick is the index of a procedure by its name, for the seeds.
func pick(name string) uint8 {
	for i, p := range procedures {
		if strings.HasSuffix(p.path, "/"+name) {
			return uint8(i)
		}
	}
	panic("no procedure " + name)
}

// connectSeed is a call: the procedure, its body as JSON (or protobuf when
// proto is set), whether it carries the admin token, and whether it goes
// to the second instance.
type connectSeed struct {
	call                 string
	body                 string
	proto, token, second bool
}

// connectSeeds reach every kind of id over Connect, in this order in `go
// test`.
var connectSeeds = []connectSeed{
	{call: "GetSegmentId", body: `{"tag":"orders"}`},
	{call: "BatchSegmentIds", body: `{"tag":"orders","count":3}`, second: true},
	{call: "GetSegmentRange", body: `{"tag":"order/v2","count":1000}`},
	{call: "GetSegmentId", body: "\x0a\x06orders", proto: true},
	{call: "BatchSegmentIds", body: `{"tag":"","count":-1}`},
	{call: "GetSegmentId", body: `{"tag":"misconfigured"}`},
	{call: "GetSegmentId", body: `{"tag":"exhausted"}`},
	{call: "GetSegmentId", body: "not json"},
	{call: "GetSegmentId", body: `{"tag":"orders","tag":"x"}`},
	{call: "GetSegmentId", body: `{"tag":"a\u0000b"}`},
	{call: "GetSegmentId", body: "\x0a\x02\xff\xfe", proto: true},
	// Formatted: not_numeric over gRPC, and nothing taken.
	{call: "GetSegmentId", body: `{"tag":"open"}`},
	{call: "BatchSegmentIds", body: `{"tag":"cap","count":5}`},
	{call: "GetSegmentRange", body: `{"tag":"capday","count":5}`},
	// Opaque, and their reveals.
	{call: "GetSegmentId", body: `{"tag":"opq"}`},
	{call: "BatchSegmentIds", body: `{"tag":"opq53","count":100}`, second: true},
	{call: "GetSegmentRange", body: `{"tag":"opq","count":5}`},
	{call: "RevealId", body: fmt.Sprintf(`{"tag":"opq","id":"%d"}`, fleettest.OpaqueID(63, 1)), token: true},
	{call: "RevealId", body: fmt.Sprintf(`{"tag":"opq53","id":"%d"}`, fleettest.OpaqueID(53, 3)), token: true, second: true},
	{call: "RevealId", body: `{"tag":"opq","id":"12345"}`, token: true},
	{call: "RevealId", body: `{"tag":"opq53","id":"9007199254740991"}`, token: true, second: true},
	{call: "RevealId", body: `{"tag":"opq53","id":"9007199254740992"}`, token: true},
	{call: "RevealId", body: `{"tag":"opq","id":"-1"}`, token: true},
	{call: "RevealId", body: `{"tag":"opq","id":"0"}`, token: true},
	{call: "RevealId", body: `{"tag":"open","id":"1"}`, token: true},
	{call: "RevealId", body: `{"tag":"nope","id":"1"}`, token: true},
	{call: "RevealId", body: `{"tag":"opq","id":"1"}`},
	// Ordered, one owned by each instance: forwarded to the owner's HTTP
	// API.
	{call: "GetSegmentId", body: `{"tag":"ordered"}`, second: true},
	{call: "GetSegmentId", body: `{"tag":"ord"}`},
	{call: "BatchSegmentIds", body: `{"tag":"ord","count":25}`},
	{call: "BatchSegmentIds", body: `{"tag":"ordered","count":10000}`},
	{call: "GetSegmentRange", body: `{"tag":"ord","count":3}`},
	// Sequences: odd keys, counts, both instances.
	{call: "Next", body: `{"space":"inbox","key":"k","count":3}`},
	{call: "Next", body: `{"space":"inbox","key":"alice"}`, second: true},
	{call: "Next", body: `{"space":"inbox","key":"bob","count":10000}`},
	{call: "Next", body: `{"space":"inbox","key":"会话/1"}`},
	{call: "Next", body: `{"space":"inbox","key":"\u0000"}`},
	{call: "Next", body: `{"space":"inbox","key":"","count":0}`},
	{call: "Next", body: `{"space":"tight","key":"k","count":10000}`},
	{call: "Next", body: `{"space":"会话","key":"😀"}`},
	{call: "Next", body: `{"space":"outbox","key":"k"}`},
	{call: "Current", body: `{"space":"inbox","key":"bob"}`, second: true},
	{call: "Current", body: `{"space":"inbox","key":"never"}`},
	// Admin: hostile creations and changes of every kind.
	{call: "CreateTag", body: `{"tag":"g1","format":"G-{seq:2!}"}`, token: true},
	{call: "CreateTag", body: `{"tag":"g2","ordered":true,"opaque":53}`, token: true},
	{call: "CreateTag", body: `{"tag":"g3","reset":"day"}`, token: true},
	{call: "CreateTag", body: `{"tag":"g4","ordered":true,"maxId":"9223372036854775806"}`, token: true},
	{call: "BatchSegmentIds", body: `{"tag":"g4","count":2}`},
	{call: "GetSegmentId", body: `{"tag":"g4"}`, second: true},
	{call: "CreateTag", body: `{"tag":"g5","opaque":63,"step":"1000000"}`, token: true},
	{call: "BatchSegmentIds", body: `{"tag":"g5","count":10000}`},
	{call: "CreateTag", body: `{"tag":"g6","step":"2147483648"}`, token: true},
	{call: "CreateTag", body: `{"tag":"g9","format":""}`, token: true},
	{call: "BatchSegmentIds", body: `{"tag":"g9","count":2}`},
	{call: "UpdateTag", body: `{"tag":"orders","format":"O-{seq:2!}"}`, token: true},
	{call: "UpdateTag", body: `{"tag":"ord","maxId":"9223372036854775807"}`, token: true},
	{call: "UpdateTag", body: `{"tag":"capday","timeZone":"Pacific/Kiritimati"}`, token: true},
	{call: "CreateSpace", body: `{"space":"g7","step":"1","sections":4096}`, token: true},
	{call: "CreateSpace", body: `{"space":"g8","sections":5}`},
	{call: "ListTags", body: `{}`, token: true},
	{call: "ListSegments", body: `{}`, token: true},
	{call: "ListSpaces", body: `{}`, token: true, second: true},
	{call: "GetSpace", body: `{"space":"inbox"}`, token: true},
	{call: "GetTag", body: `{"tag":"cap"}`, token: true},
	{call: "GetSnowflakeId", body: `{}`},
	{call: "BatchSnowflakeIds", body: `{"count":10000}`, second: true},
	{call: "DecodeSnowflakeId", body: `{"id":"-5"}`},
	{call: "GetUuid", body: `{}`},
	{call: "DecodeUuid", body: `{"uuid":"01890a5d-ac96-774b-bcce-b302099a8057"}`},
}

// FuzzConnect sends random bodies, as JSON or protobuf, to every call of
// leaf.v1 over the Connect protocol, with and without the admin token, to
// either of two instances (internal/fleettest: the real allocators,
// generators, Issuers and Sequencers over one in-memory database, the
// second owning some sections and tags). It fails on a panic, an
// internal error, an answer that is neither the call's message nor an
// error in Connect's shape with a code of the table, a slow answer, or an
// id that breaks the rules of fleettest.Ledger.
func FuzzConnect(f *testing.F) {
	for _, s := range connectSeeds {
		f.Add(pick(s.call), []byte(s.body), !s.proto, s.token, s.second)
	}
	for i := range procedures {
		for _, body := range []string{`{}`, `{"tag":"orders","count":3}`, `{"space":"inbox","key":"k","count":3}`, "\x0a\x06orders\x10\x05"} {
			f.Add(uint8(i), []byte(body), strings.HasPrefix(body, "{"), true, false)
		}
	}
	fl := fleettest.New(f)
	f.Fuzz(func(t *testing.T, pick uint8, body []byte, asJSON, token, second bool) {
		call(t, fl, procedures[int(pick)%len(procedures)], body, asJSON, token, second)
	})
}

// call sends one call to the fleet and checks its answer.
func call(t *testing.T, fl *fleettest.Fleet, p procedure, body []byte, asJSON, token, second bool) {
	t.Helper()
	defer fl.Tick()
	req := httptest.NewRequest(http.MethodPost, p.path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/proto")
	if asJSON {
		req.Header.Set("Content-Type", "application/json")
	}
	if token {
		req.Header.Set("Authorization", "Bearer "+fleettest.Token)
	}
	in := fl.A
	if second {
		in = fl.B
	}
	rec := httptest.NewRecorder()
	start := time.Now()
	in.Handler.ServeHTTP(rec, req)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("%s %q took %v", p.path, body, took)
	}
	if err := checkConnect(fl.Ledger, p, body, asJSON, rec); err != nil {
		t.Fatalf("%s %q (to %s): %d %.300q: %v", p.path, body, in.Name, rec.Code, rec.Body, err)
	}
	if err := fl.Fault(); err != nil {
		t.Fatalf("after %s %q (to %s): %v", p.path, body, in.Name, err)
	}
}

// connectError is an error in Connect's JSON shape.
type connectError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Type  string          `json:"type"`
		Value string          `json:"value"`
		Debug json.RawMessage `json:"debug"`
	} `json:"details"`
}

// checkConnect checks one answer, and the ids it holds against the ledger.
func checkConnect(l *fleettest.Ledger, p procedure, body []byte, asJSON bool, rec *httptest.ResponseRecorder) error {
	in := p.in.New().Interface()
	if asJSON {
		_ = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(body, in) // as connect reads it
	} else {
		_ = proto.Unmarshal(body, in)
	}
	if rec.Code != http.StatusOK {
		var e connectError
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code == "" {
			return fmt.Errorf("not a Connect error (%v)", err)
		}
		if e.Code == connect.CodeInternal.String() || e.Code == connect.CodeUnknown.String() {
			return fmt.Errorf("code %s", e.Code)
		}
		code, err := leafCode(e)
		if err != nil {
			return err
		}
		if t, ok := in.(interface{ GetTag() string }); ok && code != "" {
			l.Answered(t.GetTag(), code)
		}
		return checkRefusal(l, in, code)
	}
	res := p.out.New().Interface()
	if asJSON {
		if err := protojson.Unmarshal(rec.Body.Bytes(), res); err != nil {
			return fmt.Errorf("not the answer in JSON: %v", err)
		}
	} else if err := proto.Unmarshal(rec.Body.Bytes(), res); err != nil {
		return fmt.Errorf("not the answer in protobuf: %v", err)
	}
	switch res := res.(type) {
	case *leafv1.GetSegmentIdResponse:
		return segmentIDs(l, in.(*leafv1.GetSegmentIdRequest).GetTag(), []int64{res.GetId()})
	case *leafv1.BatchSegmentIdsResponse:
		req := in.(*leafv1.BatchSegmentIdsRequest)
		if res.GetTag() != req.GetTag() || len(res.GetIds()) != int(req.GetCount()) {
			return fmt.Errorf("%d ids of %q, asked %d of %q", len(res.GetIds()), res.GetTag(), req.GetCount(), req.GetTag())
		}
		return segmentIDs(l, res.GetTag(), res.GetIds())
	case *leafv1.GetSegmentRangeResponse:
		req := in.(*leafv1.GetSegmentRangeRequest)
		if res.GetTag() != req.GetTag() || res.GetCount() > req.GetCount() {
			return fmt.Errorf("range of %d of %q, asked %d of %q", res.GetCount(), res.GetTag(), req.GetCount(), req.GetTag())
		}
		return l.Range(res.GetTag(), res.GetStart(), int(res.GetCount()))
	case *leafv1.GetSnowflakeIdResponse:
		return l.Snowflake([]int64{res.GetId()})
	case *leafv1.BatchSnowflakeIdsResponse:
		return l.Snowflake(res.GetIds())
	case *leafv1.NextResponse:
		req := in.(*leafv1.NextRequest)
		n := int32(1)
		if req.Count != nil {
			n = req.GetCount()
		}
		if res.GetSpace() != req.GetSpace() || res.GetKey() != req.GetKey() || len(res.GetSeqs()) != int(n) {
			return fmt.Errorf("%d numbers of %q/%q, asked %d of %q/%q", len(res.GetSeqs()), res.GetSpace(), res.GetKey(), n, req.GetSpace(), req.GetKey())
		}
		return l.Next(res.GetSpace(), res.GetKey(), res.GetSeqs())
	case *leafv1.CurrentResponse:
		req := in.(*leafv1.CurrentRequest)
		if res.GetSpace() != req.GetSpace() || res.GetKey() != req.GetKey() {
			return fmt.Errorf("current of %q/%q, asked of %q/%q", res.GetSpace(), res.GetKey(), req.GetSpace(), req.GetKey())
		}
		return l.Current(res.GetSpace(), res.GetKey(), res.GetSeq())
	case *leafv1.RevealIdResponse:
		req := in.(*leafv1.RevealIdRequest)
		if res.GetTag() != req.GetTag() || res.GetId() != req.GetId() {
			return fmt.Errorf("reveal of %q %d answered for %q %d", req.GetTag(), req.GetId(), res.GetTag(), res.GetId())
		}
		return l.Reveal(res.GetTag(), res.GetId(), res.GetNumber())
	}
	return nil
}

// checkRefusal fails when a call's tag, space or key is refused as
// invalid although it is valid by the API's rules, or an opaque id the
// ledger saw issued is refused a reveal.
func checkRefusal(l *fleettest.Ledger, in proto.Message, code string) error {
	switch m := in.(type) {
	case *leafv1.RevealIdRequest:
		if code == service.InvalidID && l.Issued(m.GetTag(), m.GetId()) {
			return fmt.Errorf("reveal of %d, an id %q issued, refused", m.GetId(), m.GetTag())
		}
		if code == service.InvalidTag && segment.ValidateTag(m.GetTag()) == nil {
			return fmt.Errorf("the valid tag %q refused", m.GetTag())
		}
	case *leafv1.CreateTagRequest: // a new tag's name has the stricter rule
		if code == service.InvalidTag && (segment.Tag{Name: m.GetTag(), Step: 1, MaxID: 1}).Validate() == nil {
			return fmt.Errorf("the valid new tag %q refused", m.GetTag())
		}
	case interface{ GetTag() string }:
		if code == service.InvalidTag && segment.ValidateTag(m.GetTag()) == nil {
			return fmt.Errorf("the valid tag %q refused", m.GetTag())
		}
	case interface {
		GetSpace() string
		GetKey() string
	}:
		if (code == service.InvalidKey || code == service.InvalidSpace) && sequence.ValidateSpace(m.GetSpace()) == nil && sequence.ValidateKey(m.GetKey()) == nil {
			return fmt.Errorf("the valid space %q and key %q refused", m.GetSpace(), m.GetKey())
		}
	}
	return nil
}

// segmentIDs checks the ids of a segment tag: numbers, or the numbers of
// a tag given a format that an instance still serves from its buffer.
func segmentIDs(l *fleettest.Ledger, tag string, ids []int64) error {
	if !l.Formatted(tag) {
		return l.IDs(tag, ids)
	}
	texts := make([]string, len(ids))
	for i, id := range ids {
		texts[i] = strconv.FormatInt(id, 10)
	}
	return l.Texts(tag, texts)
}

// leafCode is the code of the table an error carries in its ErrorInfo,
// which must agree with its Connect code; "" for an error of Connect's
// own (a body it cannot read), which has none.
func leafCode(e connectError) (string, error) {
	for _, d := range e.Details {
		if d.Type != "google.rpc.ErrorInfo" {
			continue
		}
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d.Value, "="))
		if err != nil {
			return "", fmt.Errorf("detail %q: %v", d.Value, err)
		}
		var info errdetails.ErrorInfo
		if err := proto.Unmarshal(raw, &info); err != nil {
			return "", fmt.Errorf("detail: %v", err)
		}
		code := strings.ToLower(info.GetReason())
		if !known(code) || code == service.Internal || info.GetDomain() != "leaf" || service.GRPCCode(code).String() != e.Code {
			return "", fmt.Errorf("reason %q of domain %q with code %s", info.GetReason(), info.GetDomain(), e.Code)
		}
		return code, nil
	}
	switch e.Code {
	case connect.CodeInvalidArgument.String(), connect.CodeUnimplemented.String(), connect.CodeResourceExhausted.String():
		return "", nil // Connect's own refusal of the request
	}
	return "", fmt.Errorf("code %s without the code of the table", e.Code)
}

func known(code string) bool {
	for _, c := range service.Codes() {
		if c == code {
			return true
		}
	}
	return false
}

// TestFuzzConnectSeedsReach: the seeds of FuzzConnect reach every kind of
// id that leaf.v1 serves, on both instances and forwarded between them.
func TestFuzzConnectSeedsReach(t *testing.T) {
	fl := fleettest.New(t)
	for _, s := range connectSeeds {
		call(t, fl, procedures[pick(s.call)], []byte(s.body), !s.proto, s.token, s.second)
	}
	got := fl.Ledger.Reached()
	for _, what := range []string{
		fleettest.KindPlain, fleettest.KindOrdered, fleettest.KindOpaque63, fleettest.KindOpaque53,
		"range", "snowflake", "reveal", "sequence", "current", "owner",
		"forward:" + fleettest.KindOrdered, "forward:sequence",
	} {
		if got[what] == 0 {
			t.Errorf("the seeds never reached %q; reached %v", what, got)
		}
	}
}
