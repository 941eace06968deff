package metrics

import (
	"fmt"
	"strings"
	"time"

	"github.com/leafid/leaf/segment"
)

// Which tags have series of their own. Every tag's series cost about 0.45
// KB of each scrape: 100,000 tags made /metrics 45 MB and 2.1 s
// (BENCHMARKS.md, "Observability at 100,000 tags"). So a tag has series
// only when it is one of
//
//   - the tags named in Sources.SegmentTags (at most MaxNamedTags);
//   - the MaxAttentionTags tags that need attention most: those whose last
//     load failed, then those found gone back in time (regressions), then
//     those whose waits or failed loads grew in the last attentionHold,
//     the busier first within each;
//   - the TopTags tags that issued the most ids.
//
// The totals over all tags are exported beside them, without a tag label.
// The choice is made at each scrape in one pass over the tags, keeping
// the first few of each kind in a small heap, so a tag that does not make
// it costs a comparison or two.
const (
	// MaxNamedTags bounds Sources.SegmentTags (--metrics-tags).
	MaxNamedTags = 256
	// MaxAttentionTags bounds the tags exported because they need
	// attention; leaf_segment_tags_failing counts them all.
	MaxAttentionTags = 100
	// TopTags is how many of the busiest tags are exported.
	TopTags = 20
	// attentionHold is how long a tag whose waits or failed loads grew
	// stays exported after the last growth: longer than the alerts'
	// windows (15 minutes at most), so that their increase() ends at 0
	// rather than with the series.
	attentionHold = 30 * time.Minute
)

// ParseTags reads a comma-separated list of tag names, as --metrics-tags
// takes it: spaces around each name are dropped, each must be a valid tag
// name (segment.ValidateTag), a name given twice counts once, and there
// may be at most MaxNamedTags. An empty list is nil.
func ParseTags(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for i, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if err := segment.ValidateTag(name); err != nil {
			return nil, fmt.Errorf("name %d: %w", i+1, err)
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	if len(out) > MaxNamedTags {
		return nil, fmt.Errorf("%d tags, more than %d", len(out), MaxNamedTags)
	}
	return out, nil
}

// namedTags is the set of tags named. Asking it about a tag that is not
// named mostly costs no hashing of the name: a bit for each of the named
// tags' length, first and last byte is looked at first. At 100,000 tags
// the map alone took a sixth of a scrape.
type namedTags struct {
	tags  map[string]bool
	sieve [1 << 10]uint64 // 65,536 bits
}

func newNamedTags(tags []string) *namedTags {
	n := &namedTags{tags: make(map[string]bool, len(tags))}
	for _, tag := range tags {
		n.tags[tag] = true
		b := sieveBit(tag)
		n.sieve[b/64] |= 1 << (b % 64)
	}
	return n
}

func sieveBit(tag string) uint32 {
	if tag == "" {
		return 0
	}
	return (uint32(len(tag))*0x9E37 ^ uint32(tag[0])<<8 ^ uint32(tag[len(tag)-1])) & (1<<16 - 1)
}

func (n *namedTags) has(tag string) bool {
	b := sieveBit(tag)
	return n.sieve[b/64]&(1<<(b%64)) != 0 && n.tags[tag]
}

// Ranks of the tags that need attention, the most urgent first.
const (
	rankFailing   = iota // the last load failed
	rankRegressed        // the row was found gone back in time
	rankWaiting          // waits or failed loads grew lately
	rankNone
)

// watch is what the collector remembers of a tag that had waits or failed
// loads, to tell when they last grew.
type watch struct {
	waits, failures uint64
	grew            time.Time
	seen            uint64 // the collection that last saw the tag
}

// ranked is a tag's figures and its rank.
type ranked struct {
	segment.TagStats
	rank int
}

// attentionBefore orders the tags that need attention: by rank, then the
// busier first, then by name.
func attentionBefore(x, y ranked) bool {
	if x.rank != y.rank {
		return x.rank < y.rank
	}
	return busierThan(x, y)
}

// busierThan orders by ids issued, most first, then by name.
func busierThan(x, y ranked) bool {
	if x.Issued != y.Issued {
		return x.Issued > y.Issued
	}
	return x.Tag < y.Tag
}

// best keeps the n first of the items offered, by before. It is a heap
// whose root is the last item kept, so an item that does not make it costs
// one comparison.
type best struct {
	n      int
	before func(x, y ranked) bool
	items  []ranked
}

func (b *best) offer(it ranked) {
	if b.n <= 0 {
		return
	}
	if len(b.items) < b.n {
		b.items = append(b.items, it)
		for i := len(b.items) - 1; i > 0; {
			p := (i - 1) / 2
			if !b.before(b.items[p], b.items[i]) {
				break
			}
			b.items[p], b.items[i] = b.items[i], b.items[p]
			i = p
		}
		return
	}
	if !b.before(it, b.items[0]) {
		return
	}
	b.items[0] = it
	for i := 0; ; {
		last, l, r := i, 2*i+1, 2*i+2
		if l < len(b.items) && b.before(b.items[last], b.items[l]) {
			last = l
		}
		if r < len(b.items) && b.before(b.items[last], b.items[r]) {
			last = r
		}
		if last == i {
			return
		}
		b.items[i], b.items[last] = b.items[last], b.items[i]
		i = last
	}
}

// selection is one collection's choice of tags.
type selection struct {
	named     []ranked
	attention best
	top       best
}

// chosen lists the tags of s once each: named, then attention, then top.
func (s *selection) chosen() []ranked {
	out := make([]ranked, 0, len(s.named)+len(s.attention.items)+len(s.top.items))
	in := make(map[string]bool, cap(out))
	for _, group := range [][]ranked{s.named, s.attention.items, s.top.items} {
		for _, it := range group {
			if !in[it.Tag] {
				in[it.Tag] = true
				out = append(out, it)
			}
		}
	}
	return out
}
