package client

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"unicode/utf8"
)

// MaxSequenceKey is the longest sequence key, in bytes; MaxSequenceBatch
// the most numbers one SequenceNextN takes. The server's limits.
const (
	MaxSequenceKey   = 256
	MaxSequenceBatch = 10000
)

// SequenceNext returns the next number of key in the sequence space: above
// every number the key was given before, by any server (see the server's
// docs/sequences.md). Numbers are never buffered here: each call is one
// request, answered by the owner of the key's section. The client calls
// the owner itself once it knows the space's routing table (see
// Config.NoDirectSequences), else an endpoint, which forwards the call to
// the owner once. A server that answers 503 (the section is moving to
// another owner) is left for the next endpoint.
func (c *Client) SequenceNext(ctx context.Context, space, key string) (int64, error) {
	first, err := c.SequenceNextN(ctx, space, key, 1)
	if err != nil {
		return 0, err
	}
	return first, nil
}

// SequenceNextN takes n consecutive numbers of key (1 ≤ n ≤
// MaxSequenceBatch) and returns the first: they are first … first+n-1.
func (c *Client) SequenceNextN(ctx context.Context, space, key string, n int) (int64, error) {
	if err := checkSequence(space, key); err != nil {
		return 0, err
	}
	if n < 1 || n > MaxSequenceBatch {
		return 0, fmt.Errorf("leaf client: %d numbers: %w", n, ErrInvalidCount)
	}
	a := &seqAnswer{asked: n}
	path := "/api/sequence/next/" + url.PathEscape(space) + "/" + url.PathEscape(key) + "?count=" + strconv.Itoa(n)
	if err := c.sequenceGet(ctx, "sequence next", space, key, path, a); err != nil {
		return 0, err
	}
	return a.first, nil
}

// SequenceCurrent returns the last number issued to key, without taking
// one. For a key not issued since its section last changed owner, it is
// the section's max_seq at that moment, which every earlier number of the
// key is at or below; 0 in a new space.
func (c *Client) SequenceCurrent(ctx context.Context, space, key string) (int64, error) {
	if err := checkSequence(space, key); err != nil {
		return 0, err
	}
	a := &currentAnswer{}
	path := "/api/sequence/current/" + url.PathEscape(space) + "/" + url.PathEscape(key)
	if err := c.sequenceGet(ctx, "sequence current", space, key, path, a); err != nil {
		return 0, err
	}
	return a.v, nil
}

// checkSequence refuses, without a request, what every server refuses.
func checkSequence(space, key string) error {
	if space == "" || !utf8.ValidString(space) {
		return fmt.Errorf("leaf client: sequence space %q: %w", space, ErrInvalidSpace)
	}
	if key == "" || len(key) > MaxSequenceKey || !utf8.ValidString(key) {
		return fmt.Errorf("leaf client: sequence key of %d bytes: %w", len(key), ErrInvalidKey)
	}
	return nil
}

// sequenceGet asks for path, a sequence route of key in space: of the
// owner of key's section when the routing table names one that is not
// backing off, else (or when the owner gives no usable answer) of the
// endpoints in turn. Only the server issues numbers; the client only
// chooses where to ask. The request carries the table's version; an
// answer that shows the table stale (an owner that failed, or an answer
// with another version) fetches it again, at most once per
// RoutesInterval; a space's first call fetches it.
func (c *Client) sequenceGet(ctx context.Context, op, space, key, path string, a routedAnswer) error {
	sr := c.routesOf(space)
	if sr == nil {
		_, err := c.get(ctx, op, path, a)
		return err
	}
	t := sr.table.Load()
	if t == nil {
		c.refreshRoutes(space, sr)
	} else {
		a.hold(t.version)
	}
	if owner := t.ownerOf(key); owner != nil && owner.usable(c.now()) {
		err := c.try(ctx, owner, path, a)
		switch {
		case err == nil:
			owner.answered()
			c.noteVersion(space, sr, t, a)
			return nil
		case ctx.Err() != nil && err.Status == 0:
			return fmt.Errorf("leaf client: %s: %w", op, ctx.Err())
		case !err.failover():
			owner.answered()
			c.noteVersion(space, sr, t, a)
			return fmt.Errorf("leaf client: %s: %w", op, err)
		}
		owner.failed(err, c.now(), c.cfg.BackoffMin, c.cfg.BackoffMax)
		c.refreshRoutes(space, sr)
	}
	_, err := c.get(ctx, op, path, a)
	c.noteVersion(space, sr, t, a)
	return err
}

// noteVersion fetches the table again when a's answer came with a version
// other than t's.
func (c *Client) noteVersion(space string, sr *spaceRoutes, t *routeTable, a routedAnswer) {
	if v := a.routesVersion(); t != nil && v != "" && v != t.version {
		c.refreshRoutes(space, sr)
	}
}

// seqAnswer is the body of GET /api/sequence/next/{space}/{key}?count=N:
// {"space":…,"key":…,"seqs":["…",…]}, consecutive numbers.
type seqAnswer struct {
	Seqs []string `json:"seqs"`
	routed

	asked int
	first int64 // parsed by check
}

func (a *seqAnswer) check() error {
	if len(a.Seqs) != a.asked {
		return fmt.Errorf("%d sequence numbers, asked for %d", len(a.Seqs), a.asked)
	}
	for i, s := range a.Seqs {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 || i > 0 && v != a.first+int64(i) {
			return fmt.Errorf("sequence numbers %q are not consecutive positive numbers", a.Seqs)
		}
		if i == 0 {
			a.first = v
		}
	}
	return nil
}

// currentAnswer is the body of GET /api/sequence/current/{space}/{key}:
// the number in decimal, as plain text (which is also a JSON number).
type currentAnswer struct {
	routed
	v int64
}

func (a *currentAnswer) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("%.40q is not a sequence number", b)
	}
	a.v = v
	return nil
}

func (a *currentAnswer) check() error { return nil }
