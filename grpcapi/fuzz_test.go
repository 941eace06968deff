package grpcapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/leafid/leaf/grpcapi"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
)

// procedures are the calls FuzzConnect picks from.
var procedures = func() []string {
	var out []string
	services := leafv1.File_leaf_v1_leaf_proto.Services()
	for i := range services.Len() {
		svc := services.Get(i)
		for j := range svc.Methods().Len() {
			out = append(out, "/"+string(svc.FullName())+"/"+string(svc.Methods().Get(j).Name()))
		}
	}
	return out
}()

// FuzzConnect sends random bodies, as JSON or protobuf, to every call of
// leaf.v1 over the Connect protocol, with and without the admin token,
// through the real allocator, generators and Sequencer. It fails on a panic, an
// internal error, or an answer that is neither a message nor an error in
// Connect's shape.
func FuzzConnect(f *testing.F) {
	fx := newFixture(f, withSequences(f))
	h := grpcapi.New(fx.cfg, http.NotFoundHandler())
	for i := range procedures {
		for _, body := range []string{`{}`, `{"tag":"orders","count":3}`, `{"tag":"","count":-1}`, `{"id":"123"}`,
			`{"uuid":"01890a5d-ac96-774b-bcce-b302099a8057"}`, `{"tag":"orders","step":"10","maxId":"5"}`, "\x0a\x06orders\x10\x05", "not json",
			`{"space":"inbox","key":"k","count":3}`, `{"space":"inbox","key":"","count":0}`, `{"space":"outbox","sections":5}`} {
			f.Add(uint8(i), []byte(body), strings.HasPrefix(body, "{") || body == "not json", true)
		}
	}
	f.Fuzz(func(t *testing.T, pick uint8, body []byte, asJSON, token bool) {
		proc := procedures[int(pick)%len(procedures)]
		req := httptest.NewRequest(http.MethodPost, proc, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/proto")
		if asJSON {
			req.Header.Set("Content-Type", "application/json")
		}
		if token {
			req.Header.Set("Authorization", "Bearer "+adminToken)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			return
		}
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code == "" {
			t.Fatalf("%s %q: %d %q is not a Connect error", proc, body, rec.Code, rec.Body.String())
		}
		if e.Code == "internal" || e.Code == "unknown" {
			t.Fatalf("%s %q: %d %s %q", proc, body, rec.Code, e.Code, e.Message)
		}
	})
}
