package httpapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/testkit"
)

// TestErrorCodesListed: every code constant of the package is one of
// ErrorCodes, the table of package service.
func TestErrorCodesListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := httpapi.ErrorCodes()
	if len(listed) < 13 {
		t.Fatalf("ErrorCodes %q: want at least 13", listed)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "code") || i >= len(vs.Values) {
						continue
					}
					sel, ok := vs.Values[i].(*ast.SelectorExpr)
					if !ok || sel.X.(*ast.Ident).Name != "service" {
						t.Errorf("%s is not one of service's codes", name.Name)
					}
				}
			}
		}
	}
}

// TestErrorCodesInHTTPAPIDoc: the table of errors of docs/http-api.md
// names every code of the API, and no other.
func TestErrorCodesInHTTPAPIDoc(t *testing.T) {
	section, ok := testkit.Section(readAPIDoc(t), "## Errors")
	if !ok {
		t.Fatalf("%s has no Errors section", apiDoc)
	}
	row := regexp.MustCompile(`(?m)^\| [45][0-9][0-9] \| ([^|]*) \|`)
	code := regexp.MustCompile("`([a-z_]+)`")
	inTable := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		for _, c := range code.FindAllStringSubmatch(m[1], -1) {
			inTable[c[1]] = true
		}
	}
	for _, c := range httpapi.ErrorCodes() {
		if !inTable[c] {
			t.Errorf("the code %s is not in the table of errors of %s", c, apiDoc)
		}
		delete(inTable, c)
	}
	for c := range inTable {
		t.Errorf("the table of errors of %s has %s, which is not a code of the API", apiDoc, c)
	}
}
