package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAnswersBeforeTheBody: on a keep-alive connection, an answer given
// without reading the request's body (a refusal before it, or a route that
// takes none) comes at once, with Connection: close, although the client
// has not sent the body it announced; and an answer after the whole body
// was read keeps the connection open.
func TestAnswersBeforeTheBody(t *testing.T) {
	v := newEnv(t)
	srv := httptest.NewServer(v.e)
	t.Cleanup(srv.Close)
	tests := []struct {
		name, head string
		body       string // sent after the head; the rest of Content-Length never is
		status     int
		close      bool
	}{
		{"over the limit", "POST /api/admin/tags HTTP/1.1\r\nAuthorization: Bearer " + testToken + "\r\nContent-Length: 100000\r\n", "", 413, true},
		{"over the limit, no token", "POST /api/admin/tags HTTP/1.1\r\nContent-Length: 100000\r\n", "", 413, true},
		{"no token", "POST /api/admin/tags HTTP/1.1\r\nContent-Length: 100\r\n", "", 401, true},
		{"wrong method", "PUT /api/admin/tags HTTP/1.1\r\nAuthorization: Bearer " + testToken + "\r\nContent-Length: 100\r\n", "", 405, true},
		{"no route", "POST /nowhere HTTP/1.1\r\nContent-Length: 100\r\n", "", 404, true},
		{"a route that reads no body", "GET /api/segment/get/orders HTTP/1.1\r\nContent-Length: 100\r\n", "", 200, true},
		{"a body half sent, refused", "PATCH /api/admin/tags/orders HTTP/1.1\r\nContent-Length: 100\r\n", `{"step":`, 401, true},
		{"the whole body read", "POST /api/admin/tags HTTP/1.1\r\nAuthorization: Bearer " + testToken + "\r\nContent-Length: 7\r\n", `{"tag":`, 400, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(conn, tt.head+"Host: leaf\r\nContent-Type: application/json\r\n\r\n"+tt.body); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer before the body: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Close; got != tt.close {
				t.Errorf("Connection: close = %v, want %v (header %q)", got, tt.close, resp.Header.Get("Connection"))
			}
			if tt.status >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
		})
	}
}
