package fleettest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/service"
)

// Kinds of tag, as the database says at the time of an answer.
const (
	KindUnknown  = "unknown"  // no row
	KindPlain    = "plain"    // numbers from every instance's allocator
	KindOrdered  = "ordered"  // numbers from one owner
	KindOpen     = "open"     // formatted, numbered by every instance's allocator
	KindCapped   = "capped"   // formatted with {seq:N!}, served by one owner
	KindText     = "text"     // formatted and ordered, served by one owner
	KindOpaque63 = "opaque63" // opaque ids of 63 bits
	KindOpaque53 = "opaque53" // and of 53
)

// Ledger keeps what the targets were answered and what the owners issued,
// and checks every answer against the rules:
//   - a plain tag's ids: never one twice, a batch increasing;
//   - an ordered tag's ids: strictly increasing in the order answered,
//     whichever instance was asked;
//   - a formatted tag's texts: never one twice (compared as texts; the
//     fixture's own formatted tags by their period and number, which their
//     formats tell apart); the fixture's tags served by one owner: numbers
//     strictly increasing within a period in the order answered, none past
//     a cap, and the first id of Cap after a refusal (409 sequence_full)
//     right after the last one before it;
//   - an opaque tag's ids: never one twice, within the tag's bits, and
//     revealed as the numbers the fleet's key finds in them;
//   - a sequence key's numbers: strictly increasing, consecutive in a
//     batch, and above every current the key was answered;
//   - snowflake ids never twice;
//
// and at the owners (the Issuers' Owner and the ordered tags' NextTag):
// the numbers of a row strictly increasing across the instances, none past
// the limit, a refusal taking nothing (the next number of the row, asked
// for next, follows the last one issued) and, once the row is full,
// writing nothing. The owners' faults are kept for Fault, since they are
// met in the servers' goroutines.
type Ledger struct {
	db      *DB
	addrs   map[string]bool          // the instances'
	ciphers map[string]*bizid.Cipher // of the fleet's key, by opaque kind

	mu        sync.Mutex // protects the fields below
	fault     error
	plain     map[string]*idSet
	snow      idSet
	ordered   map[string]int64
	texts     map[string]map[string]struct{}
	numbered  map[[2]string]*idSet // the fixture's formatted tags: by tag and period
	last      map[string]textAt    // the fixture's tags served by one owner: the last id answered
	refusedAt map[string]textAt    // Cap: the last id answered before a refusal
	opaque    map[string]*idSet    // the numbers opaque ids hide, by tag
	seqs      map[[2]string]int64  // by space and key: the highest number issued or current
	rows      map[string]*rowState // what the owners issued, by row
	tagRows   map[string]string    // the row each owned tag was last asked of
	templates map[string]*bizid.Template
	reached   map[string]int
}

// rowState is what the owners issued of a row.
type rowState struct {
	last    int64 // the last number issued; 0 before the first
	refused bool  // the last call for the row's tag was refused on this row
}

func newLedger() *Ledger {
	c63, err1 := bizid.NewCipher([]byte(OpaqueKey), bizid.Bits63)
	c53, err2 := bizid.NewCipher([]byte(OpaqueKey), bizid.Bits53)
	if err := errors.Join(err1, err2); err != nil {
		panic(err) // the key is a constant of the right length
	}
	return &Ledger{
		ciphers: map[string]*bizid.Cipher{KindOpaque63: c63, KindOpaque53: c53},
		addrs:   map[string]bool{}, plain: map[string]*idSet{}, ordered: map[string]int64{},
		texts: map[string]map[string]struct{}{}, numbered: map[[2]string]*idSet{},
		last: map[string]textAt{}, refusedAt: map[string]textAt{}, opaque: map[string]*idSet{},
		seqs: map[[2]string]int64{}, rows: map[string]*rowState{}, tagRows: map[string]string{},
		templates: map[string]*bizid.Template{}, reached: map[string]int{},
	}
}

// Fault is the first rule an owner broke, or nil.
func (l *Ledger) Fault() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fault
}

// Reached counts what the answers and the owners reached: each kind of
// tag answered ids, "reveal", "sequence", "current", "routes",
// "snowflake", "full" (a 409 sequence_full), "continued" (an id of Cap
// after a refusal), "owner" and "owner:refused" (an owner's numbers and
// refusals), "owner:continued" (a refusal followed by the row's next
// number), and "forward:" and a kind (or "sequence") for each request an
// instance got forwarded.
func (l *Ledger) Reached() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.reached))
	for k, v := range l.reached {
		out[k] = v
	}
	return out
}

// Kind is what tag is now, as the database says.
func (l *Ledger) Kind(tag string) string {
	ctx := context.Background()
	rows, err := l.db.Settings.LookupTags(ctx, []string{tag})
	set, k := rows[tag].Settings, rows[tag].Kind
	switch {
	case err != nil || k == bizid.NoRow:
		return KindUnknown
	case k == bizid.Special && set.OpaqueBits == bizid.Bits63:
		return KindOpaque63
	case k == bizid.Special && set.OpaqueBits == bizid.Bits53:
		return KindOpaque53
	case k == bizid.Special:
		if _, capped := l.template(set.Format).SeqWidth(); capped {
			return KindCapped
		}
		if set.Ordered {
			return KindText
		}
		return KindOpen
	}
	if set.Ordered {
		return KindOrdered
	}
	return KindPlain
}

// IDs checks the numeric ids of a segment tag, answered to one get or
// batch.
func (l *Ledger) IDs(tag string, ids []int64) error {
	kind := l.Kind(tag)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached[kind]++
	switch kind {
	case KindOpaque63, KindOpaque53:
		// An id is kept as the number it hides: ranges of numbers cost
		// one entry, and the cipher is a bijection, so two ids are the
		// same when their numbers are.
		c := l.ciphers[kind]
		for _, id := range ids {
			n, err := c.Decode(id)
			if err != nil || id < 1 || id > c.Max() {
				return fmt.Errorf("opaque tag %q: id %d outside 1..%d (%v)", tag, id, c.Max(), err)
			}
			if !l.opaqueSet(tag).add(n, n) {
				return fmt.Errorf("opaque tag %q: id %d (number %d) issued twice", tag, id, n)
			}
		}
	case KindOrdered:
		for _, id := range ids {
			if id <= l.ordered[tag] {
				return fmt.Errorf("ordered tag %q: id %d after %d", tag, id, l.ordered[tag])
			}
			l.ordered[tag] = id
		}
	default: // plain, or a tag given a format that an instance still serves from its buffer
		for i, id := range ids {
			if id < 1 || i > 0 && id <= ids[i-1] {
				return fmt.Errorf("tag %q: id %d in %v", tag, id, ids)
			}
		}
		if !l.plainSet(tag).addAll(ids) {
			return fmt.Errorf("tag %q: an id of %v issued before", tag, ids)
		}
	}
	return nil
}

func (l *Ledger) opaqueSet(tag string) *idSet {
	s := l.opaque[tag]
	if s == nil {
		s = &idSet{}
		l.opaque[tag] = s
	}
	return s
}

func (l *Ledger) plainSet(tag string) *idSet {
	s := l.plain[tag]
	if s == nil {
		s = &idSet{}
		l.plain[tag] = s
	}
	return s
}

// Range checks a range of a segment tag.
func (l *Ledger) Range(tag string, start int64, count int) error {
	kind := l.Kind(tag)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch kind {
	case KindOrdered, KindOpaque63, KindOpaque53:
		return fmt.Errorf("%s tag %q: a range answered", kind, tag)
	}
	if start < 1 || count < 1 || start > 1<<63-1-int64(count)+1 || !l.plainSet(tag).add(start, start+int64(count)-1) {
		return fmt.Errorf("tag %q: range of %d from %d bad or issued before", tag, count, start)
	}
	l.reached["range"]++
	return nil
}

// Answered notes an error answered for an id of tag: a refusal of Cap
// (sequence_full) is remembered, for its next id must continue; after an
// unavailable, the next id may follow one that was issued and whose answer
// was lost.
func (l *Ledger) Answered(tag, code string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch code {
	case service.SequenceFull:
		l.reached["full"]++
		if last, ok := l.last[tag]; ok && tag == Cap {
			l.refusedAt[tag] = last
		}
	case service.Unavailable:
		delete(l.refusedAt, tag)
	}
}

// OpaqueID is the id the fleet's key makes of number n in an opaque tag
// of bits (63 or 53): the ids a seed can reveal.
func OpaqueID(bits int, n int64) int64 {
	c, err := bizid.NewCipher([]byte(OpaqueKey), bits)
	if err != nil {
		panic(err)
	}
	id, err := c.Encode(n)
	if err != nil {
		panic(err)
	}
	return id
}

// Issued reports whether the opaque id of tag was answered to a request.
func (l *Ledger) Issued(tag string, id int64) bool {
	c := l.ciphers[l.Kind(tag)]
	if c == nil {
		return false
	}
	n, err := c.Decode(id)
	if err != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opaque[tag] != nil && l.opaque[tag].has(n)
}

// Reveal checks the number an opaque id of tag was revealed to be: the
// number the fleet's key finds in it.
func (l *Ledger) Reveal(tag string, id, number int64) error {
	kind := l.Kind(tag)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["reveal"]++
	c := l.ciphers[kind]
	if c == nil {
		return fmt.Errorf("%s tag %q: id %d revealed as %d", kind, tag, id, number)
	}
	if want, err := c.Decode(id); err != nil || number != want {
		return fmt.Errorf("opaque tag %q: id %d revealed as %d, not %d (%v)", tag, id, number, want, err)
	}
	return nil
}

// Snowflake checks snowflake ids.
func (l *Ledger) Snowflake(ids []int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["snowflake"]++
	for i, id := range ids {
		if id < 1 || i > 0 && id <= ids[i-1] {
			return fmt.Errorf("snowflake id %d in %v", id, ids)
		}
	}
	if !l.snow.addAll(ids) {
		return fmt.Errorf("a snowflake id of %v issued before", ids)
	}
	return nil
}

func (l *Ledger) failLocked(err error) {
	if l.fault == nil {
		l.fault = err
	}
}
