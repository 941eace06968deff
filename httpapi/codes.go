package httpapi

import "slices"

// Error codes of the API. errorCodes below lists them all: it is their one
// home, and the README's table of errors, the Go client's sentinels and
// the fuzz target are tested against it.
const (
	codeInvalidTag       = "invalid_tag"
	codeInvalidID        = "invalid_id"
	codeInvalidCount     = "invalid_count"
	codeInvalidRequest   = "invalid_request"
	codeUnauthorized     = "unauthorized"
	codeUnknownTag       = "unknown_tag"
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeTagExists        = "tag_exists"
	codeTagExhausted     = "tag_exhausted"
	codeTagMisconfigured = "tag_misconfigured"
	codeUnavailable      = "unavailable"
	codeInternal         = "internal"

	codeInvalidSpace      = "invalid_space"
	codeInvalidKey        = "invalid_key"
	codeUnknownSpace      = "unknown_space"
	codeSpaceExists       = "space_exists"
	codeSequenceExhausted = "sequence_exhausted"
)

var errorCodes = [...]string{
	codeInvalidTag,
	codeInvalidID,
	codeInvalidCount,
	codeInvalidRequest,
	codeUnauthorized,
	codeUnknownTag,
	codeNotFound,
	codeMethodNotAllowed,
	codeTagExists,
	codeTagExhausted,
	codeTagMisconfigured,
	codeUnavailable,
	codeInternal,
	codeInvalidSpace,
	codeInvalidKey,
	codeUnknownSpace,
	codeSpaceExists,
	codeSequenceExhausted,
}

// ErrorCodes returns every code an error answer of the API may carry
// (README.md, "Errors").
func ErrorCodes() []string { return slices.Clone(errorCodes[:]) }
