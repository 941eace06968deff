package httpapi

import "github.com/leafid/leaf/leafapi"

// Error codes of the API, by their names in this package. Their one home
// is package leafapi, which gives each its HTTP status and gRPC code.
const (
	codeInvalidTag       = leafapi.InvalidTag
	codeInvalidID        = leafapi.InvalidID
	codeInvalidCount     = leafapi.InvalidCount
	codeInvalidRequest   = leafapi.InvalidRequest
	codeUnauthorized     = leafapi.Unauthorized
	codeUnknownTag       = leafapi.UnknownTag
	codeNotFound         = leafapi.NotFound
	codeMethodNotAllowed = leafapi.MethodNotAllowed
	codeUnavailable      = leafapi.Unavailable
	codeInternal         = leafapi.Internal
	codeInvalidFormat    = leafapi.InvalidFormat
)

// ErrorCodes returns every code an error answer of the API may carry
// (README.md, "Errors").
func ErrorCodes() []string { return leafapi.Codes() }
