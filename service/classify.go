package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// tagError names the tag an error of the domain was about, so messages can
// say which.
type tagError struct {
	tag string
	err error
}

func (e *tagError) Error() string { return fmt.Sprintf("biz tag %q: %v", e.tag, e.err) }
func (e *tagError) Unwrap() error { return e.err }

// WithTag wraps err with the tag it was about; nil stays nil.
func WithTag(tag string, err error) error {
	if err == nil {
		return nil
	}
	return &tagError{tag: tag, err: err}
}

// unwrapTag drops the tag's wrapper from a message.
func unwrapTag(err error) error {
	var te *tagError
	if errors.As(err, &te) {
		return te.err
	}
	return err
}

// spaceError names the sequence space an error of the domain was about.
type spaceError struct {
	space string
	err   error
}

func (e *spaceError) Error() string { return fmt.Sprintf("space %q: %v", e.space, e.err) }
func (e *spaceError) Unwrap() error { return e.err }

// WithSpace wraps err with the sequence space it was about; nil stays nil.
func WithSpace(space string, err error) error {
	if err == nil {
		return nil
	}
	return &spaceError{space: space, err: err}
}

// unwrapSpace drops the space's wrapper from a message.
func unwrapSpace(err error) error {
	var se *spaceError
	if errors.As(err, &se) {
		return se.err
	}
	return err
}

// Classify is the one map from an error of the domain (segment,
// snowflake, sequence, a context's end) to the code and message a client
// sees; an *Error keeps its own. It returns Internal with a fixed message
// for an error it does not know: such an error is a bug, and its text is
// not for clients.
//
// It is the table of every error a client can see, one case a row, and
// the cases are tried in order (an error that wraps two sentinels gets the
// first row that matches): its parts, one per domain, are asked in that
// order, and read top to bottom in this file.
func Classify(err error) (code, message string) {
	var (
		te *tagError
		le *Error
		ee *segment.ExistsError
	)
	if errors.As(err, &le) {
		return le.Code, le.Message
	}
	tag := ""
	if errors.As(err, &te) {
		tag = te.tag
	}
	space := ""
	var se *spaceError
	if errors.As(err, &se) {
		space = se.space
	}
	if code, message, ok := classifyDurability(err); ok {
		return code, message
	}
	if code, message, ok := classifySequence(err, tag, space); ok {
		return code, message
	}
	switch {
	case errors.Is(err, segment.ErrInvalidTag):
		return InvalidTag, err.Error()
	case errors.Is(err, segment.ErrInvalidStep), errors.Is(err, segment.ErrInvalidMaxID), errors.Is(err, segment.ErrInvalidDescription):
		return InvalidRequest, unwrapTag(err).Error()
	case errors.Is(err, segment.ErrBoundReached):
		return TagBoundReached, fmt.Sprintf("%v; raise the tag's bound (max) to go on", unwrapTag(err))
	case errors.Is(err, snowflake.ErrInvalidInterval), errors.Is(err, uuidv7.ErrInvalidInterval):
		return InvalidRequest, err.Error()
	case errors.Is(err, snowflake.ErrInvalidID):
		return InvalidID, err.Error()
	case errors.Is(err, segment.ErrUnknownTag):
		return UnknownTag, fmt.Sprintf("biz tag %q does not exist", tag)
	case errors.As(err, &ee) && ee.Existing != ee.Name:
		return TagExists, fmt.Sprintf("biz tag %q already exists as %q: %s", ee.Name, ee.Existing, existsWhy(ee))
	case errors.Is(err, segment.ErrTagExists):
		return TagExists, fmt.Sprintf("biz tag %q already exists", tag)

	}
	if code, message, ok := classifyBiz(err, tag); ok {
		return code, message
	}
	switch {
	// The server's own data is wrong or spent: no retry helps, so these
	// are not unavailable; an operator has to act.
	case errors.Is(err, segment.ErrExhausted):
		return TagExhausted, fmt.Sprintf("biz tag %q has issued its last id: max_id is the int64 maximum", tag)
	case errors.Is(err, segment.ErrMisconfigured):
		return TagMisconfigured, fmt.Sprintf("biz tag %q cannot be served: its row in leaf_alloc has a step below 1; set a step from %d to %d",
			tag, segment.MinStep, segment.MaxStep)
	}
	if code, message, ok := classifyUnavailable(err); ok {
		return code, message
	}
	return Internal, "internal error"
}

// classifyBiz is Classify's answer for the errors of formatted and opaque
// tags (package bizid); ok is false for another error.
func classifyBiz(err error, tag string) (code, message string, ok bool) {
	var pr *bizid.PeriodRowError
	switch {
	case errors.As(err, &pr):
		return InvalidTag, pr.Error(), true
	case errors.Is(err, bizid.ErrInvalidFormat):
		return InvalidFormat, unwrapTag(err).Error(), true
	case errors.Is(err, bizid.ErrFixed):
		return FormatFixed, unwrapTag(err).Error(), true
	case errors.Is(err, bizid.ErrPeriodClosed):
		return PeriodClosed, unwrapTag(err).Error(), true
	case errors.Is(err, bizid.ErrSequenceFull):
		return SequenceFull, fmt.Sprintf("biz tag %q: %v", tag, unwrapTag(err)), true
	case errors.Is(err, bizid.ErrNotNumeric):
		return NotNumeric, fmt.Sprintf("biz tag %q: %v", tag, unwrapTag(err)), true
	case errors.Is(err, bizid.ErrNotOpaque):
		return InvalidRequest, fmt.Sprintf("biz tag %q is not opaque: its ids are their numbers", tag), true
	case errors.Is(err, bizid.ErrOutOfDomain):
		return InvalidID, unwrapTag(err).Error(), true
	case errors.Is(err, bizid.ErrNoKey), errors.Is(err, bizid.ErrNoOwner):
		return Unavailable, unwrapTag(err).Error(), true
	case errors.Is(err, bizid.ErrExhausted):
		return TagExhausted, fmt.Sprintf("biz tag %q has issued its last id: %v", tag, unwrapTag(err)), true
	}
	return "", "", false
}

// classifyDurability is Classify's answer for a refusal for durability,
// whichever part was refused; ok is false for another error.
func classifyDurability(err error) (code, message string, ok bool) {
	var nd *segment.NotDurableError
	switch {
	// A refusal for durability, whichever part was refused: an operator
	// changes a setting of the database.
	case errors.As(err, &nd) && nd.Reason == "":
		return StoreNotDurable, "this instance takes numbers only from a database whose settings keep every commit it acknowledged (leaf serve --require-durable), and it has not read them yet; retry later", true
	case errors.As(err, &nd):
		return StoreNotDurable, "the database can forget commits it acknowledged (" + nd.Reason + "), and this instance takes numbers only from one that cannot (leaf serve --require-durable): change that setting, or serve without --require-durable", true
	}
	return "", "", false
}

// classifySequence is Classify's answer for the errors of sequences, of a
// space or of an ordered tag's owner; ok is false for another error.
func classifySequence(err error, tag, space string) (code, message string, ok bool) {
	switch {
	case errors.Is(err, sequence.ErrInvalidSpace):
		return InvalidSpace, unwrapSpace(err).Error(), true
	case errors.Is(err, sequence.ErrInvalidKey):
		return InvalidKey, unwrapSpace(err).Error(), true
	case errors.Is(err, sequence.ErrInvalidStep), errors.Is(err, sequence.ErrInvalidSections):
		return InvalidRequest, unwrapSpace(err).Error(), true
	case errors.Is(err, sequence.ErrUnknownSpace):
		return UnknownSpace, fmt.Sprintf("sequence space %q does not exist", space), true
	case errors.Is(err, sequence.ErrSpaceExists):
		return SpaceExists, fmt.Sprintf("sequence space %q already exists; its step and section count stay as they are", space), true
	case errors.Is(err, sequence.ErrExhausted):
		return SequenceExhausted, fmt.Sprintf("a section of sequence space %q has issued its last number: max_seq is at the int64 maximum", space), true
	case errors.Is(err, sequence.ErrClosed):
		return Unavailable, "the service is shutting down; retry later", true
	case errors.Is(err, sequence.ErrUnavailable) && space == "" && tag != "":
		return Unavailable, fmt.Sprintf("no instance serves biz tag %q now (the store is unreachable or its owner is changing); retry later", tag), true
	case errors.Is(err, sequence.ErrUnavailable):
		return Unavailable, "no instance serves the key's section now (the store is unreachable or ownership is moving); retry later", true
	}
	return "", "", false
}

// classifyUnavailable is Classify's answer for the refusals that retrying
// later may end; ok is false for another error.
func classifyUnavailable(err error) (code, message string, ok bool) {
	var nm *segment.NotMigratedError
	switch {
	// Unavailable: retrying later may succeed. Messages are fixed so no
	// detail of the store (addresses, drivers) reaches the client.
	case errors.As(err, &nm):
		return Unavailable, nm.Error(), true
	case errors.Is(err, segment.ErrUnavailable):
		return Unavailable, "no segment available, the store is unreachable; retry later", true
	case errors.Is(err, segment.ErrStoreUnavailable):
		return Unavailable, "the store is unreachable; retry later", true
	case errors.Is(err, snowflake.ErrClockBackwards):
		return Unavailable, snowflake.Reason(err) + "; retry later", true
	case errors.Is(err, snowflake.ErrExhausted):
		return Unavailable, snowflake.Reason(err), true
	case errors.Is(err, snowflake.ErrLeaseLost), errors.Is(err, snowflake.ErrNoWorkerID):
		return Unavailable, snowflake.Reason(err) + "; retry later", true
	case errors.Is(err, segment.ErrClosed), errors.Is(err, snowflake.ErrClosed):
		return Unavailable, "the service is shutting down; retry later", true
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return Unavailable, "the request timed out; retry later", true
	}
	return "", "", false
}

// existsWhy says why a new tag's name collides with another's.
func existsWhy(e *segment.ExistsError) string {
	if strings.EqualFold(e.Name, e.Existing) {
		return "tag names are unique whatever their case"
	}
	return "the database's collation takes the two names for one"
}
