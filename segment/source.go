package segment

import "context"

// A Source's blocks: the first is of one id, each next one twice the
// last, up to maxBlock ids. At 1,024 ids a block, two goroutines on two
// cores hand out 2.3 times the ids of one (BENCHMARKS.md, "Ids on every
// core").
const maxBlock = 1024

// Source hands out the ids of one tag to one goroutine. It takes blocks
// of consecutive ids from the tag's current segment with NextRange, one
// atomic add per block, and hands them out one by one with no shared
// write. Goroutines with a Source each do not contend, so ids per second
// grow with cores, where goroutines sharing Allocator.Next's counter slow
// each other down.
//
// A Source is not safe for concurrent use: keep one per goroutine, for
// as long as the goroutine lives. Its ids strictly increase. Across
// Sources, and between a Source and Next, they are unique but not
// ordered: Next's ids increase in the order the instance hands them out,
// but a block is taken at once and handed out over time, so a Source can
// hand out an id below one another goroutine was handed out before. The
// ids of its block not handed out when a Source is dropped, at most
// 1,023, are never issued. Like Next, a Source goes on handing out
// buffered ids after Close; after HandBack, which claims every id no
// block holds, it hands out the rest of its block, then ErrClosed.
type Source struct {
	// next counts up to end, the end of the block; the ids are compared
	// for equality only, so that a block ending at the int64 maximum,
	// whose end wraps, ends too.
	next  int64
	end   int64
	a     *Allocator
	tag   string
	block int // the size of the next block
	// Next writes the Source on every id: it fills two cache lines of
	// its own, so that the Sources of two goroutines, allocated side by
	// side, never share one.
	_ [128 - 48]byte
}

// Source returns a Source of tag's ids, for one goroutine. It loads
// nothing; errors come from its Next.
func (a *Allocator) Source(tag string) *Source {
	return &Source{a: a, tag: tag, block: 1}
}

// Next returns the Source's next id. When its block is used up it takes
// the next with NextRange, which may wait for a load as Next does; its
// errors are NextRange's.
func (s *Source) Next(ctx context.Context) (int64, error) {
	if s.next != s.end {
		s.next++
		return s.next - 1, nil
	}
	return s.refill(ctx)
}

// refill takes the next block and returns its first id.
func (s *Source) refill(ctx context.Context) (int64, error) {
	start, n, err := s.a.NextRange(ctx, s.tag, s.block)
	if err != nil {
		return 0, err
	}
	s.block = min(2*s.block, maxBlock)
	s.next, s.end = start+1, start+int64(n)
	return start, nil
}
