package httpapi

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JSONRefusals wraps ln so that the answers Go's HTTP server writes by
// itself, before any handler runs (a malformed request line such as
// /api/segment/get/%zz, a missing Host, headers over the limit: 400, 431,
// 501, 505, 417), leave in the API's JSON error shape with the code
// invalid_request, like every other error. net/http writes each such
// answer whole, in one Write, with a fixed set of headers that no answer
// of a handler has (no Date, no Content-Length): that is what is
// recognised and rewritten; everything else passes through untouched.
func JSONRefusals(ln net.Listener) net.Listener { return refusalListener{ln} }

type refusalListener struct{ net.Listener }

func (l refusalListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return refusalConn{c}, nil
}

type refusalConn struct{ net.Conn }

func (c refusalConn) Write(p []byte) (int, error) {
	if out, ok := rewriteRefusal(p); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// refusalHeaders are the headers net/http gives its own refusals.
const refusalHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// rewriteRefusal returns p in the JSON shape when p is one of net/http's
// own plain-text refusals.
func rewriteRefusal(p []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	if len(p) < len(proto)+3 || string(p[:len(proto)]) != proto || (p[len(proto)] != '4' && p[len(proto)] != '5') {
		return nil, false
	}
	line, rest, ok := bytes.Cut(p[len(proto):], []byte(refusalHeaders))
	if !ok || bytes.Contains(line, []byte("\r\n")) {
		return nil, false
	}
	code, err := strconv.Atoi(string(line[:3]))
	if err != nil || code < 400 || code > 599 {
		return nil, false
	}
	// The body says most: the status line's reason or a detail of its own.
	msg := strings.TrimSpace(strings.TrimPrefix(string(rest), string(line[:3])))
	if msg == "" || !utf8.ValidString(msg) {
		msg = http.StatusText(code)
	}
	if st := http.StatusText(code); st != "" && strings.HasPrefix(msg, st) {
		msg = lower(st) + msg[len(st):]
	} else if r, size := utf8.DecodeRuneInString(msg); size > 0 {
		msg = string(unicode.ToLower(r)) + msg[size:]
	}
	body, err := json.Marshal(errorBody{Error: errorDetail{Code: codeInvalidRequest, Message: msg}})
	if err != nil {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteString(proto)
	b.WriteString(strconv.Itoa(code))
	b.WriteByte(' ')
	b.WriteString(http.StatusText(code))
	b.WriteString("\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(body)))
	b.WriteString("\r\n\r\n")
	b.Write(body)
	return b.Bytes(), true
}
