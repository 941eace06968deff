package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDirectRoutesAsEcho: the Handler answers every request exactly as
// echo's router and chains alone do — the two id routes it serves
// directly, and the requests on their paths it leaves to echo —, status,
// headers, body, and the request metrics' route labels.
func TestDirectRoutesAsEcho(t *testing.T) {
	long := strings.Repeat("t", 200)
	requests := []struct{ method, target string }{
		{"GET", "/api/segment/get/orders"},
		{"GET", "/api/segment/get/orders"},
		{"GET", "/api/segment/get/users?form=base62"},
		{"GET", "/api/segment/get/orders?form=nope"},
		{"GET", "/api/segment/get/%6Frders"},      // percent-encoded: the router's
		{"GET", "/api/segment/get/a%2Fb"},         // a "/" in the tag, encoded
		{"GET", "/api/segment/get/a/b"},           // two segments
		{"GET", "/api/segment/get/"},              // no tag
		{"GET", "/api/segment/get"},               // no slash
		{"GET", "/api/segment/get/orders/"},       // trailing slash
		{"GET", "/api/segment/get/unknown"},       // 404
		{"GET", "/api/segment/get/bad%20tag"},     // decoded by net/http, refused
		{"GET", "/api/segment/get/" + long},       // too long
		{"HEAD", "/api/segment/get/orders"},       // 405 on the id routes
		{"POST", "/api/segment/get/orders"},       // 405
		{"GET", "/api/snowflake/get"},             //
		{"GET", "/api/snowflake/get?form=base62"}, //
		{"GET", "/api/snowflake/get?form=nope"},   //
		{"GET", "/api/snowflake/get/"},            // the key route
		{"GET", "/api/snowflake/get/k"},           //
		{"HEAD", "/api/snowflake/get"},            //
		{"GET", "/API/snowflake/get"},             // 404
		{"GET", "/healthz"},
	}
	direct, viaEcho := newEnv(t), newEnv(t)
	for _, rq := range requests {
		a := httptest.NewRecorder()
		direct.e.ServeHTTP(a, httptest.NewRequest(rq.method, rq.target, nil))
		b := httptest.NewRecorder()
		viaEcho.e.Echo.ServeHTTP(b, httptest.NewRequest(rq.method, rq.target, nil))
		if a.Code != b.Code || a.Body.String() != b.Body.String() || !sameHeader(a.Header(), b.Header()) {
			t.Errorf("%s %s: %d %v %q; echo alone %d %v %q", rq.method, rq.target, a.Code, a.Header(), a.Body, b.Code, b.Header(), b.Body)
		}
	}
	got, want := requestCounts(t, direct), requestCounts(t, viaEcho)
	if got != want || !strings.Contains(got, `route="/api/segment/get/:tag"`) || !strings.Contains(got, `route="/api/snowflake/get"`) {
		t.Errorf("request metrics:\n%s\nwith echo alone:\n%s", got, want)
	}
}

// requestCounts is the leaf_http_requests_total series of v's /metrics.
func requestCounts(t *testing.T, v *env) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(v.do(t, "GET", "/metrics", nil).Body.String(), "\n") {
		if strings.HasPrefix(line, "leaf_http_requests_total{") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}
