package sequence

import (
	"errors"
	"fmt"
)

// Errors of the sequences. The store returns them too, so callers compare
// with errors.Is whatever layer the error came from.
var (
	// ErrUnknownSpace: no space of that name exists.
	ErrUnknownSpace = errors.New("unknown sequence space")
	// ErrSpaceExists: creating a space that exists. Its step and section
	// count stay as they are: a space's section count never changes.
	ErrSpaceExists = errors.New("sequence space already exists")
	// ErrInvalidSpace: a space name that is empty, too long or not UTF-8.
	ErrInvalidSpace = errors.New("invalid sequence space")
	// ErrInvalidKey: a key that is empty, longer than MaxKeyLen bytes or
	// not UTF-8.
	ErrInvalidKey = errors.New("invalid sequence key")
	// ErrInvalidStep: a step outside MinStep..MaxStep.
	ErrInvalidStep = errors.New("invalid sequence step")
	// ErrInvalidSections: a section count outside 1..MaxSections.
	ErrInvalidSections = errors.New("invalid section count")
	// ErrExhausted: the section's max_seq cannot be raised past the int64
	// maximum.
	ErrExhausted = errors.New("sequence section has issued its last number")
	// ErrUnavailable: no number can be issued here now (no owner of the
	// section, or the store does not answer); retrying later may succeed.
	ErrUnavailable = errors.New("sequence unavailable")
	// ErrLeaseLost: the section's lease is no longer this instance's.
	ErrLeaseLost = errors.New("section lease lost")
	// ErrFull: an ordered tag's row has fewer numbers left below its
	// limit than were asked for (a capped format's period). Nothing was
	// taken.
	ErrFull = errors.New("no numbers left below the row's limit")
	// ErrClosed: the Sequencer was closed.
	ErrClosed = errors.New("sequencer closed")
)

// FullError says that a row of an ordered tag has fewer numbers left up
// to its limit than were asked for; nothing was taken. It is an ErrFull.
type FullError struct {
	Row         string
	Left, Limit int64
	Asked       int
}

func (e *FullError) Error() string {
	return fmt.Sprintf("%s: %d numbers left up to %d, %d asked for", ErrFull, e.Left, e.Limit, e.Asked)
}

// Is makes a FullError an ErrFull.
func (e *FullError) Is(target error) bool { return target == ErrFull }

// NotOwnerError says that another instance owns the key's section: Addr is
// its advertised address (host:port), where the request can be sent.
type NotOwnerError struct {
	Space   string
	Section int
	Addr    string
}

func (e *NotOwnerError) Error() string {
	return fmt.Sprintf("section %d of space %q is owned by the instance at %s", e.Section, e.Space, e.Addr)
}

// Is makes a NotOwnerError also an ErrUnavailable for callers that do not
// forward.
func (e *NotOwnerError) Is(target error) bool { return target == ErrUnavailable }
