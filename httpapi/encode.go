package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leafid/leaf/base62"
)

// timeLayout is RFC 3339 in UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// idForm is how ids are written: in decimal, Leaf's form, or as
// fixed-width base62 text that sorts as the numbers do (package base62).
type idForm uint8

const (
	decimalForm idForm = iota
	base62Form
)

// appendIDs writes ids as a JSON array of strings.
func appendIDs(b []byte, ids []int64, form idForm) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = appendID(b, id, form)
		b = append(b, '"')
	}
	return append(b, ']')
}

func appendID(b []byte, id int64, form idForm) []byte {
	if form == base62Form {
		return base62.Append(b, id)
	}
	return strconv.AppendInt(b, id, 10)
}

// appendJSONString writes s as a JSON string. A tag may hold any
// character; the common ones that need no escaping skip encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// textPlain is the Content-Type of a single id, set as a ready slice:
// Header.Set would allocate one on every request. Nothing changes a
// header's values in place, so the slice is shared.
var textPlain = []string{echo.MIMETextPlainCharsetUTF8}

// idBuf holds the digits of one id while they are written; Write takes
// them through an interface, so a local array would be allocated anyway.
var idBuf = sync.Pool{New: func() any { return new([20]byte) }}

// writeID answers 200 with the id as plain text, in decimal (Leaf's
// answer) or base62.
func writeID(c echo.Context, id int64, form idForm) error {
	res := c.Response()
	res.Header()[echo.HeaderContentType] = textPlain
	res.WriteHeader(http.StatusOK)
	buf := idBuf.Get().(*[20]byte)
	_, err := res.Write(appendID(buf[:0], id, form))
	idBuf.Put(buf)
	return err
}

// formatTime renders t in UTC, or "" for the zero time.
func formatTime(t time.Time, layout string) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(layout)
}
