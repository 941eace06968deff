package testkit

import (
	"regexp"
	"strconv"
	"strings"
)

// What the tests that hold the documents to the code read of them:
// headings and their anchors, sections, links. Text inside fenced code
// blocks is never a heading nor a link; text inside code spans is never a
// link.

var (
	// anchorDrop is what GitHub drops from a heading's text to make its
	// anchor: everything but letters, marks, digits, spaces, hyphens and
	// underscores.
	anchorDrop = regexp.MustCompile(`[^\p{L}\p{M}\p{N} _-]`)
	// inlineLink is a link or an image, [text](target) or [text](target
	// "title"); its text may run over lines.
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)
	codeSpan   = regexp.MustCompile("(?s)``.*?``|`[^`]*`")
)

// line is a line of a Markdown text, and whether it belongs to a fenced
// code block (``` or ~~~, the fences included).
type line struct {
	text string
	code bool
}

func lines(markdown string) []line {
	var out []line
	fence := ""
	for _, text := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimLeft(text, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			out = append(out, line{text, true})
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			out = append(out, line{text, true})
		default:
			out = append(out, line{text, false})
		}
	}
	return out
}

// heading returns the level and text of an ATX heading line ("## Text"),
// or 0 for another line.
func heading(line string) (int, string) {
	text := strings.TrimLeft(line, "#")
	level := len(line) - len(text)
	if level == 0 || level > 6 || (text != "" && text[0] != ' ') {
		return 0, ""
	}
	return level, strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), "#"))
}

// Anchors maps the anchor of each heading of a Markdown text to the
// heading's text, as GitHub makes anchors: the text as shown (a link's
// text without its target), in lower case, with everything but letters,
// digits, spaces, hyphens and underscores dropped, and each space made a
// hyphen; a second heading of the same anchor gets "-1", a third "-2".
func Anchors(markdown string) map[string]string {
	out := map[string]string{}
	seen := map[string]int{}
	for _, l := range lines(markdown) {
		level, text := heading(l.text)
		if l.code || level == 0 {
			continue
		}
		shown := inlineLink.ReplaceAllString(text, "$1")
		anchor := strings.ReplaceAll(anchorDrop.ReplaceAllString(strings.ToLower(shown), ""), " ", "-")
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor += "-" + strconv.Itoa(n)
		} else {
			seen[anchor] = 1
		}
		out[anchor] = text
	}
	return out
}

// Section returns the part of a Markdown text under the heading line
// given ("## Errors"), up to the next heading of the same or a higher
// level, and whether the heading is there. Code blocks are kept.
func Section(markdown, headingLine string) (string, bool) {
	want, _ := heading(headingLine)
	if want == 0 {
		return "", false
	}
	var out []string
	in := false
	for _, l := range lines(markdown) {
		level, _ := heading(l.text)
		if in && !l.code && level > 0 && level <= want {
			break
		}
		if in {
			out = append(out, l.text)
		}
		in = in || (!l.code && strings.TrimSpace(l.text) == headingLine)
	}
	return strings.Join(out, "\n"), in
}

// Links returns the targets of the links and images of a Markdown text,
// in order, outside code blocks and code spans.
func Links(markdown string) []string {
	var prose []string
	for _, l := range lines(markdown) {
		if !l.code {
			prose = append(prose, l.text)
		}
	}
	text := codeSpan.ReplaceAllString(strings.Join(prose, "\n"), "")
	var out []string
	for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
		out = append(out, m[2])
	}
	return out
}
