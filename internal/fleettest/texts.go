package fleettest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/leafid/leaf/bizid"
)

// maxTexts bounds the texts kept of each formatted tag the fuzzer made,
// whose format the ledger does not read: a batch of 10,000 texts a
// request would fill the memory of a long run. Past it, a text is still
// checked against those kept.
const maxTexts = 1 << 20

// textAt is a number of a formatted tag's period.
type textAt struct {
	period string
	n      int64
}

// Formatted reports whether tag's ids are texts.
func (l *Ledger) Formatted(tag string) bool {
	switch l.Kind(tag) {
	case KindOpen, KindCapped, KindText:
		return true
	}
	return false
}

func (l *Ledger) template(format string) *bizid.Template {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.templates[format]
	if !ok {
		var err error
		if t, err = bizid.ParseTemplate(format); err != nil {
			t, _ = bizid.ParseTemplate("{seq}") // a stored format always parses
		}
		l.templates[format] = t
	}
	return t
}

// Texts checks the texts of a formatted tag, answered to one get or batch.
func (l *Ledger) Texts(tag string, texts []string) error {
	kind := l.Kind(tag)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached[kind]++
	if _, ok := formats[tag]; !ok {
		seen := l.texts[tag]
		if seen == nil {
			seen = map[string]struct{}{}
			l.texts[tag] = seen
		}
		for _, s := range texts {
			if _, ok := seen[s]; ok || s == "" {
				return fmt.Errorf("formatted tag %q: text %q empty or issued twice", tag, s)
			}
			if len(seen) < maxTexts {
				seen[s] = struct{}{}
			}
		}
		return nil
	}
	owned := tag != Open
	for i, s := range texts {
		at, ok := parseText(tag, s)
		if !ok {
			return fmt.Errorf("formatted tag %q: text %q is not of its format %q", tag, s, formats[tag].Format)
		}
		set := l.numbered[[2]string{tag, at.period}]
		if set == nil {
			set = &idSet{}
			l.numbered[[2]string{tag, at.period}] = set
		}
		if !set.add(at.n, at.n) {
			return fmt.Errorf("formatted tag %q: text %q issued twice", tag, s)
		}
		if c := Caps[tag]; c > 0 && at.n > c {
			return fmt.Errorf("capped tag %q: text %q past its cap %d", tag, s, c)
		}
		if !owned {
			continue
		}
		if last, ok := l.last[tag]; ok && last.period == at.period && at.n <= last.n {
			return fmt.Errorf("tag %q served by one owner: %q after number %d of its period", tag, s, last.n)
		}
		if r, ok := l.refusedAt[tag]; ok && i == 0 {
			delete(l.refusedAt, tag)
			if r.period == at.period && at.n != r.n+1 {
				return fmt.Errorf("capped tag %q: %q after a refusal, but %d was the last before it: the refusal took numbers", tag, s, r.n)
			}
			l.reached["continued"]++
		}
		l.last[tag] = at
	}
	return nil
}

// parseText reads a text of a fixture's formatted tag: all end in
// -{seq:N} or -{seq:N!}.
func parseText(tag, s string) (textAt, bool) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return textAt{}, false
	}
	period, digits := s[:i], s[i+1:]
	var prefix string
	var width, dateLen int
	switch tag {
	case Open:
		prefix, width, dateLen = "O-", 6, 8
	case Cap:
		prefix, width = "C", 2
	case CapDay:
		prefix, width, dateLen = "D", 2, 8
	case Text:
		prefix, width = "T", 6
	}
	date, ok := strings.CutPrefix(period, prefix)
	if !ok || len(date) != dateLen || strings.Trim(date, "0123456789") != "" || strings.Trim(digits, "0123456789") != "" {
		return textAt{}, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 || len(digits) < width || len(digits) > width && digits[0] == '0' {
		return textAt{}, false
	}
	return textAt{period: period, n: n}, true
}
