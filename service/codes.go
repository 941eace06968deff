// Package service is what an id request means once an edge has decoded
// it, and everything both edges share. Service serves each kind of id: its
// Registry is the one record of what kind each tag is (plain, formatted or
// opaque, ordered), read from the store once, by which each request goes to
// the part that serves it; it sends a request for a sequence section or an
// ordered tag to its owner
// through a Peer (Forwarder, counted once for both edges); it says whether
// a mode is on and whether a name can be a tag's (Off, SegmentCall,
// SequenceCall, SpaceCall). TagAdmin is the administration of tags behind
// both edges' admin calls, with every rule of their settings and defaults
// (NewTag). Here too are the error codes, each with its HTTP status and
// its gRPC code, the map from the domain's errors to them (Classify), and
// the limits of a request. httpapi serves them over HTTP and JSON, grpcapi
// over gRPC, gRPC-Web and Connect; neither imports the other, and both take
// every code, status, limit and rule from here.
package service

import (
	"net/http"
	"slices"

	"connectrpc.com/connect"
)

// Error codes of the API. The table below is their one home: docs/http-api.md's
// table of errors, the Go client's sentinels, the HTTP fuzz target and the
// gRPC mapping are tested against it.
const (
	InvalidTag       = "invalid_tag"
	InvalidID        = "invalid_id"
	InvalidCount     = "invalid_count"
	InvalidRequest   = "invalid_request"
	Unauthorized     = "unauthorized"
	UnknownTag       = "unknown_tag"
	NotFound         = "not_found"
	MethodNotAllowed = "method_not_allowed"
	TagExists        = "tag_exists"
	TagExhausted     = "tag_exhausted"
	TagBoundReached  = "tag_bound_reached"
	LeaseLost        = "lease_lost"
	TagMisconfigured = "tag_misconfigured"
	Unavailable      = "unavailable"
	StoreNotDurable  = "store_not_durable"
	Internal         = "internal"
	// Formatted and opaque tags (package bizid).
	InvalidFormat = "invalid_format"
	FormatFixed   = "format_fixed"
	NotNumeric    = "not_numeric"
	PeriodClosed  = "period_closed"
	SequenceFull  = "sequence_full"

	InvalidSpace      = "invalid_space"
	InvalidKey        = "invalid_key"
	UnknownSpace      = "unknown_space"
	SpaceExists       = "space_exists"
	SequenceExhausted = "sequence_exhausted"
)

// codeInfo is one row of the table: a code, the HTTP status it is
// usually answered with, and the gRPC code it is always answered with.
type codeInfo struct {
	code string
	http int
	grpc connect.Code
}

// table lists every code once. The HTTP status is the code's usual one:
// the HTTP edge answers invalid_request with 413 or 408 too, for a body too
// large or too slow, which gRPC bounds by itself. The gRPC code is the only
// one: a client of either protocol can tell every case apart by the code
// carried in the error (see grpcapi), and by the status or gRPC code alone
// in the broad classes below.
var table = [...]codeInfo{
	{InvalidTag, http.StatusBadRequest, connect.CodeInvalidArgument},
	{InvalidID, http.StatusBadRequest, connect.CodeInvalidArgument},
	{InvalidCount, http.StatusBadRequest, connect.CodeInvalidArgument},
	{InvalidRequest, http.StatusBadRequest, connect.CodeInvalidArgument},
	{Unauthorized, http.StatusUnauthorized, connect.CodeUnauthenticated},
	{UnknownTag, http.StatusNotFound, connect.CodeNotFound},
	// No such route, or the mode is off: the call is not served here.
	{NotFound, http.StatusNotFound, connect.CodeUnimplemented},
	{MethodNotAllowed, http.StatusMethodNotAllowed, connect.CodeUnimplemented},
	{TagExists, http.StatusConflict, connect.CodeAlreadyExists},
	// The tag's ids are spent; no retry helps (HTTP 410 sends no
	// Retry-After either).
	{TagExhausted, http.StatusGone, connect.CodeResourceExhausted},
	// The tag issued the last id of the bound it declared: until the
	// bound is raised.
	{TagBoundReached, http.StatusGone, connect.CodeResourceExhausted},
	// A worker lease renewed or released that is no longer the holder's:
	// it must stop and acquire another.
	{LeaseLost, http.StatusConflict, connect.CodeFailedPrecondition},
	// An operator must fix the row first.
	{TagMisconfigured, http.StatusInternalServerError, connect.CodeFailedPrecondition},
	{Unavailable, http.StatusServiceUnavailable, connect.CodeUnavailable},
	// The instance requires a durable database (--require-durable) and
	// the database's settings say it can forget a commit: an operator
	// changes them, and the instance serves again once it reads them.
	{StoreNotDurable, http.StatusServiceUnavailable, connect.CodeUnavailable},
	{Internal, http.StatusInternalServerError, connect.CodeInternal},
	// A formatted or opaque tag's settings refused: the request is wrong.
	{InvalidFormat, http.StatusBadRequest, connect.CodeInvalidArgument},
	// The request is sound, but the tag's state forbids it: a change of
	// settings that could repeat ids, a range of texts, a period closed.
	{FormatFixed, http.StatusConflict, connect.CodeFailedPrecondition},
	{NotNumeric, http.StatusConflict, connect.CodeFailedPrecondition},
	{PeriodClosed, http.StatusConflict, connect.CodeFailedPrecondition},
	// The period's fixed-width numbers are spent until the next one.
	{SequenceFull, http.StatusConflict, connect.CodeResourceExhausted},
	{InvalidSpace, http.StatusBadRequest, connect.CodeInvalidArgument},
	{InvalidKey, http.StatusBadRequest, connect.CodeInvalidArgument},
	{UnknownSpace, http.StatusNotFound, connect.CodeNotFound},
	{SpaceExists, http.StatusConflict, connect.CodeAlreadyExists},
	// A section's max_seq reached the int64 maximum, as tag_exhausted.
	{SequenceExhausted, http.StatusGone, connect.CodeResourceExhausted},
}

// Codes returns every code an error answer of the API may carry (docs/http-api.md,
// "Errors").
func Codes() []string {
	out := make([]string, len(table))
	for i, r := range table {
		out[i] = r.code
	}
	return out
}

func lookup(code string) (codeInfo, bool) {
	i := slices.IndexFunc(table[:], func(r codeInfo) bool { return r.code == code })
	if i < 0 {
		return codeInfo{}, false
	}
	return table[i], true
}

// HTTPStatus is the usual HTTP status of code; 500 for a code not in the
// table.
func HTTPStatus(code string) int {
	if r, ok := lookup(code); ok {
		return r.http
	}
	return http.StatusInternalServerError
}

// GRPCCode is the gRPC code of code; Internal for a code not in the table.
func GRPCCode(code string) connect.Code {
	if r, ok := lookup(code); ok {
		return r.grpc
	}
	return connect.CodeInternal
}
