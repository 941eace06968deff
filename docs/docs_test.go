// Package docs_test holds the documents to the repository: every relative
// link of the repository's Markdown files leads to a file that exists and,
// with an #anchor, to a heading of it; the README links every page of
// docs/; and docs/architecture.md names every directory and every import
// between the rooms.
package docs_test

import (
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
)

// documents are the Markdown files of the repository, from this
// directory: README.md, the others at the root, docs/ and those beside
// code (clients/…/README.md). Dependencies' files (node_modules) are not
// the project's.
func documents(t *testing.T) []string {
	t.Helper()
	var docs []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"../README.md", "../docs/http-api.md", "../docs/cli.md", "../docs/architecture.md"} {
		if !slices.Contains(docs, want) {
			t.Fatalf("%s is not among the documents found: %v", want, docs)
		}
	}
	return docs
}

var (
	external   = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*:|//)`)
	lineAnchor = regexp.MustCompile(`^L[0-9]+(-L[0-9]+)?$`)
)

// TestLinksResolve: every relative link of the Markdown files names
// a file or directory of the repository, and its #anchor, if any, a
// heading of that file (as GitHub makes anchors) or a line of a source
// file (#L12).
func TestLinksResolve(t *testing.T) {
	anchors := map[string]map[string]string{} // by path, of the Markdown files read
	read := func(path string) (map[string]string, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		anchors[path] = testkit.Anchors(string(b))
		return anchors[path], nil
	}
	checked := 0
	for _, doc := range documents(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, link := range testkit.Links(string(b)) {
			if external.MatchString(link) {
				continue
			}
			checked++
			target, anchor, _ := strings.Cut(link, "#")
			path := doc
			if target != "" {
				p, err := url.PathUnescape(target)
				if err != nil {
					t.Errorf("%s: link %s: %v", doc, link, err)
					continue
				}
				path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(p))
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Errorf("%s: link %s: no such file or directory", doc, link)
				continue
			}
			if anchor == "" {
				continue
			}
			if fi.IsDir() || !strings.HasSuffix(path, ".md") {
				if fi.IsDir() || !lineAnchor.MatchString(anchor) {
					t.Errorf("%s: link %s: an anchor in what is not a Markdown file", doc, link)
				}
				continue
			}
			a, err := read(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := a[anchor]; !ok {
				t.Errorf("%s: link %s: %s has no heading of anchor #%s", doc, link, path, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d relative links, want at least 50: the links are not found", checked)
	}
}

// block returns the first fenced code block of the section of doc under
// heading, without its fences.
func block(t *testing.T, doc, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	section, ok := testkit.Section(string(b), heading)
	if !ok {
		t.Fatalf("%s has no section %q", doc, heading)
	}
	_, code, ok := strings.Cut(section, "```\n")
	if !ok {
		t.Fatalf("%s: the section %q has no code block", doc, heading)
	}
	code, _, _ = strings.Cut(code, "```")
	return strings.Split(strings.TrimSuffix(code, "\n"), "\n")
}

// TestArchitectureNamesEveryDirectory: the layout of docs/architecture.md
// has a line for every directory at the top of the repository, and names
// nothing that is not there.
func TestArchitectureNamesEveryDirectory(t *testing.T) {
	named := map[string]bool{}
	for _, line := range block(t, "architecture.md", "## Layout") {
		if line == "" || line[0] == ' ' {
			continue // the rest of the line above
		}
		name := strings.Fields(line)[0]
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(name))); err != nil {
			t.Errorf("the layout names %s, which is not in the repository", name)
		}
		top, _, _ := strings.Cut(name, "/")
		named[top] = true
	}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" && !named[e.Name()] && !gitIgnores(e.Name()) {
			t.Errorf("the layout has no line for %s/", e.Name())
		}
	}
}

// gitIgnores tells whether git ignores the directory dir at the top of the
// repository (bin/, the output of make build): not part of the layout.
func gitIgnores(dir string) bool {
	cmd := exec.Command("git", "check-ignore", "-q", dir+"/")
	cmd.Dir = ".."
	return cmd.Run() == nil
}

// TestArchitectureRooms: every import of a package of the module by
// another room's code (tests aside) is allowed by the table of
// docs/architecture.md, every package belongs to a room of it, and every
// room of it is a directory.
func TestArchitectureRooms(t *testing.T) {
	allowed := map[string]map[string]bool{}
	for _, line := range block(t, "architecture.md", "## Which room may use which") {
		room, uses, ok := strings.Cut(line, "->")
		room = strings.TrimSpace(room)
		if !ok || room == "" {
			t.Fatalf("a line of the table is not ROOM -> ROOMS: %q", line)
		}
		if fi, err := os.Stat(filepath.Join("..", room)); err != nil || !fi.IsDir() {
			t.Errorf("the table has a line for %s, which is not a directory", room)
		}
		allowed[room] = map[string]bool{}
		if uses = strings.TrimSpace(uses); uses != "nothing" {
			for _, u := range strings.Split(uses, ",") {
				allowed[room][strings.TrimSpace(u)] = true
			}
		}
	}
	roomOf := func(pkg string) (string, bool) {
		best := ""
		for r := range allowed {
			if (pkg == r || strings.HasPrefix(pkg, r+"/")) && len(r) > len(best) {
				best = r
			}
		}
		return best, best != ""
	}

	goTool, err := exec.LookPath("go") // go test puts its own go first in the PATH
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	const mod = "github.com/leafid/leaf"
	cmd := exec.Command(goTool, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	packages := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], mod+"/")
		if !ok {
			continue
		}
		packages++
		room, ok := roomOf(pkg)
		if !ok {
			t.Errorf("%s is in no room of the table", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, mod+"/")
			if !ok {
				continue
			}
			if r, ok := roomOf(dep); !ok || (r != room && !allowed[room][r]) {
				t.Errorf("%s imports %s: the table does not let %s use %s", pkg, dep, room, r)
			}
		}
	}
	if packages < 20 {
		t.Errorf("listed %d packages, want at least 20", packages)
	}
}

// TestREADMELinksEveryPage: the README, the entry, links every page of
// docs/.
func TestREADMELinksEveryPage(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, link := range testkit.Links(string(b)) {
		target, _, _ := strings.Cut(link, "#")
		linked[target] = true
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		if !linked["docs/"+page] {
			t.Errorf("README.md does not link docs/%s", page)
		}
	}
}
