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
	codeInvalidFormat    = "invalid_format"
	codePeriodClosed     = "period_closed"
	codeSequenceFull     = "sequence_full"
	codeNotNumeric       = "not_numeric"
	codeFormatFixed      = "format_fixed"
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
	codeInvalidFormat,
	codePeriodClosed,
	codeSequenceFull,
	codeNotNumeric,
	codeFormatFixed,
}

// ErrorCodes returns every code an error answer of the API may carry
// (README.md, "Errors").
func ErrorCodes() []string { return slices.Clone(errorCodes[:]) }
