package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// maxBody bounds what is read of an answer: a batch of 10,000 snowflake
// ids is about 240 KB of JSON.
const maxBody = 1 << 20

// answer is a decoded 200 that can say whether it keeps the API's promises.
type answer interface{ check() error }

// get asks the endpoints in turn for path and decodes the answer into v.
// It starts at the next endpoint in the rotation and skips those backing
// off; an endpoint that gives no usable answer is left out for a while and
// the next one is asked, within ctx. An error answer that another server
// would give as well (a 4xx) is returned at once. It returns the time the
// successful request was sent.
func (c *Client) get(ctx context.Context, op, path string, v answer) (time.Time, error) {
	return c.do(ctx, op, http.MethodGet, path, nil, v)
}

// do is get with another method, sending body (nil: none); v nil reads
// no answer (a 204).
func (c *Client) do(ctx context.Context, op, method, path string, body []byte, v answer) (time.Time, error) {
	n := len(c.eps)
	first := int(c.turn.Add(1) % uint64(n))
	for i := range n {
		e := c.eps[(first+i)%n]
		now := c.now()
		if !e.usable(now) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return time.Time{}, fmt.Errorf("leaf client: %s: %w", op, err)
		}
		err := c.tryWith(ctx, e, method, path, body, v)
		if err == nil {
			e.answered()
			return now, nil
		}
		if ctx.Err() != nil && err.Status == 0 {
			// The caller gave up (or Close was called): not the
			// endpoint's fault.
			return time.Time{}, fmt.Errorf("leaf client: %s: %w", op, ctx.Err())
		}
		if !err.failover() {
			e.answered()
			return time.Time{}, fmt.Errorf("leaf client: %s: %w", op, err)
		}
		e.failed(err, c.now(), c.cfg.BackoffMin, c.cfg.BackoffMax)
	}
	now := c.now()
	ue := &unavailableError{op: op, errs: make([]error, n)}
	for i, e := range c.eps {
		ue.errs[i] = e.lastError(now)
	}
	return time.Time{}, ue
}

// try makes one GET to one endpoint.
func (c *Client) try(parent context.Context, e *endpoint, path string, v answer) *Error {
	return c.tryWith(parent, e, http.MethodGet, path, nil, v)
}

// tryWith makes one request to one endpoint.
func (c *Client) tryWith(parent context.Context, e *endpoint, method, path string, body []byte, v answer) *Error {
	ctx, cancel := context.WithTimeout(parent, c.cfg.RequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.base+path, rd)
	if err != nil {
		return &Error{Endpoint: e.base, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	r, routed := v.(versioned)
	if routed && r.heldVersion() != "" {
		req.Header.Set(headerRoutesVersion, r.heldVersion())
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
			// Said plainly, and not as the caller's own deadline,
			// which errors.Is(err, context.DeadlineExceeded) is about.
			err = fmt.Errorf("no answer within %v (RequestTimeout)", c.cfg.RequestTimeout)
		}
		return &Error{Endpoint: e.base, Err: err}
	}
	defer resp.Body.Close()
	if routed {
		r.sawVersion(resp.Header.Get(headerRoutesVersion))
	}
	answerBody, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return &Error{Endpoint: e.base, Err: fmt.Errorf("read answer: %w", err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errorAnswer(e.base, resp, answerBody)
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(answerBody, v); err != nil {
		return &Error{Endpoint: e.base, Status: resp.StatusCode, Err: fmt.Errorf("malformed answer: %w", err)}
	}
	if err := v.check(); err != nil {
		return &Error{Endpoint: e.base, Status: resp.StatusCode, Err: fmt.Errorf("malformed answer: %w", err)}
	}
	return nil
}

// errorAnswer reads the API's error body, {"error":{"code","message"}}.
// An answer without one (from a proxy, say) keeps its status alone.
func errorAnswer(base string, resp *http.Response, body []byte) *Error {
	e := &Error{Endpoint: base, Status: resp.StatusCode}
	var eb struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &eb) == nil {
		e.Code, e.Message = eb.Error.Code, eb.Error.Message
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}
