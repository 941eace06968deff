package httpapi

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"
)

// observe is the outermost middleware: it renders the error of the chain
// (so the final status is known), then records the request metrics and
// logs the request at debug level. It never logs headers.
func (s *server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			s.handleError(err, c)
		}
		s.record(c, time.Since(start))
		return nil
	}
}

// handleUnrouted is echo's HTTPErrorHandler, which echo calls only for
// requests no route's chain took (no such path, a wrong method): it
// renders the error and records the request, whose time before this
// point echo does not give.
func (s *server) handleUnrouted(err error, c echo.Context) {
	s.handleError(err, c)
	s.record(c, 0)
}

// record counts a finished request in the metrics and logs it at debug
// level. It never logs headers.
func (s *server) record(c echo.Context, took time.Duration) {
	req, status, route := c.Request(), c.Response().Status, routeLabel(c)
	s.metrics.observe(route, req.Method, status, took)
	if s.log.Enabled(req.Context(), slog.LevelDebug) {
		s.log.DebugContext(req.Context(), "request",
			"method", req.Method,
			"route", route,
			"path", req.URL.Path,
			"status", status,
			"bytes", c.Response().Size,
			"took", took,
			"remote", req.RemoteAddr,
		)
	}
}

// routeLabel is the registered pattern of the matched route, never the raw
// path, so requests create no metric series of their own.
func routeLabel(c echo.Context) string {
	if p := c.Path(); p != "" {
		return p
	}
	return "unmatched"
}

// recover turns a panic in the chain into an error rendered as 500
// internal. http.ErrAbortHandler is re-raised, as net/http expects.
func (s *server) recover(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if r == http.ErrAbortHandler {
				panic(r)
			}
			err = &panicError{value: r, stack: debug.Stack()}
		}()
		return next(c)
	}
}

// headNoBody drops what a handler writes as the body of a HEAD response,
// so each handler can serve HEAD as it serves GET. net/http's own writer
// drops it too, but not every ResponseWriter a handler may be given does.
func headNoBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodHead {
			res := c.Response()
			res.Writer = headWriter{res.Writer}
		}
		return next(c)
	}
}

type headWriter struct{ http.ResponseWriter }

func (headWriter) Write(p []byte) (int, error)   { return len(p), nil }
func (w headWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bodyLimit caps request bodies at limit bytes: a larger Content-Length is
// refused at once, and reading past the limit fails with
// *http.MaxBytesError, rendered as 413.
func bodyLimit(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > limit {
				return &http.MaxBytesError{Limit: limit}
			}
			if req.Body != nil && req.Body != http.NoBody {
				req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			}
			return next(c)
		}
	}
}
