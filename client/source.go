package client

import "context"

// A Source's blocks: the first is of one id, each next one twice the
// last, up to maxBlock ids, and never more than a blockShare-th of the
// range it is taken from, so that one Source does not take a small range
// all for itself while others wait for the next. At 1,024 ids a block,
// two goroutines on two cores hand out 1.9 times the ids of one
// (BENCHMARKS.md, "Ids on every core").
const (
	maxBlock   = 1024
	blockShare = 16
)

// Source hands out the ids of one tag to one goroutine. It reserves
// blocks of consecutive ids from the range Client.Next takes from, with
// one atomic add per block, and hands them out one by one with no shared
// write. Goroutines with a Source each do not contend, so ids per second
// grow with cores, where goroutines sharing Client.Next's counter slow
// each other down.
//
// A Source is not safe for concurrent use: keep one per goroutine, for
// as long as the goroutine lives. Its ids increase, as one goroutine's
// ids from Client.Next do: within a range, and from one range to the
// next unless a range of another server lies below (see Ranges in the
// package documentation). Across Sources, and between a Source and
// Client.Next, ids are unique but not ordered: a block is reserved at
// once and handed out over time, so a Source can hand out an id below
// one another goroutine was handed out before. The ids of its block not
// handed out when a Source is dropped, at most 1,023, are lost, like
// those of the ranges when the process stops.
type Source struct {
	// next counts up to end, the end of the block, wrapping as end
	// does where a range ends at the int64 maximum: the ids are
	// compared for equality only.
	next  int64
	end   int64
	c     *Client
	tag   string
	block int64 // the size of the next block
	// Next writes the Source on every id: it fills two cache lines of
	// its own, so that the Sources of two goroutines, allocated side by
	// side, never share one.
	_ [128 - 48]byte
}

// Source returns a Source of tag's ids, for one goroutine. It makes no
// request; errors come from its Next.
func (c *Client) Source(tag string) *Source {
	return &Source{c: c, tag: tag, block: 1}
}

// Next returns the Source's next id. When its block is used up it
// reserves the next one, and may then wait for a range as Client.Next
// does; its errors are Client.Next's, and after Close it returns
// ErrClosed, even with ids left in its block.
func (s *Source) Next(ctx context.Context) (int64, error) {
	if s.next != s.end && !s.c.done.Load() {
		s.next++
		return s.next - 1, nil
	}
	return s.refill(ctx)
}

// refill reserves the next block and returns its first id.
func (s *Source) refill(ctx context.Context) (int64, error) {
	c := s.c
	if c.done.Load() {
		return 0, ErrClosed
	}
	b := c.tags.Load().get(s.tag)
	if b == nil {
		var err error
		if b, err = c.buffer(s.tag); err != nil {
			return 0, err
		}
	}
	for {
		sp := b.cur.Load()
		want := min(s.block, max(1, sp.size/blockShare))
		end := sp.used.Add(want)
		if off := end - want; off < sp.size {
			end = min(end, sp.size)
			if off < sp.trigger && sp.trigger <= end {
				c.prefetch(b, sp)
			}
			s.block = min(2*s.block, maxBlock)
			s.next, s.end = sp.start+off+1, sp.start+end
			return sp.start + off, nil
		}
		if err := c.advance(ctx, b, sp); err != nil {
			return 0, err
		}
	}
}
