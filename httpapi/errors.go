package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/service"
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

// classify is the one map from an error to what the client sees: the
// edge's own errors here, the domain's by service.Classify.
func classify(err error) *apiError {
	var (
		ae  *apiError
		he  *echo.HTTPError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &mbe):
		return newError(http.StatusRequestEntityTooLarge, codeInvalidRequest, "request body larger than %d bytes", mbe.Limit)
	case errors.As(err, &he):
		return classifyEcho(he)
	}
	code, msg := service.Classify(err)
	return &apiError{status: service.HTTPStatus(code), code: code, message: msg}
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
