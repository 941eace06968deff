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
		err := next(c)
		if err != nil {
			c.Error(err) // the HTTPErrorHandler
		}
		took := time.Since(start)
		status := c.Response().Status
		route := routeLabel(c)
		s.metrics.observe(route, c.Request().Method, status, took)
		if s.log.Enabled(c.Request().Context(), slog.LevelDebug) {
			req := c.Request()
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
		return nil
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
			if req.Body != nil {
				req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			}
			return next(c)
		}
	}
}
