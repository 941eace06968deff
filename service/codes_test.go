package service_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"connectrpc.com/connect"

	"github.com/leafid/leaf/service"
)

// TestCodesListed: every code constant of the package is in Codes, and
// Codes holds nothing else, each code once.
func TestCodesListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s is not a string literal", name.Name)
					continue
				}
				code, _ := strconv.Unquote(lit.Value)
				declared = append(declared, code)
			}
		}
	}
	listed := service.Codes()
	slices.Sort(declared)
	slices.Sort(listed)
	if len(declared) < 13 || !slices.Equal(declared, listed) {
		t.Errorf("code constants %q, Codes %q: want the same codes", declared, listed)
	}
	if len(slices.Compact(slices.Clone(listed))) != len(listed) {
		t.Errorf("Codes lists a code twice: %q", listed)
	}
}

// TestStatusAndGRPCCode pins the HTTP status and gRPC code of every code:
// a change here changes what clients see.
func TestStatusAndGRPCCode(t *testing.T) {
	want := map[string]struct {
		status int
		grpc   connect.Code
	}{
		service.InvalidTag:        {http.StatusBadRequest, connect.CodeInvalidArgument},
		service.InvalidID:         {http.StatusBadRequest, connect.CodeInvalidArgument},
		service.InvalidCount:      {http.StatusBadRequest, connect.CodeInvalidArgument},
		service.InvalidRequest:    {http.StatusBadRequest, connect.CodeInvalidArgument},
		service.Unauthorized:      {http.StatusUnauthorized, connect.CodeUnauthenticated},
		service.UnknownTag:        {http.StatusNotFound, connect.CodeNotFound},
		service.NotFound:          {http.StatusNotFound, connect.CodeUnimplemented},
		service.MethodNotAllowed:  {http.StatusMethodNotAllowed, connect.CodeUnimplemented},
		service.TagExists:         {http.StatusConflict, connect.CodeAlreadyExists},
		service.TagExhausted:      {http.StatusGone, connect.CodeResourceExhausted},
		service.TagBoundReached:   {http.StatusGone, connect.CodeResourceExhausted},
		service.LeaseLost:         {http.StatusConflict, connect.CodeFailedPrecondition},
		service.TagMisconfigured:  {http.StatusInternalServerError, connect.CodeFailedPrecondition},
		service.Unavailable:       {http.StatusServiceUnavailable, connect.CodeUnavailable},
		service.StoreNotDurable:   {http.StatusServiceUnavailable, connect.CodeUnavailable},
		service.Internal:          {http.StatusInternalServerError, connect.CodeInternal},
		service.InvalidSpace:      {http.StatusBadRequest, connect.CodeInvalidArgument},
		service.InvalidKey:        {http.StatusBadRequest, connect.CodeInvalidArgument},
		service.UnknownSpace:      {http.StatusNotFound, connect.CodeNotFound},
		service.SpaceExists:       {http.StatusConflict, connect.CodeAlreadyExists},
		service.SequenceExhausted: {http.StatusGone, connect.CodeResourceExhausted},
		service.InvalidFormat:     {http.StatusBadRequest, connect.CodeInvalidArgument},
		service.FormatFixed:       {http.StatusConflict, connect.CodeFailedPrecondition},
		service.NotNumeric:        {http.StatusConflict, connect.CodeFailedPrecondition},
		service.PeriodClosed:      {http.StatusConflict, connect.CodeFailedPrecondition},
		service.SequenceFull:      {http.StatusConflict, connect.CodeResourceExhausted},
	}
	for _, code := range service.Codes() {
		w, ok := want[code]
		if !ok {
			t.Errorf("%s: no expectation in this test", code)
			continue
		}
		if got := service.HTTPStatus(code); got != w.status {
			t.Errorf("HTTPStatus(%s) = %d, want %d", code, got, w.status)
		}
		if got := service.GRPCCode(code); got != w.grpc {
			t.Errorf("GRPCCode(%s) = %v, want %v", code, got, w.grpc)
		}
	}
	if got := service.GRPCCode("no_such_code"); got != connect.CodeInternal {
		t.Errorf("GRPCCode of an unknown code = %v, want internal", got)
	}
}
