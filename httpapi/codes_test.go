package httpapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leafid/leaf/httpapi"
)

// TestErrorCodesListed: every code constant of the package is in
// ErrorCodes, and ErrorCodes holds nothing else, each code once.
func TestErrorCodesListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
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
	}
	listed := httpapi.ErrorCodes()
	slices.Sort(declared)
	slices.Sort(listed)
	if len(declared) < 13 || !slices.Equal(declared, listed) {
		t.Errorf("code constants %q, ErrorCodes %q: want the same codes", declared, listed)
	}
	if len(slices.Compact(slices.Clone(listed))) != len(listed) {
		t.Errorf("ErrorCodes lists a code twice: %q", listed)
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
