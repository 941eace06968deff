package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Errors of the package. Each error code of the server has its sentinel, so
// that errors.Is(err, client.ErrUnknownTag) works whatever the wrapping; an
// answer of the server is also an *Error, which carries the details.
var (
	ErrInvalidTag       = errors.New("invalid tag")           // invalid_tag
	ErrInvalidID        = errors.New("invalid id")            // invalid_id
	ErrInvalidCount     = errors.New("invalid count")         // invalid_count
	ErrInvalidRequest   = errors.New("invalid request")       // invalid_request
	ErrUnauthorized     = errors.New("unauthorized")          // unauthorized
	ErrUnknownTag       = errors.New("unknown tag")           // unknown_tag
	ErrNotFound         = errors.New("not found")             // not_found
	ErrMethodNotAllowed = errors.New("method not allowed")    // method_not_allowed
	ErrTagExists        = errors.New("tag exists")            // tag_exists
	ErrExhausted        = errors.New("tag exhausted")         // tag_exhausted: the row's max_id is the int64 maximum
	ErrBoundReached     = errors.New("tag bound reached")     // tag_bound_reached: the tag issued the last id of its declared bound
	ErrLeaseLost        = errors.New("worker lease lost")     // lease_lost: the worker lease renewed or released is no longer the holder's
	ErrMisconfigured    = errors.New("tag misconfigured")     // tag_misconfigured: the row's step is below 1
	ErrInternal         = errors.New("internal server error") // internal, or an answer that makes no sense
	ErrInvalidFormat    = errors.New("invalid format")        // invalid_format: a formatted or opaque tag's settings refused
	ErrPeriodClosed     = errors.New("period closed")         // period_closed: the period ended longer ago than the grace
	ErrSequenceFull     = errors.New("sequence full")         // sequence_full: a fixed-width sequence is full for this period
	ErrNotNumeric       = errors.New("not numeric")           // not_numeric: no ranges of a formatted or opaque tag
	ErrFormatFixed      = errors.New("format fixed")          // format_fixed: a change of settings that could repeat ids

	ErrInvalidSpace      = errors.New("invalid sequence space")     // invalid_space
	ErrInvalidKey        = errors.New("invalid sequence key")       // invalid_key: empty, over 256 bytes or not UTF-8
	ErrUnknownSpace      = errors.New("unknown sequence space")     // unknown_space
	ErrSpaceExists       = errors.New("sequence space exists")      // space_exists
	ErrSequenceExhausted = errors.New("sequence section exhausted") // sequence_exhausted: max_seq is the int64 maximum

	// ErrUnavailable is the code unavailable, and every failure to reach
	// a server: retrying later may succeed.
	ErrUnavailable = errors.New("unavailable")
	// ErrStoreNotDurable is the code store_not_durable: the server takes
	// numbers only from a database that keeps every commit (leaf serve
	// --require-durable), and its database's settings say it can forget
	// one; the message names the setting. It is also an ErrUnavailable:
	// another server, on another store, may answer.
	ErrStoreNotDurable = fmt.Errorf("%w: store not durable", ErrUnavailable)
	// ErrClosed is returned by calls made after Close.
	ErrClosed = errors.New("client closed")
)

// sentinels maps the server's error codes (docs/http-api.md, "Errors") to the
// errors above; TestCodesMatchServer holds it to the server's list.
var sentinels = map[string]error{
	"invalid_tag":        ErrInvalidTag,
	"invalid_id":         ErrInvalidID,
	"invalid_count":      ErrInvalidCount,
	"invalid_request":    ErrInvalidRequest,
	"unauthorized":       ErrUnauthorized,
	"unknown_tag":        ErrUnknownTag,
	"not_found":          ErrNotFound,
	"method_not_allowed": ErrMethodNotAllowed,
	"tag_exists":         ErrTagExists,
	"tag_exhausted":      ErrExhausted,
	"tag_bound_reached":  ErrBoundReached,
	"lease_lost":         ErrLeaseLost,
	"tag_misconfigured":  ErrMisconfigured,
	"unavailable":        ErrUnavailable,
	"store_not_durable":  ErrStoreNotDurable,
	"internal":           ErrInternal,
	"invalid_format":     ErrInvalidFormat,
	"period_closed":      ErrPeriodClosed,
	"sequence_full":      ErrSequenceFull,
	"not_numeric":        ErrNotNumeric,
	"format_fixed":       ErrFormatFixed,
	"invalid_space":      ErrInvalidSpace,
	"invalid_key":        ErrInvalidKey,
	"unknown_space":      ErrUnknownSpace,
	"space_exists":       ErrSpaceExists,
	"sequence_exhausted": ErrSequenceExhausted,
}

// Error is one failed request to one endpoint: an error answer of the
// server (Status and Code set), or no usable answer at all (Status 0, or
// the status of an answer that could not be read, and Err set).
//
// errors.Is matches it against the sentinel of its code; a request that
// got no answer matches ErrUnavailable, and a 200 that could not be read
// ErrInternal.
type Error struct {
	Endpoint string // the endpoint's base URL, as configured
	Status   int    // HTTP status; 0 when no answer came
	Code     string // the server's error code, e.g. "unknown_tag"; empty when the answer had none
	Message  string // the server's message
	// RetryAfter is the server's Retry-After, if it sent one.
	RetryAfter time.Duration
	// Err is why no answer could be used: a transport error or a body
	// that is not what the API promises. Nil for an error answer.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Endpoint)
	b.WriteString(": ")
	switch {
	case e.Status == 0:
		// A transport error repeats the URL: say only what failed.
		err := e.Err
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		fmt.Fprintf(&b, "%v", err)
	case e.Code != "":
		fmt.Fprintf(&b, "%d %s: %s", e.Status, e.Code, e.Message)
	case e.Err != nil:
		fmt.Fprintf(&b, "%d: %v", e.Status, e.Err)
	default:
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	}
	return b.String()
}

// Unwrap returns the sentinel of the error's code, and Err.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if s := e.sentinel(); s != nil {
		errs = append(errs, s)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// sentinel is the error's sentinel: by its code when the server sent a
// known one, else by its status. A status the API does not use (a proxy's
// 502, say) counts as unavailable when it is a 5xx or 429.
func (e *Error) sentinel() error {
	if s, ok := sentinels[e.Code]; ok {
		return s
	}
	switch {
	case e.Status == 0:
		return ErrUnavailable
	case e.Status < 300:
		return ErrInternal
	case e.Status == http.StatusTooManyRequests || e.Status >= 500:
		return ErrUnavailable
	case e.Status == http.StatusNotFound:
		return ErrNotFound
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return ErrUnauthorized
	}
	return ErrInvalidRequest
}

// failover says whether another endpoint may answer where this one
// failed: no answer, or a 5xx other than tag_misconfigured, which every
// server reading the same row would give. A 4xx is an answer about the
// request (tag_exhausted is a 410), the same from every server, so it is
// returned.
func (e *Error) failover() bool {
	switch {
	case e.Status == 0 || e.Status == http.StatusTooManyRequests:
		return true
	case e.Status < 300: // an unreadable 200, e.g. from a misbehaving proxy
		return true
	case e.Status >= 500:
		return e.Code != "tag_misconfigured"
	}
	return false
}

// unavailableError is a request that no endpoint answered usably: it
// lists the last error of every endpoint, in the order configured.
type unavailableError struct {
	op   string
	errs []error // one per endpoint: its last error, or nil if it never failed
}

func (e *unavailableError) Error() string {
	var b strings.Builder
	b.WriteString("leaf client: ")
	b.WriteString(e.op)
	b.WriteString(": no endpoint available")
	sep := ": "
	for _, err := range e.errs {
		if err != nil {
			b.WriteString(sep)
			b.WriteString(err.Error())
			sep = "; "
		}
	}
	return b.String()
}

// Unwrap lets errors.Is find ErrUnavailable, and errors.As an endpoint's
// *Error.
func (e *unavailableError) Unwrap() []error {
	errs := []error{ErrUnavailable}
	for _, err := range e.errs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
