package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Config, and the server's limits.
const (
	DefaultRequestTimeout  = 2 * time.Second
	DefaultMinRange        = 100
	DefaultMaxRange        = MaxRange
	DefaultRefillInterval  = time.Second
	DefaultSnowflakeBatch  = 100
	DefaultSnowflakeMaxAge = time.Second
	DefaultBackoffMin      = 100 * time.Millisecond
	DefaultBackoffMax      = 5 * time.Second
	DefaultRoutesInterval  = 2 * time.Second

	// MaxRange is the largest range the server hands out in one answer
	// (the server's httpapi.MaxRangeCount).
	MaxRange = 1_000_000
	// MaxSnowflakeBatch is the largest snowflake batch the server answers
	// (the server's httpapi.MaxCount).
	MaxSnowflakeBatch = 10_000
	// MaxN is the largest n of NextN.
	MaxN = 1_000_000
)

// maxBody bounds what is read of an answer: a batch of 10,000 snowflake
// ids is about 240 KB of JSON.
const maxBody = 1 << 20

// Config is what New needs. Only Endpoints is required; every other zero
// field means its documented default.
type Config struct {
	// Endpoints are the base URLs of leaf servers, e.g.
	// "http://leaf-1:8080" (a path prefix, as behind a proxy, is kept).
	// Requests go to them in turn; see the package documentation for
	// failover. At least one.
	Endpoints []string

	// HTTPClient makes the requests. Nil means a client of the
	// package's own, whose idle connections Close closes; a client given
	// here is left as it is, and its Timeout should not be shorter than
	// RequestTimeout.
	HTTPClient *http.Client

	// RequestTimeout bounds one request to one endpoint; a request that
	// takes longer counts as that endpoint's failure and the next
	// endpoint is tried. Zero means 2s (DefaultRequestTimeout).
	RequestTimeout time.Duration

	// MinRange and MaxRange bound the number of ids asked for in one
	// range request. Zero means 100 (DefaultMinRange, or MaxRange if
	// that is smaller) and 1,000,000 (DefaultMaxRange, also the most the
	// server gives). The size in between follows the tag's traffic; see
	// RefillInterval.
	MinRange int
	MaxRange int

	// RefillInterval is how often, per tag, the client aims to ask the
	// server for a range: each request asks for what the tag used in
	// that long at its recent rate, within MinRange and MaxRange. Zero
	// means 1s (DefaultRefillInterval).
	RefillInterval time.Duration

	// SnowflakeBatch is how many snowflake ids one request fetches
	// (at most MaxSnowflakeBatch, 10,000). Zero means 100
	// (DefaultSnowflakeBatch).
	SnowflakeBatch int
	// SnowflakeMaxAge bounds the age of a snowflake id handed out,
	// counted from when the request that fetched it was sent: a
	// snowflake id carries the time it was made, and a caller expects
	// it to be about now. Older ids are dropped. Zero means 1s
	// (DefaultSnowflakeMaxAge).
	SnowflakeMaxAge time.Duration

	// BackoffMin and BackoffMax bound how long a failing endpoint is
	// left out: BackoffMin after its first failure, doubling with each
	// failure in a row up to BackoffMax (with jitter, and at least the
	// server's Retry-After). Zero means 100ms (DefaultBackoffMin) and
	// 5s (DefaultBackoffMax).
	BackoffMin time.Duration
	BackoffMax time.Duration

	// NoDirectSequences sends every sequence call to Endpoints. By
	// default the client keeps each space's routing table and calls the
	// owner of the key's section itself, at the address the servers
	// advertise for it (their --advertise-addr), over plain HTTP, falling
	// back to Endpoints while it has no owner to call. Set it when the
	// client cannot reach those addresses (the servers behind a proxy,
	// NAT or TLS that only Endpoints get through).
	NoDirectSequences bool
	// RoutesInterval is the least time between two fetches of one
	// space's routing table: a table is fetched on a space's first call,
	// and again when an answer shows it stale, at most once per
	// RoutesInterval. Zero means 2s (DefaultRoutesInterval).
	RoutesInterval time.Duration
}

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if len(c.Endpoints) == 0 {
		return c, errors.New("leaf client: no endpoints")
	}
	c.Endpoints = slices.Clone(c.Endpoints)
	for i, e := range c.Endpoints {
		base, err := parseEndpoint(e)
		if err != nil {
			return c, err
		}
		c.Endpoints[i] = base
	}
	if c.MinRange == 0 && c.MaxRange > 0 {
		c.MinRange = min(DefaultMinRange, c.MaxRange)
	}
	def := func(d *time.Duration, v time.Duration, name string) error {
		switch {
		case *d < 0:
			return fmt.Errorf("leaf client: negative %s %v", name, *d)
		case *d == 0:
			*d = v
		}
		return nil
	}
	defInt := func(n *int, v, limit int, name string) error {
		switch {
		case *n < 0 || *n > limit:
			return fmt.Errorf("leaf client: %s %d: want 0 (the default %d) to %d", name, *n, v, limit)
		case *n == 0:
			*n = v
		}
		return nil
	}
	if err := errors.Join(
		def(&c.RequestTimeout, DefaultRequestTimeout, "RequestTimeout"),
		def(&c.RefillInterval, DefaultRefillInterval, "RefillInterval"),
		def(&c.SnowflakeMaxAge, DefaultSnowflakeMaxAge, "SnowflakeMaxAge"),
		def(&c.BackoffMin, DefaultBackoffMin, "BackoffMin"),
		def(&c.BackoffMax, DefaultBackoffMax, "BackoffMax"),
		def(&c.RoutesInterval, DefaultRoutesInterval, "RoutesInterval"),
		defInt(&c.MinRange, DefaultMinRange, MaxRange, "MinRange"),
		defInt(&c.MaxRange, DefaultMaxRange, MaxRange, "MaxRange"),
		defInt(&c.SnowflakeBatch, DefaultSnowflakeBatch, MaxSnowflakeBatch, "SnowflakeBatch"),
	); err != nil {
		return c, err
	}
	if c.MinRange > c.MaxRange {
		return c, fmt.Errorf("leaf client: MinRange %d is above MaxRange %d", c.MinRange, c.MaxRange)
	}
	if c.BackoffMin > c.BackoffMax {
		return c, fmt.Errorf("leaf client: BackoffMin %v is above BackoffMax %v", c.BackoffMin, c.BackoffMax)
	}
	return c, nil
}

// parseEndpoint checks a base URL and returns it without a trailing slash.
func parseEndpoint(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("leaf client: endpoint %q: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("leaf client: endpoint %q: want an http:// or https:// URL", s)
	case u.Host == "":
		return "", fmt.Errorf("leaf client: endpoint %q: no host", s)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", fmt.Errorf("leaf client: endpoint %q: want a base URL without user, query or fragment", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// Client hands out segment-mode ids from ranges it leases from leaf
// servers, and snowflake ids it fetches in batches. It is safe for
// concurrent use. Close stops its goroutines.
type Client struct {
	cfg     Config
	http    *http.Client
	ownHTTP bool // http is ours: Close closes its idle connections
	now     func() time.Time
	eps     []*endpoint
	turn    atomic.Uint64 // round robin over eps

	// tags is the hot path's map from tag to buffer. Only tags that
	// have had a range are in it; it is replaced whole when one is
	// added, and by an empty table at Close.
	tags atomic.Pointer[table]
	// done is set by Close. Every Source reads it on every id, so it
	// has a cache line to itself, away from the fields requests write.
	_    [64]byte
	done atomic.Bool
	_    [63]byte

	flakes flakePool

	// routes maps a sequence space to its *spaceRoutes (routes.go).
	routes sync.Map

	ctx    context.Context // cancelled by Close; every request runs under it
	cancel context.CancelFunc

	mu       sync.Mutex // protects the fields below, and writes to tags
	closed   bool
	pending  map[string]*tagBuffer // tags waiting for their first range
	children sync.WaitGroup        // every goroutine started; Add only under mu while !closed
}

// New returns a client of the servers in cfg.Endpoints. It makes no
// request: the first range of a tag is fetched by its first Next.
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, http: cfg.HTTPClient, now: time.Now, pending: make(map[string]*tagBuffer)}
	if c.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 16
		c.http, c.ownHTTP = &http.Client{Transport: t}, true
	}
	for _, base := range cfg.Endpoints {
		c.eps = append(c.eps, &endpoint{base: base})
	}
	c.tags.Store(newTable(nil))
	c.flakes.init()
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Close stops the client: requests in flight are cancelled, waiting
// callers get ErrClosed, and Close returns once every goroutine of the
// client has ended. Later calls return ErrClosed.
//
// The unused ids of the buffered ranges are not handed back to the server.
// The server can take back only the tail of its row, the ids above
// everything handed out; a client's range is a slice from the middle of a
// server's segment, with other clients' ranges above it. They are lost,
// which costs nothing but numbers: see the package documentation.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.done.Store(true)
	c.tags.Store(newTable(nil))
	c.pending = nil
	c.mu.Unlock()
	c.cancel()
	c.children.Wait()
	if c.ownHTTP {
		c.http.CloseIdleConnections()
	}
	return nil
}

// spawn runs f in a goroutine owned by the client, unless it is closed.
func (c *Client) spawn(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.children.Add(1)
	go func() {
		defer c.children.Done()
		f()
	}()
	return true
}

// endpoint is one server and its health.
type endpoint struct {
	base string

	mu       sync.Mutex // protects the fields below
	failures int        // in a row
	until    time.Time  // left out until then
	last     error      // the last failure
}

// usable reports whether the endpoint is not backing off at now.
func (e *endpoint) usable(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !now.Before(e.until)
}

// answered records an answer: the endpoint works.
func (e *endpoint) answered() {
	e.mu.Lock()
	e.failures, e.until = 0, time.Time{}
	e.mu.Unlock()
}

// failed records a failure and leaves the endpoint out for a back-off
// that doubles with each failure in a row. The jitter (half to all of the
// back-off) keeps clients that saw the same outage from coming back in
// step.
func (e *endpoint) failed(err *Error, now time.Time, lo, hi time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failures++
	d := hi
	if shift := e.failures - 1; shift < 32 && lo<<shift < hi {
		d = lo << shift
	}
	d = d/2 + rand.N(d/2+1)
	if err.RetryAfter > d {
		d = min(err.RetryAfter, hi)
	}
	e.until, e.last = now.Add(d), err
}

// lastError is the endpoint's last failure, for an unavailableError.
func (e *endpoint) lastError(now time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil {
		return nil
	}
	if wait := e.until.Sub(now); wait > 0 {
		return fmt.Errorf("%w (left out for %v)", e.last, wait.Round(time.Millisecond))
	}
	return e.last
}

// retryIn is how long until some endpoint's back-off ends: when a failed
// background load should try again. At least BackoffMin.
func (c *Client) retryIn() time.Duration {
	now := c.now()
	d := c.cfg.BackoffMax
	for _, e := range c.eps {
		e.mu.Lock()
		d = min(d, e.until.Sub(now))
		e.mu.Unlock()
	}
	return max(d, c.cfg.BackoffMin)
}

// await waits, with no lock held, for a fetch round to end, the caller's
// context to end or the client to close. A closed client is ErrClosed,
// whatever else happened; the caller's context ending is its error.
func (c *Client) await(ctx context.Context, round <-chan struct{}) error {
	var err error
	select {
	case <-round:
	case <-ctx.Done():
		err = ctx.Err()
	case <-c.ctx.Done():
	}
	if c.ctx.Err() != nil {
		return ErrClosed
	}
	return err
}

// answer is a decoded 200 that can say whether it keeps the API's promises.
type answer interface{ check() error }

// get asks the endpoints in turn for path and decodes the answer into v.
// It starts at the next endpoint in the rotation and skips those backing
// off; an endpoint that gives no usable answer is left out for a while and
// the next one is asked, within ctx. An error answer that another server
// would give as well (a 4xx) is returned at once. It returns the time the
// successful request was sent.
func (c *Client) get(ctx context.Context, op, path string, v answer) (time.Time, error) {
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
		err := c.try(ctx, e, path, v)
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

// try makes one request to one endpoint.
func (c *Client) try(parent context.Context, e *endpoint, path string, v answer) *Error {
	ctx, cancel := context.WithTimeout(parent, c.cfg.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+path, nil)
	if err != nil {
		return &Error{Endpoint: e.base, Err: err}
	}
	req.Header.Set("Accept", "application/json")
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return &Error{Endpoint: e.base, Err: fmt.Errorf("read answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		return errorAnswer(e.base, resp, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
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
