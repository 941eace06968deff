// Package check holds a generated client to the answers it decoded: a
// transport that keeps each raw answer, and a comparison of the value a
// client decoded with that answer, exact to the digit. The programs of
// the generated Go clients use it; the test of package generators runs
// them against a real leaf.
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Raw is one answer as the server sent it.
type Raw struct {
	Method string
	Status int
	Header http.Header
	Body   []byte
}

// Recorder is an http.Client that keeps the last answer it received.
type Recorder struct {
	Client *http.Client
	Last   Raw
	// Header is sent with every request when set.
	Header http.Header
}

// Do sends req and keeps its answer, whose body the caller reads from a
// copy.
func (r *Recorder) Do(req *http.Request) (*http.Response, error) {
	for k, v := range r.Header {
		req.Header[k] = v
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Last = Raw{Method: req.Method, Status: resp.StatusCode, Header: resp.Header.Clone(), Body: body}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// Run counts the calls of a program and says how each went, one line
// each: "ok OPERATION STATUS" or "FAIL OPERATION: why".
type Run struct {
	failed bool
}

// Ok reports a call whose decoded answer matched the raw one.
func (r *Run) Ok(op string, status int) {
	fmt.Printf("ok %s %d\n", op, status)
}

// Fail reports a call that did not.
func (r *Run) Fail(op string, format string, args ...any) {
	r.failed = true
	fmt.Printf("FAIL %s: %s\n", op, fmt.Sprintf(format, args...))
}

// Answered checks what every call needs before its body: the client
// returned no error, the status is the one wanted, and a HEAD answer has
// no body. It reports a failure, or a HEAD answer's success, and returns
// false when nothing is left to check.
func (r *Run) Answered(op string, want int, last Raw, err error) bool {
	switch {
	case err != nil:
		r.Fail(op, "the client failed: %v (the answer: %d %.200s)", err, last.Status, last.Body)
		return false
	case last.Status != want:
		r.Fail(op, "status %d, want %d: %.200s", last.Status, want, last.Body)
		return false
	case last.Method == http.MethodHead && len(last.Body) != 0:
		r.Fail(op, "a body to HEAD")
		return false
	case last.Method == http.MethodHead:
		r.Ok(op, last.Status)
		return false
	}
	return true
}

// Exit ends the program, with status 1 when a call failed.
func (r *Run) Exit() {
	if r.failed {
		os.Exit(1)
	}
	os.Exit(0)
}

// Same compares the JSON a client's decoded value encodes to with the raw
// JSON body: the same members, the same strings (times compared as the
// instants they name, since a client may write 2026-11-29T10:00:00.120Z
// as …00.12Z), the same numbers exactly. It returns what differs.
func Same(decoded []byte, raw []byte) error {
	a, err := parse(decoded)
	if err != nil {
		return fmt.Errorf("the decoded value does not encode as JSON: %v", err)
	}
	return SameValue(a, raw)
}

// SameValue is Same for a decoded value already in the form
// encoding/json decodes JSON to with UseNumber: maps, slices, strings,
// json.Number, bools and nil.
func SameValue(a any, raw []byte) error {
	b, err := parse(raw)
	if err != nil {
		return fmt.Errorf("the raw answer is no JSON: %v", err)
	}
	return same("$", a, b)
}

func parse(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func same(at string, a, b any) error {
	switch bv := b.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: decoded %s, sent an object", at, show(a))
		}
		for _, k := range keys(av, bv) {
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inA:
				return fmt.Errorf("%s.%s: sent %s, lost in decoding", at, k, show(y))
			case !inB:
				return fmt.Errorf("%s.%s: decoded %s, not sent", at, k, show(x))
			}
			if err := same(at+"."+k, x, y); err != nil {
				return err
			}
		}
		return nil
	case []any:
		av, ok := a.([]any)
		if !ok || len(av) != len(bv) {
			return fmt.Errorf("%s: decoded %s, sent %s", at, show(a), show(b))
		}
		for i := range bv {
			if err := same(fmt.Sprintf("%s[%d]", at, i), av[i], bv[i]); err != nil {
				return err
			}
		}
		return nil
	case json.Number:
		an, ok := a.(json.Number)
		x, okx := new(big.Rat).SetString(string(an))
		y, oky := new(big.Rat).SetString(string(bv))
		if !ok || !okx || !oky || x.Cmp(y) != 0 {
			return fmt.Errorf("%s: decoded %s, sent the number %s", at, show(a), bv)
		}
		return nil
	case string:
		as, ok := a.(string)
		if ok && (as == bv || sameInstant(as, bv)) {
			return nil
		}
		return fmt.Errorf("%s: decoded %s, sent %q", at, show(a), bv)
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("%s: decoded %s, sent %s", at, show(a), show(b))
	}
	return nil
}

func sameInstant(a, b string) bool {
	x, err1 := time.Parse(time.RFC3339Nano, a)
	y, err2 := time.Parse(time.RFC3339Nano, b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

func keys(a, b map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ErrorOf reads an error answer's code and message, to compare with what
// a client decoded.
func ErrorOf(raw []byte) (code, message string) {
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(raw, &e)
	return e.Error.Code, e.Error.Message
}

// Text is the plain-text body of an answer, trimmed of nothing.
func Text(raw Raw) string { return string(raw.Body) }

// IsJSON says whether an answer's Content-Type is JSON.
func IsJSON(raw Raw) bool {
	return strings.HasPrefix(raw.Header.Get("Content-Type"), "application/json")
}
