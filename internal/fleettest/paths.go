package fleettest

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/leafid/leaf/httpapi"
)

// countForwards counts the requests that reach h forwarded, by kind.
func (l *Ledger) countForwards(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(httpapi.HeaderForwarded) != "" {
			what := "other"
			if strings.HasPrefix(RoutePath(r.URL), "/api/sequence/") {
				what = "sequence"
			}
			for _, prefix := range []string{"/api/segment/get/", "/api/segment/batch/"} {
				if tag, ok := PathParam(r.URL, prefix); ok {
					what = l.Kind(tag)
				}
			}
			l.mu.Lock()
			l.reached["forward:"+what]++
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// RoutePath is the path the HTTP API routes on: as it was sent when Go
// kept it so (URL.RawPath), else as Go decoded it.
func RoutePath(u *url.URL) string {
	if u.RawPath != "" {
		return u.RawPath
	}
	return u.Path
}

// Param is a parameter of RoutePath as the HTTP API reads it: decoded
// once when the path was kept as sent, as it is otherwise; false when it
// holds a "/" or a bad escape.
func Param(u *url.URL, raw string) (string, bool) {
	if strings.Contains(raw, "/") {
		return "", false
	}
	if u.RawPath == "" {
		return raw, true
	}
	v, err := url.PathUnescape(raw)
	return v, err == nil
}

// PathParam is the parameter that ends RoutePath after prefix.
func PathParam(u *url.URL, prefix string) (string, bool) {
	raw, ok := strings.CutPrefix(RoutePath(u), prefix)
	if !ok {
		return "", false
	}
	return Param(u, raw)
}
