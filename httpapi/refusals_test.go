package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/httpapi"
)

// TestRefusalsAreJSON sends, over a real connection, requests that Go's
// HTTP server refuses before any handler runs, and reads the answers: the
// JSON error shape with the right status; ordinary answers on the same
// server are untouched.
func TestRefusalsAreJSON(t *testing.T) {
	v := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: v.e, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 4 << 10}
	go srv.Serve(httpapi.JSONRefusals(ln))
	t.Cleanup(func() { srv.Close() })

	send := func(t *testing.T, raw string) (*http.Response, []byte) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	for _, tc := range []struct {
		name, raw string
		status    int
		msg       string
	}{
		{"bad escape in the path", "GET /api/segment/get/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad request"},
		{"no Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"headers too large", "GET /healthz HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", 431, "request header fields too large"},
		{"unknown version", "GET /healthz HTTP/2.5\r\nHost: x\r\n\r\n", 505, "unsupported protocol version"},
		{"unknown transfer encoding", "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "nsupported transfer encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(t, tc.raw)
			var e struct {
				Error struct{ Code, Message string }
			}
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" ||
				json.Unmarshal(body, &e) != nil || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, tc.msg) {
				t.Fatalf("%d %q %s; want %d invalid_request saying %q", resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status, tc.msg)
			}
		})
	}
	resp, body := send(t, "GET /api/segment/get/orders HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 200 || string(body) != "1" {
		t.Fatalf("an ordinary request = %d %q", resp.StatusCode, body)
	}
	resp, body = send(t, "GET /api/segment/get/nope HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 404 || !strings.Contains(string(body), "unknown_tag") || resp.Header.Get("Date") == "" {
		t.Fatalf("a handler's error = %d %q, want it untouched", resp.StatusCode, body)
	}
}

func FuzzRewriteRefusal(f *testing.F) {
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nDate: x\r\n\r\n1"))
	f.Fuzz(func(t *testing.T, p []byte) {
		out, ok := httpapi.RewriteRefusal(p)
		if !ok {
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(out))), nil)
		if err != nil {
			t.Fatalf("rewrite of %q is not a response: %v", p, err)
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		body, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(body, &e) != nil || e.Error.Code != "invalid_request" || resp.StatusCode < 400 {
			t.Fatalf("rewrite of %q = %q", p, out)
		}
	})
}
