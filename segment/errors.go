package segment

import (
	"errors"
	"fmt"
	"strings"
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
	// ErrNotDurable: the store takes numbers only from a database that
	// keeps every commit it acknowledged (leaf serve --require-durable),
	// and the database's settings say it can forget one, or have not been
	// read; wrapped by a NotDurableError.
	ErrNotDurable = errors.New("the database can forget acknowledged commits")
	// ErrClosed: the allocator was closed.
	ErrClosed = errors.New("allocator closed")
)

// NotDurableError is why a store refused to hand out numbers while it
// requires durability: Reason says which setting of which node can forget
// a commit, naming no address; empty while the settings have not been
// read. It wraps ErrNotDurable.
type NotDurableError struct {
	Reason string
}

func (e *NotDurableError) Error() string {
	if e.Reason == "" {
		return ErrNotDurable.Error() + ": its settings have not been read yet"
	}
	return ErrNotDurable.Error() + " (" + e.Reason + ")"
}

func (e *NotDurableError) Unwrap() error { return ErrNotDurable }

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

// ExistsError is ErrTagExists naming the row a new tag's name collides
// with: Existing is Name itself, or a name that differs from it only in
// case (tag names are unique whatever their case), or one the column's
// collation takes for it.
type ExistsError struct{ Name, Existing string }

func (e *ExistsError) Error() string {
	switch {
	case e.Existing == e.Name:
		return fmt.Sprintf("%v: %q", ErrTagExists, e.Name)
	case strings.EqualFold(e.Existing, e.Name):
		return fmt.Sprintf("%v: %q collides with the tag %q (tag names are unique whatever their case)", ErrTagExists, e.Name, e.Existing)
	}
	return fmt.Sprintf("%v: %q collides with the tag %q (leaf_alloc's collation takes the two names for one)", ErrTagExists, e.Name, e.Existing)
}

// Is makes an ExistsError ErrTagExists.
func (e *ExistsError) Is(target error) bool { return target == ErrTagExists }
