package httpapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leafid/leaf/httpapi"
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

// TestErrorCodesInREADME: the README's table of errors names every code
// of the API, and no other.
func TestErrorCodesInREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	i := strings.Index(section, "\n### Errors\n")
	if i < 0 {
		t.Fatal("README.md has no Errors section")
	}
	section = section[i+1:]
	if j := strings.Index(section, "\n### "); j >= 0 {
		section = section[:j]
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
			t.Errorf("the code %s is not in the README's table of errors", c)
		}
		delete(inTable, c)
	}
	for c := range inTable {
		t.Errorf("the README's table of errors has %s, which is not a code of the API", c)
	}
}
