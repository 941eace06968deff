package httpapi

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// Handler serves the whole API: echo and its router, with the two id
// routes that take almost all of a busy instance's requests found without
// the router. GET /api/segment/get/{tag} and GET /api/snowflake/get go
// straight to the chain echo would have run for them (the same
// middleware, route label and handler), with the tag as the route's
// parameter; every other request, and these paths whenever they need the
// router's judgement (a percent-encoded path, a tag with a "/", an empty
// tag, another method), goes through echo as before. The router's search
// was about 2% of a request's instructions on these routes.
type Handler struct {
	*echo.Echo
	segmentGet   echo.HandlerFunc // the composed chain of GET /api/segment/get/:tag
	snowflakeGet echo.HandlerFunc // and of GET /api/snowflake/get
}

const (
	segmentGetPrefix  = "/api/segment/get/"
	segmentGetRoute   = segmentGetPrefix + ":tag"
	snowflakeGetRoute = "/api/snowflake/get"
)

// tagParamNames is the parameter list of segmentGetRoute, shared by every
// request so that setting it allocates nothing.
var tagParamNames = []string{"tag"}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.RawPath == "" {
		p := r.URL.Path
		if tag, ok := strings.CutPrefix(p, segmentGetPrefix); ok && tag != "" && strings.IndexByte(tag, '/') < 0 && h.segmentGet != nil {
			h.serve(w, r, h.segmentGet, segmentGetRoute, tag)
			return
		}
		if p == snowflakeGetRoute && h.snowflakeGet != nil {
			h.serve(w, r, h.snowflakeGet, snowflakeGetRoute, "")
			return
		}
	}
	if r.Method == http.MethodOptions {
		h.options(w, r)
		return
	}
	h.Echo.ServeHTTP(w, r)
}

// options answers OPTIONS as any method a path does not answer: 405 with
// Allow on a route, 404 elsewhere. Echo would answer 204 on every route,
// the admin routes included, telling a caller without a token what they
// answer; leaf answers no CORS preflight.
func (h *Handler) options(w http.ResponseWriter, r *http.Request) {
	c := h.AcquireContext()
	c.Reset(r, w)
	h.Router().Find(r.Method, echo.GetPath(r), c)
	err := echo.ErrNotFound
	if allow, ok := c.Get(echo.ContextKeyHeaderAllow).(string); ok && allow != "" {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		err = echo.ErrMethodNotAllowed
	}
	h.HTTPErrorHandler(err, c)
	h.ReleaseContext(c)
}

// serve runs chain as echo's ServeHTTP would once its router had matched
// route (with tag as its one parameter, when not empty).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, chain echo.HandlerFunc, route, tag string) {
	c := h.AcquireContext()
	c.Reset(r, w)
	c.SetPath(route)
	if tag != "" {
		c.SetParamNames(tagParamNames...)
		// The context's own values, sized for the router's longest route:
		// set in place, as the router does, rather than through
		// SetParamValues, whose variadic slice is an allocation.
		if v := c.ParamValues(); len(v) == 1 {
			v[0] = tag
		} else {
			c.SetParamValues(tag)
		}
	}
	if err := chain(c); err != nil {
		h.HTTPErrorHandler(err, c)
	}
	h.ReleaseContext(c)
}
