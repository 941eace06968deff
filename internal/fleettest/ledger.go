package fleettest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/sequence"
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

// maxTexts bounds the texts kept of each formatted tag the fuzzer made,
// whose format the ledger does not read: a batch of 10,000 texts a
// request would fill the memory of a long run. Past it, a text is still
// checked against those kept.
const maxTexts = 1 << 20

// textAt is a number of a formatted tag's period.
type textAt struct {
	period string
	n      int64
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
	set, k, err := l.db.Settings.LookupTag(ctx, tag)
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
	if _, ordered, _ := l.db.owned.leases.TagOrdered(ctx, tag); ordered {
		return KindOrdered
	}
	return KindPlain
}

// Formatted reports whether tag's ids are texts.
func (l *Ledger) Formatted(tag string) bool {
	switch l.Kind(tag) {
	case KindOpen, KindCapped, KindText:
		return true
	}
	return false
}

func (l *Ledger) template(format string) *bizid.Template {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.templates[format]
	if !ok {
		var err error
		if t, err = bizid.ParseTemplate(format); err != nil {
			t, _ = bizid.ParseTemplate("{seq}") // a stored format always parses
		}
		l.templates[format] = t
	}
	return t
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

// Texts checks the texts of a formatted tag, answered to one get or batch.
func (l *Ledger) Texts(tag string, texts []string) error {
	kind := l.Kind(tag)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached[kind]++
	if _, ok := formats[tag]; !ok {
		seen := l.texts[tag]
		if seen == nil {
			seen = map[string]struct{}{}
			l.texts[tag] = seen
		}
		for _, s := range texts {
			if _, ok := seen[s]; ok || s == "" {
				return fmt.Errorf("formatted tag %q: text %q empty or issued twice", tag, s)
			}
			if len(seen) < maxTexts {
				seen[s] = struct{}{}
			}
		}
		return nil
	}
	owned := tag != Open
	for i, s := range texts {
		at, ok := parseText(tag, s)
		if !ok {
			return fmt.Errorf("formatted tag %q: text %q is not of its format %q", tag, s, formats[tag].Format)
		}
		set := l.numbered[[2]string{tag, at.period}]
		if set == nil {
			set = &idSet{}
			l.numbered[[2]string{tag, at.period}] = set
		}
		if !set.add(at.n, at.n) {
			return fmt.Errorf("formatted tag %q: text %q issued twice", tag, s)
		}
		if c := Caps[tag]; c > 0 && at.n > c {
			return fmt.Errorf("capped tag %q: text %q past its cap %d", tag, s, c)
		}
		if !owned {
			continue
		}
		if last, ok := l.last[tag]; ok && last.period == at.period && at.n <= last.n {
			return fmt.Errorf("tag %q served by one owner: %q after number %d of its period", tag, s, last.n)
		}
		if r, ok := l.refusedAt[tag]; ok && i == 0 {
			delete(l.refusedAt, tag)
			if r.period == at.period && at.n != r.n+1 {
				return fmt.Errorf("capped tag %q: %q after a refusal, but %d was the last before it: the refusal took numbers", tag, s, r.n)
			}
			l.reached["continued"]++
		}
		l.last[tag] = at
	}
	return nil
}

// parseText reads a text of a fixture's formatted tag: all end in
// -{seq:N} or -{seq:N!}.
func parseText(tag, s string) (textAt, bool) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return textAt{}, false
	}
	period, digits := s[:i], s[i+1:]
	var prefix string
	var width, dateLen int
	switch tag {
	case Open:
		prefix, width, dateLen = "O-", 6, 8
	case Cap:
		prefix, width = "C", 2
	case CapDay:
		prefix, width, dateLen = "D", 2, 8
	case Text:
		prefix, width = "T", 6
	}
	date, ok := strings.CutPrefix(period, prefix)
	if !ok || len(date) != dateLen || strings.Trim(date, "0123456789") != "" || strings.Trim(digits, "0123456789") != "" {
		return textAt{}, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 || len(digits) < width || len(digits) > width && digits[0] == '0' {
		return textAt{}, false
	}
	return textAt{period: period, n: n}, true
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

// Next checks the numbers a sequence key was answered.
func (l *Ledger) Next(space, key string, seqs []int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["sequence"]++
	k := [2]string{space, key}
	for i, v := range seqs {
		if v <= l.seqs[k] || i > 0 && v != seqs[i-1]+1 {
			return fmt.Errorf("space %q, key %q: %d after %d (batch %v)", space, key, v, l.seqs[k], seqs)
		}
		l.seqs[k] = v
	}
	return nil
}

// Current checks the current number a sequence key was answered: no
// number issued to it before passes it, and every next one will.
func (l *Ledger) Current(space, key string, seq int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["current"]++
	k := [2]string{space, key}
	if seq < l.seqs[k] {
		return fmt.Errorf("space %q, key %q: current %d, below %d issued", space, key, seq, l.seqs[k])
	}
	l.seqs[k] = seq
	return nil
}

// Routes checks a routing table: owners among the instances, one per
// section or none.
func (l *Ledger) Routes(space string, sections int, members []string, owners []int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["routes"]++
	if len(owners) != sections || sections < 1 || sections > sequence.MaxSections {
		return fmt.Errorf("routes of %q: %d sections, %d owners", space, sections, len(owners))
	}
	for _, m := range members {
		if !l.addrs[m] {
			return fmt.Errorf("routes of %q: member %q is no instance", space, m)
		}
	}
	for _, o := range owners {
		if o < sequence.NoOwner || o >= len(members) {
			return fmt.Errorf("routes of %q: owner %d of members %v", space, o, members)
		}
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

// issued records n numbers an owner issued of row of tag.
func (l *Ledger) issued(tag, row string, limit int64, n int, ids []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["owner"]++
	r := l.rows[row]
	if r == nil {
		r = &rowState{}
		l.rows[row] = r
	}
	switch {
	case len(ids) != n:
		l.failLocked(fmt.Errorf("owner of %q: %d numbers of row %q, %d asked for", tag, len(ids), row, n))
	case r.refused && l.tagRows[tag] == row && r.last > 0 && ids[0] != r.last+1:
		l.failLocked(fmt.Errorf("owner of %q: row %q refused after %d, then gave %d: the refusal took numbers", tag, row, r.last, ids[0]))
	case r.refused && l.tagRows[tag] == row:
		l.reached["owner:continued"]++
	}
	for _, v := range ids {
		if v <= r.last || limit > 0 && v > limit {
			l.failLocked(fmt.Errorf("owner of %q: row %q gave %d after %d (limit %d)", tag, row, v, r.last, limit))
		}
		r.last = v
	}
	r.refused, l.tagRows[tag] = false, row
}

// refused records an owner's refusal of n numbers of row, of which left
// were left, and whether the store was written meanwhile.
func (l *Ledger) refused(tag, row string, limit int64, n int, left int64, wrote bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["owner:refused"]++
	r := l.rows[row]
	if r == nil {
		r = &rowState{}
		l.rows[row] = r
	}
	switch {
	case left < 0 || left >= int64(n):
		l.failLocked(fmt.Errorf("owner of %q: %d of row %q refused with %d left", tag, n, row, left))
	case limit > 0 && r.last+left > limit:
		l.failLocked(fmt.Errorf("owner of %q: row %q has %d left after %d, past the limit %d", tag, row, left, r.last, limit))
	case left == 0 && wrote:
		l.failLocked(fmt.Errorf("owner of %q: the full row %q was written by a refusal", tag, row))
	}
	r.refused, l.tagRows[tag] = true, row
}

func (l *Ledger) failLocked(err error) {
	if l.fault == nil {
		l.fault = err
	}
}

// countForwards counts the requests that reach h forwarded, by kind.
func (l *Ledger) countForwards(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(service.HeaderForwarded) != "" {
			what := "other"
			if strings.HasPrefix(RoutePath(r.URL), "/api/sequence/") {
				what = "sequence"
			}
			for _, prefix := range []string{"/api/segment/get/", "/api/segment/batch/"} {
				if tag, ok := PathParam(r.URL, prefix); ok {
					what = l.Kind(tag)
				}
			}
			l.mu.Lock()
			l.reached["forward:"+what]++
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// RoutePath is the path the HTTP API routes on: as it was sent when Go
// kept it so (URL.RawPath), else as Go decoded it.
func RoutePath(u *url.URL) string {
	if u.RawPath != "" {
		return u.RawPath
	}
	return u.Path
}

// Param is a parameter of RoutePath as the HTTP API reads it: decoded
// once when the path was kept as sent, as it is otherwise; false when it
// holds a "/" or a bad escape.
func Param(u *url.URL, raw string) (string, bool) {
	if strings.Contains(raw, "/") {
		return "", false
	}
	if u.RawPath == "" {
		return raw, true
	}
	v, err := url.PathUnescape(raw)
	return v, err == nil
}

// PathParam is the parameter that ends RoutePath after prefix.
func PathParam(u *url.URL, prefix string) (string, bool) {
	raw, ok := strings.CutPrefix(RoutePath(u), prefix)
	if !ok {
		return "", false
	}
	return Param(u, raw)
}

// owner is leaf serve's bizid.Owner (cmd/leaf's owner), which tells the
// ledger what it issued and refused.
type owner struct {
	q  *sequence.Sequencer
	l  *Ledger
	db *DB
}

func (o owner) Own(ctx context.Context, tag string) error { return o.q.Own(ctx, tag) }

func (o owner) NextRow(ctx context.Context, tag, row string, limit int64, n int) ([]int64, error) {
	writes := o.db.owned.Writes()
	ids, err := o.q.NextRow(ctx, tag, row, limit, n)
	var full *sequence.FullError
	if errors.As(err, &full) {
		o.l.refused(tag, row, limit, n, full.Left, o.db.owned.Writes() != writes)
		return nil, &bizid.LeftError{Left: full.Left}
	}
	if err == nil {
		o.l.issued(tag, row, limit, n, ids)
	}
	return ids, err
}

// orderedTags is the Sequencer as it serves ordered tags, telling the
// ledger what it issued.
type orderedTags struct {
	*sequence.Sequencer
	l *Ledger
}

func (o orderedTags) NextTag(ctx context.Context, tag string, n int) ([]int64, error) {
	ids, err := o.Sequencer.NextTag(ctx, tag, n)
	if err == nil {
		o.l.issued(tag, tag, 0, n, ids)
	}
	return ids, err
}
