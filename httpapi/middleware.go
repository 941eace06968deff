package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
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
//
// Echo's Allow lists OPTIONS, which leaf answers on no path (fastpath.go):
// it is left out.
func (s *server) handleUnrouted(err error, c echo.Context) {
	h := c.Response().Header()
	if allow, ok := strings.CutPrefix(h.Get(echo.HeaderAllow), http.MethodOptions+", "); ok {
		h.Set(echo.HeaderAllow, allow)
	}
	s.handleError(err, c)
	s.record(c, 0)
}

// record counts a finished request in the metrics and logs it at debug
// level. It never logs headers.
func (s *server) record(c echo.Context, took time.Duration) {
	req, status, route := c.Request(), c.Response().Status, routeLabel(c)
	observeRequest(s.metrics, route, req.Method, status, took)
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
// *http.MaxBytesError, rendered as 413. A request with a body gets a
// writer that closes the connection after an answer written before the
// body was read to its end (see bodyWatch).
func bodyLimit(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > limit {
				return &http.MaxBytesError{Limit: limit}
			}
			if req.Body != nil && req.Body != http.NoBody {
				w := &bodyWatch{ReadCloser: http.MaxBytesReader(c.Response(), req.Body, limit)}
				req.Body = w
				res := c.Response()
				w.ResponseWriter, res.Writer = res.Writer, w
			}
			return next(c)
		}
	}
}

// bodyWatch is a request body that remembers whether it was read to its
// end, and the response writer of the same request. Before net/http writes
// an answer on a keep-alive connection it reads what is left of the body
// (up to 256 KiB), to find the next request: an answer given without
// reading the body (a refusal, say) would wait for a body the client may
// never send, because it waits for the answer first. So an answer written
// while the body is unread says Connection: close, and net/http then
// writes it at once and closes.
type bodyWatch struct {
	io.ReadCloser
	http.ResponseWriter
	eof bool
}

func (w *bodyWatch) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if err == io.EOF {
		w.eof = true
	}
	return n, err
}

func (w *bodyWatch) WriteHeader(code int) {
	if !w.eof {
		w.Header().Set(echo.HeaderConnection, "close")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *bodyWatch) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bodyUnread reports whether req has a body that was not read to its end.
func bodyUnread(req *http.Request) bool {
	if w, ok := req.Body.(*bodyWatch); ok {
		return !w.eof
	}
	return req.ContentLength != 0 && req.Body != nil && req.Body != http.NoBody
}
