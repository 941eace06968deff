package httpapi

import "github.com/leafid/leaf/service"

// Error codes of the API, by their names in this package. Their one home
// is package service, which gives each its HTTP status and gRPC code.
const (
	codeInvalidTag       = service.InvalidTag
	codeInvalidID        = service.InvalidID
	codeInvalidCount     = service.InvalidCount
	codeInvalidRequest   = service.InvalidRequest
	codeUnauthorized     = service.Unauthorized
	codeUnknownTag       = service.UnknownTag
	codeNotFound         = service.NotFound
	codeMethodNotAllowed = service.MethodNotAllowed
	codeUnavailable      = service.Unavailable
	codeInternal         = service.Internal
	codeInvalidFormat    = service.InvalidFormat
)

// ErrorCodes returns every code an error answer of the API may carry
// (docs/http-api.md, "Errors").
func ErrorCodes() []string { return service.Codes() }
