package sequence

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits and defaults of spaces and keys.
const (
	// MaxKeyLen is the longest key, in bytes.
	MaxKeyLen = 256
	// MaxSpaceLen is the longest space name, in characters.
	MaxSpaceLen = 128
	// DefaultStep is a space's step when none is given.
	DefaultStep = 10000
	// MinStep and MaxStep bound a space's step.
	MinStep = 1
	MaxStep = 1_000_000_000
	// DefaultSections is a space's section count when none is given.
	DefaultSections = 64
	// MaxSections bounds a space's section count.
	MaxSections = 4096
	// MaxCount is the most numbers one call takes for a key.
	MaxCount = 10000
)

// Space is a space of per-key sequences.
type Space struct {
	Name string
	// Step is how far a section's max_seq is raised at a time.
	Step int64
	// Sections is the number of sections, fixed at creation.
	Sections int
}

// Validate checks a space about to be created.
func (s Space) Validate() error {
	if err := ValidateSpace(s.Name); err != nil {
		return err
	}
	if s.Name == "." || s.Name == ".." {
		return fmt.Errorf("%w: %q cannot be addressed in a URL path", ErrInvalidSpace, s.Name)
	}
	for i, r := range s.Name {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character %U at byte %d", ErrInvalidSpace, r, i)
		}
	}
	if endsInSpace(s.Name) {
		return fmt.Errorf("%w: a new name may not end in a space (MySQL compares names with trailing spaces ignored)", ErrInvalidSpace)
	}
	if s.Step < MinStep || s.Step > MaxStep {
		return fmt.Errorf("%w: %d, want %d..%d", ErrInvalidStep, s.Step, MinStep, MaxStep)
	}
	if s.Sections < 1 || s.Sections > MaxSections {
		return fmt.Errorf("%w: %d, want 1..%d", ErrInvalidSections, s.Sections, MaxSections)
	}
	return nil
}

// endsInSpace reports whether a name ends in a space. MySQL and MariaDB
// compare strings with trailing spaces ignored (PAD SPACE, utf8mb4_bin
// included): such a name would share the primary key of the name without
// them, so a new space or member of that name is refused rather than
// taken for another. One that exists already is still only itself.
func endsInSpace(name string) bool { return strings.HasSuffix(name, " ") }

// ValidateSpace checks a space name: 1 to MaxSpaceLen characters of UTF-8.
func ValidateSpace(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidSpace)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidSpace)
	}
	if n := utf8.RuneCountInString(name); n > MaxSpaceLen {
		return fmt.Errorf("%w: %d characters, more than %d", ErrInvalidSpace, n, MaxSpaceLen)
	}
	return nil
}

// ValidateKey checks a key: 1 to MaxKeyLen bytes of UTF-8.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidKey, len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	}
	return nil
}

// SectionOf is the section of key among sections: the 64-bit FNV-1a hash
// of its bytes modulo sections. It is part of the contract (a space's
// keys stay in their sections across versions), so it never changes.
func SectionOf(key string, sections int) int {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime
	}
	return int(h % uint64(sections))
}
