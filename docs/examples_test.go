package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// An example is one fenced code block of a document, in a language the
// test runs.
type example struct {
	doc    string // its path from the repository's root
	line   int    // the line of its opening fence
	lang   string // sh, go, python, ts, js or java
	marker string // what the <!-- docs-test: … --> line just above it says, if any
	code   string
}

func (e example) String() string { return fmt.Sprintf("%s:%d (%s)", e.doc, e.line, e.lang) }

// runs are the languages of blocks the test runs; blocks in others (sql,
// json, yaml, plain) show statements, answers or files, not programs.
var runs = []string{"sh", "go", "python", "ts", "js", "java"}

var (
	fence  = regexp.MustCompile("^( *)```([a-z]*)\\s*$")
	marker = regexp.MustCompile(`^<!-- docs-test: (.+?) -->$`)
)

// exampleDocs are the documents whose examples run: the README, docs/ and
// the clients' READMEs, from the repository's root.
func exampleDocs(t *testing.T) []string {
	t.Helper()
	docs := []string{"README.md"}
	for _, glob := range []string{"docs/*.md", "clients/*/README.md"} {
		m, err := filepath.Glob(filepath.Join("..", glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			docs = append(docs, strings.TrimPrefix(filepath.ToSlash(p), "../"))
		}
	}
	return docs
}

// examples returns the blocks of doc (a path from the root) in a language
// the test runs, in order.
func examples(t *testing.T, doc string) []example {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", doc))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []example
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, lang, start := m[1], m[2], i
		var code []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			code = append(code, strings.TrimPrefix(lines[i], indent))
		}
		if !slices.Contains(runs, lang) {
			continue
		}
		ex := example{doc: doc, line: start + 1, lang: lang, code: strings.Join(code, "\n") + "\n"}
		for j := start - 1; j >= 0 && strings.TrimSpace(lines[j]) != ""; j-- {
			if mm := marker.FindStringSubmatch(strings.TrimSpace(lines[j])); mm != nil {
				ex.marker = mm[1]
				break
			}
		}
		out = append(out, ex)
	}
	return out
}

// command is one command of a shell example, its continued lines joined,
// and the output it is shown to print (a "# → …" comment), if any.
type command struct {
	text, want string
}

const arrow = "# → "

// commands splits a shell example into its commands.
func commands(code string) []command {
	var out []command
	var cur strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(code, "\n"), "\n") {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, arrow) && cur.Len() == 0 && len(out) > 0 {
			out[len(out)-1].want = strings.TrimPrefix(trimmed, arrow)
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(l + "\n")
			continue
		}
		cur.WriteString(l)
		c := command{text: cur.String()}
		cur.Reset()
		if i := strings.Index(c.text, arrow); i >= 0 {
			c.text, c.want = c.text[:i], strings.TrimSpace(c.text[i+len(arrow):])
		}
		out = append(out, c)
	}
	return out
}

var (
	// punctuation of JSON, and the space around it that pretty printers
	// add and the documents leave out.
	punct = regexp.MustCompile(`\s*([{}\[\],:])\s*`)
	// what the shown output of a command stands for rather than shows:
	// "…" for any text, a UUID for any UUID, a run of eight or more digits
	// (a date, a snowflake or opaque id) for any run of that length.
	standsFor = regexp.MustCompile(`…|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9]{8,}`)
)

func normal(s string) string { return punct.ReplaceAllString(strings.TrimSpace(s), "$1") }

// shows tells whether a command's output is what the document shows.
func shows(want, got string) bool {
	want, got = normal(want), normal(got)
	if want == got {
		return true
	}
	var re strings.Builder
	re.WriteString(`^`)
	last := 0
	for _, m := range standsFor.FindAllStringIndex(want, -1) {
		re.WriteString(regexp.QuoteMeta(want[last:m[0]]))
		switch w := want[m[0]:m[1]]; {
		case w == "…":
			re.WriteString(`.*`)
		case strings.Contains(w, "-"):
			re.WriteString(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
		default:
			fmt.Fprintf(&re, `[0-9]{%d}`, len(w))
		}
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(want[last:]) + `$`)
	return regexp.MustCompile(re.String()).MatchString(got)
}

func TestShows(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"1", "1", true},
		{"1", "2", false},
		{`{"tag":"orders","ids":["2","3","4"]}`, `{"tag": "orders", "ids": ["2", "3", "4"]}` + "\n", true},
		{`{"tag":"orders","ids":["2","3","4"]}`, `{"tag":"orders","ids":["2","3","5"]}`, false},
		{"INV-20261126-000001", "INV-20271231-000001", true},
		{"INV-20261126-000001", "INV-20271231-000002", false},
		{"2126086329019138087", "2126086329019999999", true},
		{"2126086329019138087", "212608632901999999", false},
		{"01a21a0e-05e5-704f-b778-7cfa572fca6e", "019ac9e1-1111-7aaa-8bbb-0123456789ab", true},
		{`{"error":{"code":"not_numeric","message":"…"}}`, `{"error":{"code":"not_numeric","message":"tag \"orders\" is formatted"}}`, true},
		{`{"error":{"code":"not_numeric","message":"…"}}`, `{"error":{"code":"unknown_tag","message":"x"}}`, false},
	} {
		if got := shows(c.want, c.got); got != c.ok {
			t.Errorf("shows(%q, %q) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}

func TestCommands(t *testing.T) {
	got := commands("T=x\ncurl a \\\n  b   # → 1\n# a comment\ncurl c\n# → {\"a\": 1}\n")
	want := []command{{"T=x", ""}, {"curl a \\\n  b   ", "1"}, {"# a comment", ""}, {"curl c", `{"a": 1}`}}
	if !slices.Equal(got, want) {
		t.Errorf("commands: got %q, want %q", got, want)
	}
}
