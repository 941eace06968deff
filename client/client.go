package client

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

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
