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
// request, which any server answers (a server that does not own the key's
// section forwards it to the owner once). A server that answers 503 (the
// section is moving to another owner) is left for the next endpoint.
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
	if space == "" || !utf8.ValidString(space) {
		return 0, fmt.Errorf("leaf client: sequence space %q: %w", space, ErrInvalidSpace)
	}
	if key == "" || len(key) > MaxSequenceKey || !utf8.ValidString(key) {
		return 0, fmt.Errorf("leaf client: sequence key of %d bytes: %w", len(key), ErrInvalidKey)
	}
	if n < 1 || n > MaxSequenceBatch {
		return 0, fmt.Errorf("leaf client: %d numbers: %w", n, ErrInvalidCount)
	}
	a := &seqAnswer{asked: n}
	path := "/api/sequence/next/" + url.PathEscape(space) + "/" + url.PathEscape(key) + "?count=" + strconv.Itoa(n)
	if _, err := c.get(ctx, "sequence next", path, a); err != nil {
		return 0, err
	}
	return a.first, nil
}

// seqAnswer is the body of GET /api/sequence/next/{space}/{key}?count=N:
// {"space":…,"key":…,"seqs":["…",…]}, consecutive numbers.
type seqAnswer struct {
	Seqs []string `json:"seqs"`

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
