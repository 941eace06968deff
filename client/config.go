package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
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

	// Token is the bearer token of the servers' id routes (leaf serve
	// --id-token), sent with every request; empty sends none.
	Token string

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
