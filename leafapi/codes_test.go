package leafapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"connectrpc.com/connect"

	"github.com/leafid/leaf/leafapi"
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
	listed := leafapi.Codes()
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
		leafapi.InvalidTag:        {http.StatusBadRequest, connect.CodeInvalidArgument},
		leafapi.InvalidID:         {http.StatusBadRequest, connect.CodeInvalidArgument},
		leafapi.InvalidCount:      {http.StatusBadRequest, connect.CodeInvalidArgument},
		leafapi.InvalidRequest:    {http.StatusBadRequest, connect.CodeInvalidArgument},
		leafapi.Unauthorized:      {http.StatusUnauthorized, connect.CodeUnauthenticated},
		leafapi.UnknownTag:        {http.StatusNotFound, connect.CodeNotFound},
		leafapi.NotFound:          {http.StatusNotFound, connect.CodeUnimplemented},
		leafapi.MethodNotAllowed:  {http.StatusMethodNotAllowed, connect.CodeUnimplemented},
		leafapi.TagExists:         {http.StatusConflict, connect.CodeAlreadyExists},
		leafapi.TagExhausted:      {http.StatusGone, connect.CodeResourceExhausted},
		leafapi.TagMisconfigured:  {http.StatusInternalServerError, connect.CodeFailedPrecondition},
		leafapi.Unavailable:       {http.StatusServiceUnavailable, connect.CodeUnavailable},
		leafapi.Internal:          {http.StatusInternalServerError, connect.CodeInternal},
		leafapi.InvalidSpace:      {http.StatusBadRequest, connect.CodeInvalidArgument},
		leafapi.InvalidKey:        {http.StatusBadRequest, connect.CodeInvalidArgument},
		leafapi.UnknownSpace:      {http.StatusNotFound, connect.CodeNotFound},
		leafapi.SpaceExists:       {http.StatusConflict, connect.CodeAlreadyExists},
		leafapi.SequenceExhausted: {http.StatusGone, connect.CodeResourceExhausted},
		leafapi.InvalidFormat:     {http.StatusBadRequest, connect.CodeInvalidArgument},
		leafapi.FormatFixed:       {http.StatusConflict, connect.CodeFailedPrecondition},
		leafapi.NotNumeric:        {http.StatusConflict, connect.CodeFailedPrecondition},
		leafapi.PeriodClosed:      {http.StatusConflict, connect.CodeFailedPrecondition},
		leafapi.SequenceFull:      {http.StatusConflict, connect.CodeResourceExhausted},
	}
	for _, code := range leafapi.Codes() {
		w, ok := want[code]
		if !ok {
			t.Errorf("%s: no expectation in this test", code)
			continue
		}
		if got := leafapi.HTTPStatus(code); got != w.status {
			t.Errorf("HTTPStatus(%s) = %d, want %d", code, got, w.status)
		}
		if got := leafapi.GRPCCode(code); got != w.grpc {
			t.Errorf("GRPCCode(%s) = %v, want %v", code, got, w.grpc)
		}
	}
	if got := leafapi.GRPCCode("no_such_code"); got != connect.CodeInternal {
		t.Errorf("GRPCCode of an unknown code = %v, want internal", got)
	}
}
