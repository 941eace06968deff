package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/readiness"
)

// anyTagEnv serves every tag, recording the tags the allocator is asked
// for.
func anyTagEnv(tb testing.TB) *env {
	tb.Helper()
	seg := newFakeSegments()
	seg.anyTag = true
	v := newEnv(tb, func(c *envConfig) { c.Segments = seg })
	v.seg = seg
	return v
}

// TestTagInPath: the tag is the path segment after the route's prefix,
// percent-decoded exactly once, whichever way the client escaped it.
// Go sets URL.RawPath only when the request's escaping differs from its
// own, and echo routes on RawPath when it is set, so these cases cover
// both ways a parameter reaches the handler.
func TestTagInPath(t *testing.T) {
	tests := []struct {
		name    string
		segment string // as sent in the request line
		tag     string
	}{
		{"plain", "orders", "orders"},
		{"escaped slash", "order%2Fv2", "order/v2"},
		{"lower-case escaped slash", "order%2fv2", "order/v2"},
		{"at sign", "user@profile", "user@profile"},
		{"escaped colon", "a%3Ab", "a:b"},
		{"escaped percent sign", "%25", "%"},
		{"escaped escape", "a%253Ab", "a%3Ab"},
		{"escaped escape of a space", "a%2520b", "a%20b"},
		{"escaped space", "a%20b", "a b"},
		{"plus is not a space", "a+b", "a+b"},
		{"raw UTF-8", "订单", "订单"},
		{"escaped UTF-8", "%E8%AE%A2%E5%8D%95", "订单"},
		{"lower-case escaped UTF-8", "%e8%ae%a2%e5%8d%95", "订单"},
		{"escaped letter", "%6Frders", "orders"},
		{"quote and backslash", "a%22b%5Cc", `a"b\c`},
		{"escaped dots", "%2E%2E", ".."},
		{"escaped slash only", "%2F", "/"},
		{"accents", "%C3%A9t%C3%A9", "été"},
	}
	for _, tt := range tests {
		for _, route := range []string{"/api/segment/get/", "/api/segment/batch/", "/api/segment/range/"} {
			t.Run(tt.name+" "+route, func(t *testing.T) {
				v := anyTagEnv(t)
				rec := v.do(t, http.MethodGet, route+tt.segment+"?count=2", nil)
				if rec.Code != http.StatusOK {
					t.Fatalf("status = %d; %s", rec.Code, rec.Body)
				}
				if got := v.seg.lastSeen(); got != tt.tag {
					t.Fatalf("allocator asked for %q, want %q", got, tt.tag)
				}
				if route == "/api/segment/get/" {
					return
				}
				// The JSON bodies carry the tag, escaped as JSON needs.
				var out struct {
					Tag string `json:"tag"`
				}
				decodeBody(t, rec, &out)
				if out.Tag != tt.tag {
					t.Fatalf("body tag %q, want %q; body %s", out.Tag, tt.tag, rec.Body)
				}
			})
		}
		t.Run(tt.name+" admin", func(t *testing.T) {
			v := newEnv(t)
			row, err := v.tags.Tag(context.Background(), "orders")
			if err != nil {
				t.Fatal(err)
			}
			row.Name = tt.tag
			v.tags.Put(row)
			rec := v.admin(t, http.MethodGet, "/api/admin/tags/"+tt.segment, "")
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d; %s", rec.Code, rec.Body)
			}
		})
	}
}

// A handler never sees a request whose Path was decoded from RawPath by
// someone else; when RawPath is empty, Path is the decoded form and is
// taken as it is.
func TestTagFromDecodedPath(t *testing.T) {
	v := anyTagEnv(t)
	rec := rawGet(v.e, "/api/segment/get/a%3Ab", "")
	if rec.Code != http.StatusOK || v.seg.lastSeen() != "a%3Ab" {
		t.Fatalf("status %d, tag %q; %s", rec.Code, v.seg.lastSeen(), rec.Body)
	}
}

func TestTagMessages(t *testing.T) {
	tests := []struct {
		name    string
		target  string
		status  int
		code    string
		message string
	}{
		{"unknown non-ASCII tag", "/api/segment/get/%C3%A9t%C3%A9", 404, "unknown_tag", `biz tag "été" does not exist`},
		{"unknown raw UTF-8 tag", "/api/segment/batch/订单?count=1", 404, "unknown_tag", `biz tag "订单" does not exist`},
		{"unknown tag with quote", "/api/segment/range/a%22b?count=1", 404, "unknown_tag", `biz tag "a\"b" does not exist`},
		{"not UTF-8", "/api/segment/get/%FF", 400, "invalid_tag", ""},
		{"129 characters", "/api/segment/get/" + strings.Repeat("%C3%A9", 129), 400, "invalid_tag", "invalid biz tag: 129 characters, more than 128"},
		{"128 characters is unknown, not invalid", "/api/segment/get/" + strings.Repeat("%C3%A9", 128), 404, "unknown_tag", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			e := wantError(t, v.do(t, http.MethodGet, tt.target, nil), tt.status, tt.code)
			if tt.message != "" && e.Error.Message != tt.message {
				t.Errorf("message = %q, want %q", e.Error.Message, tt.message)
			}
		})
	}
}

// TestPathEdges: what is not one non-empty, well-escaped path segment is
// a JSON 400, never a 404 or plain text.
func TestPathEdges(t *testing.T) {
	tests := []struct {
		name   string
		method string
		target string
		status int
		code   string
	}{
		{"empty tag", "GET", "/api/segment/get/", 400, "invalid_tag"},
		{"empty tag in batch", "GET", "/api/segment/batch/?count=1", 400, "invalid_tag"},
		{"empty tag in range", "GET", "/api/segment/range/?count=1", 400, "invalid_tag"},
		{"empty tag in admin get", "GET", "/api/admin/tags/", 400, "invalid_tag"},
		{"empty tag in admin patch", "PATCH", "/api/admin/tags/", 400, "invalid_tag"},
		{"slash in tag", "GET", "/api/segment/get/order/v2", 400, "invalid_tag"},
		{"trailing slash", "GET", "/api/segment/get/orders/", 400, "invalid_tag"},
		{"trailing slash in batch", "GET", "/api/segment/batch/orders/?count=1", 400, "invalid_tag"},
		{"slash in tag after an escape", "GET", "/api/segment/get/a%3A/b", 400, "invalid_tag"},
		{"empty id", "GET", "/api/snowflake/decode/", 400, "invalid_id"},
		{"trailing slash on id", "GET", "/api/snowflake/decode/1/", 400, "invalid_id"},
		{"escaped space in id", "GET", "/api/snowflake/decode/1%20", 400, "invalid_id"},
		{"no route below a route", "GET", "/api/snowflake/batch/", 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			e := wantError(t, v.admin(t, tt.method, tt.target, ""), tt.status, tt.code)
			if strings.Contains(tt.name, "slash") && tt.code == "invalid_tag" && !strings.Contains(e.Error.Message, "%2F") {
				t.Errorf("message %q does not say how to send a slash", e.Error.Message)
			}
			if n := v.seg.total(); n != 0 {
				t.Errorf("%d ids taken", n)
			}
		})
	}
}

// An escape that cannot be decoded never reaches a handler from Go's
// server (it answers 400 itself), but a handler given one answers JSON.
func TestMalformedEscapeIsJSON(t *testing.T) {
	v := newEnv(t)
	for _, p := range []string{"/api/segment/get/%zz", "/api/segment/batch/a%2", "/api/snowflake/decode/%zz"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = p, p, "count=1"
		rec := httptest.NewRecorder()
		v.e.ServeHTTP(rec, req)
		code := "invalid_tag"
		if strings.Contains(p, "decode") {
			code = "invalid_id"
		}
		wantError(t, rec, 400, code)
	}
}

func TestIDDecodedOnce(t *testing.T) {
	v := newEnv(t)
	rec := v.do(t, http.MethodGet, "/api/snowflake/decode/%31", nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"id":"1"`) {
		t.Fatalf("status = %d; %s", rec.Code, rec.Body)
	}
	wantError(t, rawGet(v.e, "/api/snowflake/decode/%31", ""), 400, "invalid_id")
}

func TestQueryEdges(t *testing.T) {
	tests := []struct {
		name   string
		query  string
		status int
		code   string
		ids    int
	}{
		{name: "count given twice", query: "count=2&count=3", status: 400, code: "invalid_count"},
		{name: "count given twice, same value", query: "count=2&count=2", status: 400, code: "invalid_count"},
		{name: "leading zero", query: "count=05", status: 200, ids: 5},
		{name: "many leading zeros", query: "count=" + strings.Repeat("0", 200) + "3", status: 200, ids: 3},
		{name: "plus sign", query: "count=+5", status: 400, code: "invalid_count"},
		{name: "escaped plus sign", query: "count=%2B5", status: 400, code: "invalid_count"},
		{name: "huge", query: "count=" + strings.Repeat("9", 400), status: 400, code: "invalid_count"},
		{name: "malformed escape", query: "count=%zz", status: 400, code: "invalid_request"},
		{name: "malformed escape elsewhere", query: "count=2&x=%zz", status: 400, code: "invalid_request"},
		{name: "semicolon", query: "count=2;x=1", status: 400, code: "invalid_request"},
		{name: "other parameters are ignored", query: "count=2&_=1700000000", status: 200, ids: 2},
	}
	for _, base := range []string{"/api/segment/batch/orders", "/api/snowflake/batch"} {
		for _, tt := range tests {
			t.Run(base+" "+tt.name, func(t *testing.T) {
				v := newEnv(t)
				req := httptest.NewRequest(http.MethodGet, base, nil)
				req.URL.RawQuery = tt.query
				rec := httptest.NewRecorder()
				v.e.ServeHTTP(rec, req)
				if tt.code != "" {
					e := wantError(t, rec, tt.status, tt.code)
					if strings.Contains(e.Error.Message, strings.Repeat("9", 40)) {
						t.Errorf("message echoes the input: %q", e.Error.Message)
					}
					return
				}
				var out struct{ IDs []string }
				decodeBody(t, rec, &out)
				if rec.Code != tt.status || len(out.IDs) != tt.ids {
					t.Fatalf("status %d, %d ids; %s", rec.Code, len(out.IDs), rec.Body)
				}
			})
		}
	}
}

func TestHead(t *testing.T) {
	t.Run("operations answer as GET, without a body", func(t *testing.T) {
		v := newEnv(t)
		for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
			get := v.do(t, http.MethodGet, p, nil)
			head := v.do(t, http.MethodHead, p, nil)
			if head.Code != get.Code || head.Body.Len() != 0 {
				t.Errorf("HEAD %s: %d with %d bytes; GET %d", p, head.Code, head.Body.Len(), get.Code)
			}
			if head.Header().Get("Content-Type") != get.Header().Get("Content-Type") {
				t.Errorf("HEAD %s: Content-Type %q, GET %q", p, head.Header().Get("Content-Type"), get.Header().Get("Content-Type"))
			}
		}
	})
	t.Run("a failing readyz is a 503 to HEAD too", func(t *testing.T) {
		v := newEnv(t, func(c *envConfig) {
			c.Checks = []readiness.Check{{Name: "x", Func: func(context.Context) error { return errors.New("down") }}}
		})
		rec := v.do(t, http.MethodHead, "/readyz", nil)
		if rec.Code != 503 || rec.Body.Len() != 0 || rec.Header().Get("Retry-After") == "" {
			t.Fatalf("HEAD /readyz: %d %q %v", rec.Code, rec.Body, rec.Header())
		}
	})
	t.Run("id routes refuse HEAD and issue nothing", func(t *testing.T) {
		v := newEnv(t)
		for _, p := range []string{
			"/api/segment/get/orders", "/api/segment/batch/orders?count=5", "/api/segment/range/orders?count=5",
			"/api/snowflake/get", "/api/snowflake/get/k", "/api/snowflake/batch?count=5", "/api/snowflake/decode/1",
		} {
			rec := v.do(t, http.MethodHead, p, nil)
			if rec.Code != http.StatusMethodNotAllowed || rec.Body.Len() != 0 || !strings.Contains(rec.Header().Get("Allow"), "GET") {
				t.Errorf("HEAD %s: %d %q Allow %q", p, rec.Code, rec.Body, rec.Header().Get("Allow"))
			}
		}
		if v.seg.total() != 0 || v.snow.issued() != 0 {
			t.Fatalf("HEAD issued ids: %d segment, %d snowflake", v.seg.total(), v.snow.issued())
		}
	})
	t.Run("OPTIONS is a 405 on every route, the admin ones without a token too", func(t *testing.T) {
		v := newEnv(t, withUUIDs)
		for p, allow := range map[string]string{
			"/api/segment/get/orders":    "GET",
			"/api/snowflake/get":         "GET",
			"/healthz":                   "GET, HEAD",
			"/api/admin/tags":            "GET, POST",
			"/api/admin/tags/orders":     "GET, PATCH",
			"/api/sequence/key/inbox/k1": "GET",
		} {
			rec := v.do(t, http.MethodOptions, p, nil)
			if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != allow || !strings.Contains(rec.Body.String(), `"method_not_allowed"`) {
				t.Errorf("OPTIONS %s: %d %s Allow %q, want 405 Allow %q", p, rec.Code, rec.Body, rec.Header().Get("Allow"), allow)
			}
			// Any other method a route does not answer says the same.
			if rec := v.do(t, http.MethodPut, p, nil); rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != allow {
				t.Errorf("PUT %s: %d Allow %q, want 405 Allow %q", p, rec.Code, rec.Header().Get("Allow"), allow)
			}
		}
		if rec := v.do(t, http.MethodOptions, "/nope", nil); rec.Code != http.StatusNotFound {
			t.Errorf("OPTIONS /nope: %d %s", rec.Code, rec.Body)
		}
	})
}

// failingBody fails the test if read.
type failingBody struct{ tb testing.TB }

func (b failingBody) Read([]byte) (int, error) {
	b.tb.Error("the body was read")
	return 0, io.EOF
}

// errBody returns what it holds, then err.
type errBody struct {
	r   io.Reader
	err error
}

func (b *errBody) Read(p []byte) (int, error) {
	if n, _ := b.r.Read(p); n > 0 {
		return n, nil
	}
	return 0, b.err
}

func TestBodyEdges(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8080}
	peer := &net.TCPAddr{IP: net.IPv4(10, 9, 8, 7), Port: 51234}
	timeout := &net.OpError{Op: "read", Net: "tcp", Source: addr, Addr: peer, Err: os.ErrDeadlineExceeded}
	reset := &net.OpError{Op: "read", Net: "tcp", Source: addr, Addr: peer, Err: errors.New("connection reset by peer")}
	tests := []struct {
		name   string
		body   io.Reader
		length int64
		status int
	}{
		{"body stops arriving", &errBody{r: strings.NewReader(`{"tag":"sl`), err: timeout}, 100, 408},
		{"connection reset", &errBody{r: strings.NewReader(`{"tag":"sl`), err: reset}, 100, 400},
		{"announced over the limit", failingBody{t}, 64<<10 + 1, 413},
		{"announced far over the limit", failingBody{t}, 1 << 40, 413},
	}
	for _, tt := range tests {
		for _, method := range []string{http.MethodPost, http.MethodPatch} {
			t.Run(tt.name+" "+method, func(t *testing.T) {
				v := newEnv(t)
				target := "/api/admin/tags"
				if method == http.MethodPatch {
					target += "/orders"
				}
				rec := v.do(t, method, target, tt.body, withToken(testToken), func(r *http.Request) { r.ContentLength = tt.length })
				e := wantError(t, rec, tt.status, "invalid_request")
				if strings.Contains(e.Error.Message, "10.") || strings.Contains(e.Error.Message, "tcp") {
					t.Errorf("message leaks the connection: %q", e.Error.Message)
				}
			})
		}
	}
}

// TestSlowBodyOverTheWire runs a real server with a short read timeout: a
// client that stops sending its body gets a JSON 408.
func TestSlowBodyOverTheWire(t *testing.T) {
	v := newEnv(t)
	srv := httptest.NewUnstartedServer(v.e)
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	req := "POST /api/admin/tags HTTP/1.1\r\nHost: leaf\r\nAuthorization: Bearer " + testToken +
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"tag\":\"sl"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiErr
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestTimeout || e.Error.Code != "invalid_request" || strings.Contains(e.Error.Message, "127.0.0.1") {
		t.Fatalf("%d %+v", resp.StatusCode, e)
	}
}
