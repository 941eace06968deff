package segment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode"
	"unicode/utf8"
)

// Errors of segment mode. The store returns them too, so callers compare
// with errors.Is whatever layer the error came from.
var (
	// ErrUnknownTag: the biz tag has no row in leaf_alloc.
	ErrUnknownTag = errors.New("unknown biz tag")
	// ErrTagExists: creating a tag that already has a row.
	ErrTagExists = errors.New("biz tag already exists")
	// ErrInvalidTag: a tag name outside the allowed alphabet or length.
	ErrInvalidTag = errors.New("invalid biz tag")
	// ErrInvalidStep: a step outside MinStep..MaxStep.
	ErrInvalidStep = errors.New("invalid step")
	// ErrInvalidMaxID: a max_id below 1, or lower than the current one.
	ErrInvalidMaxID = errors.New("invalid max_id")
	// ErrInvalidDescription: a description longer than MaxDescriptionLen.
	ErrInvalidDescription = errors.New("invalid description")
	// ErrExhausted: the tag's max_id is at the int64 maximum; it has
	// issued its last id and never issues another.
	ErrExhausted = errors.New("biz tag has issued its last id (max_id is the int64 maximum)")
	// ErrMisconfigured: the tag's row cannot be served as it is (a step
	// below 1); an operator must fix it. Retrying does not help until then.
	ErrMisconfigured = errors.New("biz tag's row is misconfigured")
	// ErrUnavailable: no id can be issued now (store unreachable and the
	// buffer empty); retrying later may succeed.
	ErrUnavailable = errors.New("segment unavailable")
	// ErrStoreUnavailable: the store did not answer (unreachable, timed
	// out, no node that may take writes); retrying later may succeed.
	ErrStoreUnavailable = errors.New("store unavailable")
	// ErrClosed: the allocator was closed.
	ErrClosed = errors.New("allocator closed")
)

// NotMigratedError says that a table or column the store needs does not
// exist: the database lacks migrations (`leaf serve --migrate=false`, say).
type NotMigratedError struct {
	Table  string // the missing table, when it is one
	Detail string // the database's words otherwise
}

func (e *NotMigratedError) Error() string {
	if e.Table != "" {
		return fmt.Sprintf("table %s does not exist: the database is not migrated; run `leaf migrate`", e.Table)
	}
	return fmt.Sprintf("the database is not migrated (%s); run `leaf migrate`", e.Detail)
}

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
}

// Allocation is the result of raising a tag's max_id once.
type Allocation struct {
	// MaxID is max_id after the raise: the range handed out is
	// [MaxID-Step, MaxID-1].
	MaxID int64
	// Step is how much max_id was raised by.
	Step int64
	// DBStep is the step stored in the row (the floor of the adaptive step).
	DBStep int64
}

// Start is the first id of the allocated range.
func (a Allocation) Start() int64 { return a.MaxID - a.Step }

// Store is what the allocator needs from the database.
type Store interface {
	// Allocate raises the tag's max_id by step atomically and returns the
	// new max_id. A step <= 0 means the row's own step. Near the int64
	// maximum the step may be cut to the ids left (Allocation.Step says
	// what was taken). It returns ErrUnknownTag when there is no row of
	// exactly this name, ErrMisconfigured for a row whose step is below 1
	// and ErrExhausted when max_id is already the int64 maximum.
	Allocate(ctx context.Context, tag string, step int64) (Allocation, error)
	// AllocateAbove is Allocate after raising max_id to at least floor,
	// atomically, so that the range starts at floor or above.
	AllocateAbove(ctx context.Context, tag string, step, floor int64) (Allocation, error)
	// Tag returns one row, or ErrUnknownTag.
	Tag(ctx context.Context, tag string) (Tag, error)
	// Tags returns every row, ordered by name.
	Tags(ctx context.Context) ([]Tag, error)
	// FindTags returns those of names that have a row of exactly that
	// name, in any order: a row that only a collation matches ("ORDERS"
	// for "orders") is not found, nor is a name the table cannot hold.
	FindTags(ctx context.Context, names []string) ([]string, error)
}

// HandBacker is implemented by stores that can take back the unused tail of
// a range (see Allocator.HandBack).
type HandBacker interface {
	// HandBack sets the tag's max_id from end back to first in one
	// compare-and-set, only while max_id is still end, and reports whether
	// it did.
	HandBack(ctx context.Context, tag string, end, first int64) (bool, error)
}

// ValidateTag reports whether name can be the name of a row of leaf_alloc,
// and so be asked for: 1 to MaxTagLen characters of valid UTF-8, which is
// what Leaf's varchar(128) column holds. Any such row is served; names that
// need it are percent-encoded in a URL path. The error wraps ErrInvalidTag.
func ValidateTag(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidTag)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidTag)
	}
	if n := utf8.RuneCountInString(name); n > MaxTagLen {
		return fmt.Errorf("%w: %d characters, more than %d", ErrInvalidTag, n, MaxTagLen)
	}
	return nil
}

// ValidateNewTag is ValidateTag for a tag about to be created. It also
// refuses what a client could not address or an operator could not read:
// control characters, and the names "." and "..", which URL clients
// resolve as path steps before sending.
func ValidateNewTag(name string) error {
	if err := ValidateTag(name); err != nil {
		return err
	}
	if name == "." || name == ".." {
		return fmt.Errorf("%w: %q cannot be addressed in a URL path", ErrInvalidTag, name)
	}
	for i, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character %U at byte %d", ErrInvalidTag, r, i)
		}
	}
	return nil
}

// ValidateStep reports whether step is within MinStep..MaxStep.
func ValidateStep(step int64) error {
	if step < MinStep || step > MaxStep {
		return fmt.Errorf("%w: %d is outside %d..%d", ErrInvalidStep, step, MinStep, MaxStep)
	}
	return nil
}

// DefaultStep is the step of a tag created without one.
const DefaultStep = 1000

// Validate checks a tag about to be created: its name (ValidateNewTag), a step within
// MinStep..MaxStep, a max_id of at least 1 and a description of at most
// MaxDescriptionLen characters.
func (t Tag) Validate() error {
	if err := ValidateNewTag(t.Name); err != nil {
		return err
	}
	if err := ValidateStep(t.Step); err != nil {
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
		if err := ValidateStep(*u.Step); err != nil {
			return err
		}
	}
	if u.MaxID != nil {
		if err := validateMaxID(*u.MaxID); err != nil {
			return err
		}
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
