package segment

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of a tag, as in the admin API and `leaf tag add`.
const (
	MinStep = 1
	MaxStep = 1_000_000
	// MaxTagLen is the width of leaf_alloc.biz_tag.
	MaxTagLen = 128
	// MaxDescriptionLen is the width of leaf_alloc.description, in
	// characters.
	MaxDescriptionLen = 256
)

// Tag is one row of leaf_alloc.
type Tag struct {
	Name        string
	MaxID       int64
	Step        int64
	Description string
	UpdateTime  time.Time
}

// TagUpdate holds the fields a PATCH may change; nil leaves a field alone.
type TagUpdate struct {
	Step        *int64
	Description *string
	MaxID       *int64 // may only be raised
	// Bound is the largest id the tag may issue (SetBounds); 0 removes
	// it. It is kept beside the row, which stays Leaf's.
	Bound *int64
}

// ValidateTag reports whether name can be the name of a row of leaf_alloc,
// and so be asked for: 1 to MaxTagLen characters of valid UTF-8, which is
// what Leaf's varchar(128) column holds. Any such row is served; names that
// need it are percent-encoded in a URL path. The error wraps ErrInvalidTag.
func ValidateTag(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidTag)
	}
	if len(name) <= MaxTagLen && ascii(name) {
		return nil // the usual tag, told in one pass: valid, a character a byte
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidTag)
	}
	if n := utf8.RuneCountInString(name); n > MaxTagLen {
		return fmt.Errorf("%w: %d characters, more than %d", ErrInvalidTag, n, MaxTagLen)
	}
	return nil
}

// validateNewTag is ValidateTag for a tag about to be created. It also
// refuses what a client could not address or an operator could not read:
// control characters, and the names "." and "..", which URL clients
// resolve as path steps before sending; and a name that ends in a space,
// which MySQL and MariaDB compare with its trailing spaces ignored (PAD
// SPACE, utf8mb4_bin included): it would share the key of the name
// without them, so it is refused rather than taken for another.
func validateNewTag(name string) error {
	if err := ValidateTag(name); err != nil {
		return err
	}
	if name == "." || name == ".." {
		return fmt.Errorf("%w: %q cannot be addressed in a URL path", ErrInvalidTag, name)
	}
	if strings.HasSuffix(name, " ") {
		return fmt.Errorf("%w: a new name may not end in a space (MySQL compares names with trailing spaces ignored)", ErrInvalidTag)
	}
	for i, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character %U at byte %d", ErrInvalidTag, r, i)
		}
	}
	return nil
}

// validateStep reports whether step is within MinStep..MaxStep.
func validateStep(step int64) error {
	if step < MinStep || step > MaxStep {
		return fmt.Errorf("%w: %d is outside %d..%d", ErrInvalidStep, step, MinStep, MaxStep)
	}
	return nil
}

// DefaultStep is the step of a tag created without one.
const DefaultStep = 1000

// Validate checks a tag about to be created: its name (validateNewTag), a step within
// MinStep..MaxStep, a max_id of at least 1 and a description of at most
// MaxDescriptionLen characters.
func (t Tag) Validate() error {
	if err := validateNewTag(t.Name); err != nil {
		return err
	}
	if err := validateStep(t.Step); err != nil {
		return err
	}
	if err := validateMaxID(t.MaxID); err != nil {
		return err
	}
	return validateDescription(t.Description)
}

// Validate checks the fields of an update that are set, by the rules of
// Tag.Validate. That max_id is only raised is checked against the row.
func (u TagUpdate) Validate() error {
	if u.Step != nil {
		if err := validateStep(*u.Step); err != nil {
			return err
		}
	}
	if u.MaxID != nil {
		if err := validateMaxID(*u.MaxID); err != nil {
			return err
		}
	}
	if u.Bound != nil && *u.Bound < 0 {
		return fmt.Errorf("%w: a bound of %d: want 1 or more, or 0 to remove it", ErrInvalidMaxID, *u.Bound)
	}
	if u.Description != nil {
		return validateDescription(*u.Description)
	}
	return nil
}

func validateMaxID(maxID int64) error {
	if maxID < 1 {
		return fmt.Errorf("%w: %d is below 1", ErrInvalidMaxID, maxID)
	}
	if maxID == math.MaxInt64 {
		return fmt.Errorf("%w: %d is the int64 maximum; a tag there could issue no id", ErrInvalidMaxID, maxID)
	}
	return nil
}

// validateDescription allows MaxDescriptionLen characters of valid UTF-8,
// with tabs and line breaks but no other control character: a
// description is read by people, in tag lists and terminals.
func validateDescription(d string) error {
	if !utf8.ValidString(d) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidDescription)
	}
	if n := utf8.RuneCountInString(d); n > MaxDescriptionLen {
		return fmt.Errorf("%w: %d characters, more than %d", ErrInvalidDescription, n, MaxDescriptionLen)
	}
	for i, r := range d {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return fmt.Errorf("%w: control character %U at byte %d", ErrInvalidDescription, r, i)
		}
	}
	return nil
}

// ascii reports whether s is all ASCII.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
