package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// retryAfter is the Retry-After of every 503, in seconds.
const retryAfter = "1"

// apiError is an error the edge itself decided: its status, code and
// message go to the client as they are.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// tagError names the tag an error of the domain was about, so messages can
// say which.
type tagError struct {
	tag string
	err error
}

func (e *tagError) Error() string { return fmt.Sprintf("biz tag %q: %v", e.tag, e.err) }
func (e *tagError) Unwrap() error { return e.err }

func withTag(tag string, err error) error {
	if err == nil {
		return nil
	}
	return &tagError{tag: tag, err: err}
}

// panicError is a recovered panic.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// errorBody is the JSON of every error.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// classify is the one map from an error to what the client sees.
func classify(err error) *apiError {
	var (
		ae  *apiError
		he  *echo.HTTPError
		mbe *http.MaxBytesError
		te  *tagError
		nm  *segment.NotMigratedError
	)
	tag := ""
	if errors.As(err, &te) {
		tag = te.tag
	}
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &mbe):
		return newError(http.StatusRequestEntityTooLarge, codeInvalidRequest, "request body larger than %d bytes", mbe.Limit)
	case errors.As(err, &he):
		return classifyEcho(he)

	case errors.Is(err, segment.ErrInvalidTag):
		return newError(http.StatusBadRequest, codeInvalidTag, "%s", err.Error())
	case errors.Is(err, segment.ErrInvalidStep), errors.Is(err, segment.ErrInvalidMaxID), errors.Is(err, segment.ErrInvalidDescription):
		return newError(http.StatusBadRequest, codeInvalidRequest, "%s", unwrapTag(err).Error())
	case errors.Is(err, snowflake.ErrInvalidID):
		return newError(http.StatusBadRequest, codeInvalidID, "%s", err.Error())
	case errors.Is(err, segment.ErrUnknownTag):
		return newError(http.StatusNotFound, codeUnknownTag, "biz tag %q does not exist", tag)
	case errors.Is(err, segment.ErrTagExists):
		return newError(http.StatusConflict, codeTagExists, "biz tag %q already exists", tag)

	// Formatted and opaque tags (package bizid).
	case errors.Is(err, bizid.ErrInvalidFormat):
		return newError(http.StatusBadRequest, codeInvalidFormat, "%s", unwrapTag(err).Error())
	case errors.Is(err, bizid.ErrFixed):
		return newError(http.StatusConflict, codeFormatFixed, "%s", unwrapTag(err).Error())
	case errors.Is(err, bizid.ErrPeriodClosed):
		return newError(http.StatusConflict, codePeriodClosed, "%s", unwrapTag(err).Error())
	case errors.Is(err, bizid.ErrSequenceFull):
		return newError(http.StatusConflict, codeSequenceFull, "biz tag %q: %s", tag, unwrapTag(err).Error())
	case errors.Is(err, bizid.ErrNotNumeric):
		return newError(http.StatusConflict, codeNotNumeric, "biz tag %q: %s", tag, unwrapTag(err).Error())
	case errors.Is(err, bizid.ErrNotOpaque):
		return newError(http.StatusBadRequest, codeInvalidRequest, "biz tag %q is not opaque: its ids are their numbers", tag)
	case errors.Is(err, bizid.ErrOutOfDomain):
		return newError(http.StatusBadRequest, codeInvalidID, "%s", unwrapTag(err).Error())
	case errors.Is(err, bizid.ErrNoKey):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "%s", unwrapTag(err).Error())

	// The server's own data is wrong or spent: no retry helps, so these
	// are not 503s; an operator has to act.
	case errors.Is(err, bizid.ErrExhausted):
		return newError(http.StatusGone, codeTagExhausted, "biz tag %q has issued its last id: %s", tag, unwrapTag(err).Error())
	case errors.Is(err, segment.ErrExhausted):
		return newError(http.StatusGone, codeTagExhausted, "biz tag %q has issued its last id: max_id is the int64 maximum", tag)
	case errors.Is(err, segment.ErrMisconfigured):
		return newError(http.StatusInternalServerError, codeTagMisconfigured,
			"biz tag %q cannot be served: its row in leaf_alloc has a step below 1; set a step from %d to %d", tag, segment.MinStep, segment.MaxStep)

	// Unavailable: retrying later may succeed. Messages are fixed so no
	// detail of the store (addresses, drivers) reaches the client.
	case errors.As(err, &nm):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "%s", nm.Error())
	case errors.Is(err, segment.ErrUnavailable):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "no segment available, the store is unreachable; retry later")
	case errors.Is(err, segment.ErrStoreUnavailable):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "the store is unreachable; retry later")
	case errors.Is(err, snowflake.ErrClockBackwards):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "%s; retry later", snowflake.Reason(err))
	case errors.Is(err, snowflake.ErrExhausted):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "%s", snowflake.Reason(err))
	case errors.Is(err, snowflake.ErrLeaseLost), errors.Is(err, snowflake.ErrNoWorkerID):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "%s; retry later", snowflake.Reason(err))
	case errors.Is(err, segment.ErrClosed), errors.Is(err, snowflake.ErrClosed), errors.Is(err, bizid.ErrClosed):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "the service is shutting down; retry later")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return newError(http.StatusServiceUnavailable, codeUnavailable, "the request timed out; retry later")
	}
	return newError(http.StatusInternalServerError, codeInternal, "internal error")
}

// unwrapTag drops the tagError wrapper from a message.
func unwrapTag(err error) error {
	var te *tagError
	if errors.As(err, &te) {
		return te.err
	}
	return err
}

// classifyEcho maps echo's own errors (router 404/405, binder) so that
// echo's default body never leaks.
func classifyEcho(he *echo.HTTPError) *apiError {
	switch he.Code {
	case http.StatusNotFound:
		return newError(http.StatusNotFound, codeNotFound, "no such route")
	case http.StatusMethodNotAllowed:
		return newError(http.StatusMethodNotAllowed, codeMethodNotAllowed, "method not allowed on this route")
	case http.StatusRequestEntityTooLarge:
		return newError(http.StatusRequestEntityTooLarge, codeInvalidRequest, "request body too large")
	case http.StatusUnauthorized:
		return newError(http.StatusUnauthorized, codeUnauthorized, "missing or wrong bearer token")
	case http.StatusServiceUnavailable:
		return newError(http.StatusServiceUnavailable, codeUnavailable, "service unavailable; retry later")
	}
	if he.Code >= 400 && he.Code < 500 {
		return newError(he.Code, codeInvalidRequest, "%s", lower(http.StatusText(he.Code)))
	}
	return newError(http.StatusInternalServerError, codeInternal, "internal error")
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// handleError is echo's HTTPErrorHandler: it renders every error as
// {"error":{"code","message"}} and logs what the client cannot act on.
func (s *server) handleError(err error, c echo.Context) {
	ae := classify(err)
	req := c.Request()
	switch {
	case ae.status >= 500 && ae.code == codeInternal:
		attrs := []any{"method", req.Method, "route", c.Path(), "err", err}
		var pe *panicError
		if errors.As(err, &pe) {
			attrs = append(attrs, "stack", string(pe.stack))
		}
		s.log.ErrorContext(req.Context(), "request failed", attrs...)
	case ae.status >= 500:
		// Unavailability is logged where it starts and ends (the store,
		// the loads, the lease), not once per request: an outage would
		// write thousands of lines a second.
		s.log.DebugContext(req.Context(), "request unavailable", "method", req.Method, "route", c.Path(), "err", err)
	}
	if c.Response().Committed {
		return
	}
	h := c.Response().Header()
	if bodyUnread(req) { // see bodyWatch
		h.Set(echo.HeaderConnection, "close")
	}
	if ae.status == http.StatusServiceUnavailable {
		h.Set("Retry-After", retryAfter)
	}
	if ae.status == http.StatusUnauthorized {
		h.Set(echo.HeaderWWWAuthenticate, `Bearer realm="leaf admin"`)
	}
	if req.Method == http.MethodHead {
		err = c.NoContent(ae.status)
	} else {
		err = c.JSON(ae.status, errorBody{Error: errorDetail{Code: ae.code, Message: ae.message}})
	}
	if err != nil {
		s.log.DebugContext(req.Context(), "write error response", "err", err)
	}
}
