package main

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// unquote undoes, in strconv.Quote's output, what printable keeps as it
// is: the quote mark, and the joiners U+200C and U+200D, which scripts and
// emoji need. A doubled backslash is matched first, so that an escaped
// backslash before "u200d" stays escaped.
var unquote = strings.NewReplacer(`\\`, `\\`, `\"`, `"`, `\u200c`, "\u200c", `\u200d`, "\u200d")

// printable returns s with everything a terminal could act on or hide
// escaped as strconv.Quote escapes it, so that printing it can neither
// move the cursor, recolour, retitle nor reorder the screen, nor make two
// different names look alike: controls and DEL (\x1b, \a, \u009b), line
// and paragraph separators, spaces other than ' ', invisible format
// characters such as bidirectional overrides (\u202e), and bytes that are
// not UTF-8 (\xff). A backslash is doubled, so the result reads back
// unambiguously.
func printable(s string) string {
	q := strconv.Quote(s)
	return unquote.Replace(q[1 : len(q)-1])
}

// quote is printable in quotes, for a value inside a message.
func quote(s string) string { return `"` + printable(s) + `"` }

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, " ")
}

// displayWidth is the number of terminal columns s takes, for s made
// printable: combining marks and format characters take none, East Asian
// wide and fullwidth characters two (Unicode's EastAsianWidth), others
// one.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case width.LookupRune(r).Kind() == width.EastAsianWide || width.LookupRune(r).Kind() == width.EastAsianFullwidth:
			w += 2
		default:
			w++
		}
	}
	return w
}
