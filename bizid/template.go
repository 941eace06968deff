package bizid

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits of a template.
const (
	// MaxFormatLen is the longest template, in bytes.
	MaxFormatLen = 256
	// MaxSeqWidth is the widest {seq:N}: an int64 has 19 digits.
	MaxSeqWidth = 19
	maxDates    = 4
)

// piece is one part of a template: literal text, a date or the sequence.
type piece struct {
	kind  pieceKind
	text  string // the literal, or the date's layout
	width int    // the sequence's least number of digits
	fixed bool   // the sequence may not widen past width
}

type pieceKind uint8

const (
	literal pieceKind = iota
	date
	seq
)

// Template is a parsed format: literal text, dates and one sequence
// number (see the package comment for its syntax).
type Template struct {
	src    string
	pieces []piece
	seqAt  int // index of the sequence in pieces
}

// String is the template as it was written.
func (t *Template) String() string { return t.src }

// SeqWidth is the least number of digits of the sequence, and whether
// it is also the most.
func (t *Template) SeqWidth() (width int, fixed bool) {
	p := t.pieces[t.seqAt]
	return p.width, p.fixed
}

// MaxSeq is the largest sequence number the template can show: 10^N-1
// for {seq:N!}, the int64 maximum otherwise.
func (t *Template) MaxSeq() int64 {
	w, fixed := t.SeqWidth()
	if !fixed {
		return 1<<63 - 1
	}
	m := int64(1)
	for range w {
		m *= 10
	}
	return m - 1
}

// ParseTemplate parses a format. The error wraps ErrInvalidFormat and says
// what is wrong; a template it returns may still be refused by Check for
// the reset period it is used with.
func ParseTemplate(src string) (*Template, error) {
	if src == "" {
		return nil, fmt.Errorf("%w: empty; a format needs at least {seq}", ErrInvalidFormat)
	}
	if len(src) > MaxFormatLen {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidFormat, len(src), MaxFormatLen)
	}
	p := &templateParser{t: &Template{src: src, seqAt: -1}}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '{' && i+1 < len(src) && src[i+1] == '{':
			p.lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(src) && src[i+1] == '}':
			p.lit.WriteByte('}')
			i++
		case c == '}':
			return nil, fmt.Errorf("%w: a lone '}' at byte %d (write }} for a literal brace)", ErrInvalidFormat, i)
		case c == '{':
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("%w: '{' at byte %d is never closed", ErrInvalidFormat, i)
			}
			if err := p.field(src[i+1 : i+end]); err != nil {
				return nil, err
			}
			i += end
		case c < 0x20 || c == 0x7f:
			return nil, fmt.Errorf("%w: control character at byte %d", ErrInvalidFormat, i)
		default:
			p.lit.WriteByte(c)
		}
	}
	p.flush()
	if p.t.seqAt < 0 {
		return nil, fmt.Errorf("%w: no {seq}: without a sequence number every id of the same period would be the same text", ErrInvalidFormat)
	}
	return p.t, nil
}

// templateParser is the state of ParseTemplate's one pass over a format.
type templateParser struct {
	t     *Template
	lit   strings.Builder // literal text since the last field
	dates int             // the dates met so far
}

// flush ends the literal text read since the last field as a piece.
func (p *templateParser) flush() {
	if p.lit.Len() > 0 {
		p.t.pieces = append(p.t.pieces, piece{kind: literal, text: p.lit.String()})
		p.lit.Reset()
	}
}

// field adds the field f (what is between braces): at most one {seq} and
// maxDates dates.
func (p *templateParser) field(f string) error {
	pc, err := parseField(f)
	if err != nil {
		return err
	}
	p.flush()
	switch pc.kind {
	case seq:
		if p.t.seqAt >= 0 {
			return fmt.Errorf("%w: {seq} appears twice", ErrInvalidFormat)
		}
		p.t.seqAt = len(p.t.pieces)
	case date:
		if p.dates++; p.dates > maxDates {
			return fmt.Errorf("%w: more than %d dates", ErrInvalidFormat, maxDates)
		}
	}
	p.t.pieces = append(p.t.pieces, pc)
	return nil
}

// parseField parses what is between braces: seq, seq:N, seq:N! or
// date:LAYOUT.
func parseField(f string) (piece, error) {
	name, arg, hasArg := strings.Cut(f, ":")
	switch name {
	case "seq":
		p := piece{kind: seq, width: 1}
		if !hasArg {
			return p, nil
		}
		if p.fixed = strings.HasSuffix(arg, "!"); p.fixed {
			arg = arg[:len(arg)-1]
		}
		w, err := strconv.Atoi(arg)
		if err != nil || w < 1 || w > MaxSeqWidth {
			return piece{}, fmt.Errorf("%w: {%s}: the width must be a number from 1 to %d", ErrInvalidFormat, f, MaxSeqWidth)
		}
		p.width = w
		return p, nil
	case "date":
		if !hasArg || arg == "" {
			return piece{}, fmt.Errorf("%w: {date} needs a layout, as in {date:20060102}", ErrInvalidFormat)
		}
		if strings.ContainsRune(arg, '{') {
			return piece{}, fmt.Errorf("%w: {%s}: a layout cannot hold '{'", ErrInvalidFormat, f)
		}
		return piece{kind: date, text: arg}, nil
	}
	return piece{}, fmt.Errorf("%w: unknown field {%s}; the fields are {seq}, {seq:N}, {seq:N!} and {date:LAYOUT}", ErrInvalidFormat, f)
}

// AppendText appends the text of sequence number n issued at instant at
// (already in the tag's time zone) to b.
func (t *Template) AppendText(b []byte, at time.Time, n int64) []byte {
	for _, p := range t.pieces {
		switch p.kind {
		case literal:
			b = append(b, p.text...)
		case date:
			b = at.AppendFormat(b, p.text)
		case seq:
			b = appendPadded(b, n, p.width)
		}
	}
	return b
}

// Text is AppendText to a new string.
func (t *Template) Text(at time.Time, n int64) string {
	return string(t.AppendText(make([]byte, 0, 32), at, n))
}

func appendPadded(b []byte, n int64, width int) []byte {
	var buf [20]byte
	d := strconv.AppendInt(buf[:0], n, 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// around renders the parts of the text before and after the sequence.
func (t *Template) around(at time.Time) (before, after string) {
	var b []byte
	for i, p := range t.pieces {
		if i == t.seqAt {
			before, b = string(b), b[:0]
			continue
		}
		if p.kind == literal {
			b = append(b, p.text...)
		} else {
			b = at.AppendFormat(b, p.text)
		}
	}
	return before, string(b)
}

// Check reports whether the template issues no text twice when its
// sequence restarts every period of r in zone loc. Three things make that
// so, and each is checked over a sample of instants (every day of two
// years, at midnight and at another time of day, and the same days a
// century later):
//   - the text before the sequence has one width, so where the sequence
//     begins can be told;
//   - the text after it is empty or begins with something other than a
//     digit, so where it ends can be told;
//   - unless r is Never, no two periods show the same text around the
//     sequence: the date in the text tells the period apart.
//
// The error wraps ErrInvalidFormat and says which rule failed, with an
// example.
func (t *Template) Check(r Reset, loc *time.Location) error {
	seen := make(map[[2]string]string) // the text around the sequence -> a period key
	width := -1
	var widthAt string
	for _, base := range []int{2024, 2124} {
		for d := range 731 {
			day := time.Date(base, 1, 1+d, 0, 0, 0, 0, loc)
			later := day.Add(time.Duration((d*7919)%86400)*time.Second + time.Duration((d*123456789)%1e9))
			for _, at := range []time.Time{day, later} {
				before, after := t.around(at)
				if width < 0 {
					width, widthAt = len(before), before
				} else if len(before) != width {
					return fmt.Errorf("%w: the text before {seq} changes width (%q, then %q), so where the number begins could not be told; use fixed-width date fields (01 not 1, Jan not January)",
						ErrInvalidFormat, widthAt, before)
				}
				if after != "" && after[0] >= '0' && after[0] <= '9' {
					return fmt.Errorf("%w: the text after {seq} begins with a digit (%q), so where the number ends could not be told; put a separator after {seq}",
						ErrInvalidFormat, after)
				}
				if r == Never {
					continue
				}
				key := r.key(at)
				k := [2]string{before, after}
				if other, ok := seen[k]; ok && other != key {
					return fmt.Errorf("%w: the sequence restarts every %s, but the text shows the same date (%q) in the periods %s and %s, so both would issue the same texts; the date must show at least %s",
						ErrInvalidFormat, r, before+"{seq}"+after, other, key, r.shows())
				}
				seen[k] = key
			}
		}
	}
	return nil
}
