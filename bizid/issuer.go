package bizid

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Kind says what a tag's name is in the database.
type Kind int

// The kinds of tag.
const (
	// NoRow: leaf_alloc has no row of this name.
	NoRow Kind = iota
	// Plain: a row without settings: plain numbers.
	Plain
	// Special: a row with settings: formatted texts or opaque numbers.
	Special
)

// Store is what an Issuer needs from the database.
type Store interface {
	// LookupTag says whether tag has a row and settings, and returns
	// them when it has. Both are read in one statement, so that a tag
	// created with settings is never seen without them.
	LookupTag(ctx context.Context, tag string) (Settings, Kind, error)
	// TagSettings returns the settings of every formatted or opaque tag.
	TagSettings(ctx context.Context) ([]Settings, error)
	// EnsurePeriod creates the row tag@key, as a copy of the tag's own
	// row's step with max_id 1, unless it exists, in one statement that
	// writes nothing when the row is there and nothing when key is before
	// the tag's PrunedBefore. It returns ErrPeriodClosed when key is
	// before PrunedBefore.
	EnsurePeriod(ctx context.Context, tag, key string) error
	// PrunePeriods raises the tag's PrunedBefore to before (never lowers
	// it), then deletes its period rows whose key is below it, and says
	// how many it deleted.
	PrunePeriods(ctx context.Context, tag, before string) (int, error)
}

// IDs hands out the numbers of leaf_alloc rows (segment.Allocator does).
type IDs interface {
	Next(ctx context.Context, tag string) (int64, error)
	NextN(ctx context.Context, tag string, n int) ([]int64, error)
}

// Owner hands out the numbers of the formatted tags served by one owner at
// a time: the ordered ones, and those of a capped format (Tag.Owned),
// whose numbers are then dense and in the order issued across the fleet
// (sequence.Sequencer does, through the server's wiring).
type Owner interface {
	// Own makes tag served by one owner from now on, if it is not yet.
	Own(ctx context.Context, tag string) error
	// NextRow returns n increasing numbers of row (the tag's own row, or
	// the row of one of its periods), each above every number of the
	// row issued before. With limit above 0 no number passes it: when
	// fewer than n are left, a *LeftError, and nothing is taken. When another instance owns the tag, an error the
	// caller may forward by (Issuer passes it on as it is).
	NextRow(ctx context.Context, tag, row string, limit int64, n int) ([]int64, error)
}

// Options configure an Issuer. Zero fields are documented defaults.
type Options struct {
	Store Store
	IDs   IDs
	// IsUnknown reports whether an error of IDs says the row does not
	// exist (segment.ErrUnknownTag): a period's row that was pruned.
	IsUnknown func(error) bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Keys are the opaque keys this instance knows, the first being the
	// one new opaque tags are made with. Never logged.
	Keys [][]byte
	// Grace is how long after its end a period's row is kept; below
	// MinGrace it is DefaultGrace.
	Grace time.Duration
	// OnSpecial, when set, is called with each formatted or opaque tag
	// whose settings the Issuer takes in (created, changed, read), so that
	// the allocator hands out its numbers only to the Issuer
	// (segment.Allocator.MarkSpecial).
	OnSpecial func(tag string)
	// Owner serves the tags that are Owned; nil refuses them with
	// ErrNoOwner.
	Owner Owner
}

// Grace limits.
const (
	DefaultGrace = 72 * time.Hour
	// MinGrace keeps a period's row well past the clock differences of
	// a fleet.
	MinGrace = time.Hour
)

// ID is one id of a formatted or opaque tag: Text for a formatted tag, N
// for an opaque one.
type ID struct {
	Text string
	N    int64
}

// Tag is a formatted or opaque tag, compiled.
type Tag struct {
	Settings
	tmpl   *Template
	loc    *time.Location
	cipher *Cipher
	keyErr error // why an opaque tag has no cipher here

	pruned atomic.Pointer[string] // PrunedBefore as last read
	cur    atomic.Pointer[Period] // the period last used

	mu      sync.Mutex          // protects ensured
	ensured map[string]struct{} // period keys whose row this process made sure of
}

// Issuer serves the ids of formatted and opaque tags, and tells them from
// plain ones. It is safe for concurrent use.
type Issuer struct {
	opts    Options
	secrets map[string][]byte // key id -> secret
	current string            // key id of new opaque tags
	// tags maps a name to its *Tag, or to plain for a plain tag. Names
	// without a row are not kept, so it holds at most the table's tags.
	tags sync.Map

	// Look-ups of names not in tags: at most one runs at a time, and the
	// names asked for meanwhile wait for the next, so a flood of unknown
	// names costs the store one read at a time (as the allocator's own
	// look-ups do).
	mu      sync.Mutex // protects next and running
	next    *lookupBatch
	running bool
	ctx     context.Context // ends the look-ups on Close
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// lookupBatch is the names one look-up run reads; done is closed when it
// has.
type lookupBatch struct {
	names map[string]struct{}
	done  chan struct{}
	found map[string]lookupResult // set before done
	err   error
}

type lookupResult struct {
	set  Settings
	kind Kind
}

// plain marks a plain tag in Issuer.tags.
var plain = &Tag{}

// New returns an Issuer. Keys shorter than MinKeyLen are refused.
func New(opts Options) (*Issuer, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IsUnknown == nil {
		opts.IsUnknown = func(error) bool { return false }
	}
	if opts.Grace < MinGrace {
		opts.Grace = DefaultGrace
	}
	is := &Issuer{opts: opts, secrets: make(map[string][]byte)}
	is.ctx, is.stop = context.WithCancel(context.Background())
	for i, k := range opts.Keys {
		if len(k) < MinKeyLen {
			return nil, fmt.Errorf("%w: opaque key %d has %d bytes, fewer than %d", ErrNoKey, i+1, len(k), MinKeyLen)
		}
		id := KeyID(k)
		is.secrets[id] = k
		if i == 0 {
			is.current = id
		}
	}
	return is, nil
}

// CurrentKeyID is the fingerprint of the key new opaque tags are made
// with, and false when no key is configured.
func (is *Issuer) CurrentKeyID() (string, bool) { return is.current, is.current != "" }

// Lookup returns the compiled tag when name is formatted or opaque, and
// nil for a plain tag or a name without a row. A plain tag's answer is
// one map read once it is known. The row of a period of a formatted tag
// (tag@KEY) is no tag: its answer is a *PeriodRowError.
func (is *Issuer) Lookup(ctx context.Context, name string) (*Tag, error) {
	if v, ok := is.tags.Load(name); ok {
		if t := v.(*Tag); t != plain {
			return t, nil
		}
		return nil, nil
	}
	s, kind, err := is.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	switch kind {
	case NoRow:
		return nil, nil
	case Plain:
		if err := is.periodRow(ctx, name); err != nil {
			return nil, err
		}
		is.tags.LoadOrStore(name, plain)
		return nil, nil
	}
	return is.Put(s), nil
}

// lookup asks the store about name in the next look-up run.
func (is *Issuer) lookup(ctx context.Context, name string) (Settings, Kind, error) {
	is.mu.Lock()
	b := is.next
	if b == nil {
		b = &lookupBatch{names: make(map[string]struct{}), done: make(chan struct{})}
		is.next = b
	}
	b.names[name] = struct{}{}
	start := !is.running
	if start {
		if is.ctx.Err() != nil {
			is.mu.Unlock()
			return Settings{}, NoRow, ErrClosed
		}
		is.running, is.next = true, nil
		is.wg.Add(1)
	}
	is.mu.Unlock()
	if start {
		go is.runLookups(b)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return Settings{}, NoRow, ctx.Err()
	}
	if r, ok := b.found[name]; ok {
		return r.set, r.kind, nil
	}
	if b.err != nil {
		return Settings{}, NoRow, b.err
	}
	return Settings{}, NoRow, nil
}

// runLookups reads b, then each batch that filled meanwhile, until none
// waits. A name's read ends the batch's reads when it fails: the names
// not read yet get that error.
func (is *Issuer) runLookups(b *lookupBatch) {
	defer is.wg.Done()
	for {
		b.found = make(map[string]lookupResult, len(b.names))
		for name := range b.names {
			s, kind, err := is.opts.Store.LookupTag(is.ctx, name)
			if err != nil {
				b.err = err
				break
			}
			b.found[name] = lookupResult{s, kind}
		}
		close(b.done)
		is.mu.Lock()
		b, is.next = is.next, nil
		if b == nil {
			is.running = false
			is.mu.Unlock()
			return
		}
		is.mu.Unlock()
	}
}

// Close ends the look-ups and waits for them; Lookup of a name not known
// yet then fails with ErrClosed.
func (is *Issuer) Close() {
	is.stop()
	is.wg.Wait()
}

// Put compiles s and serves its tag by it from now on: after its creation
// or a change here, and for every tag at each Refresh.
func (is *Issuer) Put(s Settings) *Tag {
	if v, ok := is.tags.Load(s.Tag); ok {
		if old := v.(*Tag); old != plain && sameIssue(old.Settings, s) {
			p := s.PrunedBefore
			old.pruned.Store(&p)
			return old
		}
	}
	t := is.compile(s)
	is.tags.Store(s.Tag, t)
	if is.opts.OnSpecial != nil && (s.Formatted() || s.OpaqueBits != 0) {
		is.opts.OnSpecial(s.Tag)
	}
	return t
}

// sameIssue reports whether a and b issue the same ids the same way.
func sameIssue(a, b Settings) bool {
	return a.Format == b.Format && a.Reset == b.Reset && a.TimeZone == b.TimeZone &&
		a.OpaqueBits == b.OpaqueBits && a.KeyID == b.KeyID && a.Ordered == b.Ordered
}

// Owned reports whether t's numbers come from one owner at a time, in the
// order issued across the fleet: an ordered tag, or a capped format
// ({seq:N!}), whose period holds a fixed count of numbers that every
// instance must be able to issue to the last, and that a refusal must
// not use up.
func (t *Tag) Owned() bool {
	if t.Ordered {
		return true
	}
	if t.tmpl == nil {
		return false
	}
	_, capped := t.tmpl.SeqWidth()
	return capped
}

// limit is the highest number a period of t shows, 0 for no limit.
func (t *Tag) limit() int64 {
	if _, capped := t.tmpl.SeqWidth(); capped {
		return t.tmpl.MaxSeq()
	}
	return 0
}

func (is *Issuer) compile(s Settings) *Tag {
	t := &Tag{Settings: s, loc: time.UTC, ensured: make(map[string]struct{})}
	p := s.PrunedBefore
	t.pruned.Store(&p)
	if t.Reset == "" {
		t.Reset = Never
	}
	if s.Formatted() {
		var err error
		if t.tmpl, err = ParseTemplate(s.Format); err != nil {
			t.keyErr = err
		}
		if t.loc, err = s.Location(); err != nil {
			t.keyErr, t.loc = err, time.UTC
		}
	}
	if s.Opaque() {
		secret, ok := is.secrets[s.KeyID]
		if !ok {
			t.keyErr = fmt.Errorf("%w: this instance has no opaque key with id %s, which the tag's ids are made with", ErrNoKey, s.KeyID)
		} else {
			t.cipher, t.keyErr = NewCipher(secret, s.OpaqueBits)
		}
	}
	return t
}

// Refresh re-reads every tag's settings.
func (is *Issuer) Refresh(ctx context.Context) error {
	all, err := is.opts.Store.TagSettings(ctx)
	if err != nil {
		return err
	}
	for _, s := range all {
		is.Put(s)
	}
	return nil
}

// Prune closes, for every tag that resets, the periods that ended more
// than the grace ago, and deletes their rows. It says how many rows it
// deleted.
func (is *Issuer) Prune(ctx context.Context) (int, error) {
	all, err := is.opts.Store.TagSettings(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, s := range all {
		r, _ := ParseReset(string(s.Reset))
		if !s.Formatted() || r == Never {
			continue
		}
		loc, err := s.Location()
		if err != nil {
			continue
		}
		before := r.key(is.opts.Now().Add(-is.opts.Grace).In(loc))
		n, err := is.opts.Store.PrunePeriods(ctx, s.Tag, before)
		total += n
		if err != nil {
			return total, fmt.Errorf("prune tag %q: %w", s.Tag, err)
		}
		s.PrunedBefore = max(s.PrunedBefore, before)
		is.Put(s)
	}
	return total, nil
}

// Next issues one id of t.
func (is *Issuer) Next(ctx context.Context, t *Tag) (ID, error) {
	if t.keyErr != nil {
		return ID{}, t.keyErr
	}
	if t.cipher != nil {
		n, err := is.opts.IDs.Next(ctx, t.Tag)
		if err != nil {
			return ID{}, err
		}
		id, err := t.cipher.Encode(n)
		if err != nil {
			return ID{}, exhaustedError(t, n)
		}
		return ID{N: id}, nil
	}
	b, err := is.AppendText(ctx, t, make([]byte, 0, 32))
	if err != nil {
		return ID{}, err
	}
	return ID{Text: string(b)}, nil
}

// AppendText issues one id of the formatted tag t and appends its text to
// b: Next without the string, for callers that write the text out.
func (is *Issuer) AppendText(ctx context.Context, t *Tag, b []byte) ([]byte, error) {
	if t.keyErr != nil {
		return b, t.keyErr
	}
	if t.tmpl == nil {
		return b, fmt.Errorf("%w: tag %q is not formatted", ErrNotNumeric, t.Tag)
	}
	now := is.opts.Now().In(t.loc)
	ns, _, err := is.numbers(ctx, t, now, 1)
	if err != nil {
		return b, err
	}
	return t.tmpl.AppendText(b, now, ns[0]), nil
}

// NextN issues n ids of t: texts of one period, or opaque numbers.
func (is *Issuer) NextN(ctx context.Context, t *Tag, n int) ([]ID, error) {
	if t.keyErr != nil {
		return nil, t.keyErr
	}
	out := make([]ID, n)
	if t.cipher != nil {
		ns, err := is.opts.IDs.NextN(ctx, t.Tag, n)
		if err != nil {
			return nil, err
		}
		for i, v := range ns {
			if out[i].N, err = t.cipher.Encode(v); err != nil {
				return nil, exhaustedError(t, v)
			}
		}
		return out[:len(ns)], nil
	}
	if t.tmpl == nil {
		return nil, fmt.Errorf("%w: tag %q is not formatted", ErrNotNumeric, t.Tag)
	}
	now := is.opts.Now().In(t.loc)
	ns, _, err := is.numbers(ctx, t, now, n)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, 32)
	for i, v := range ns {
		buf = t.tmpl.AppendText(buf[:0], now, v)
		out[i].Text = string(buf)
	}
	return out[:len(ns)], nil
}

// numbers takes n numbers of the period of the formatted tag t that holds
// now: from the owner when t is Owned, which refuses what the period
// cannot show and takes nothing then; else from the allocator, whose
// numbers past what the period shows are refused (an open format shows
// them all).
func (is *Issuer) numbers(ctx context.Context, t *Tag, now time.Time, n int) ([]int64, Period, error) {
	var ns []int64
	take := func(row string) error {
		var err error
		if n == 1 {
			var v int64
			v, err = is.opts.IDs.Next(ctx, row)
			ns = append(ns[:0], v)
		} else {
			ns, err = is.opts.IDs.NextN(ctx, row, n)
		}
		return err
	}
	if t.Owned() {
		if is.opts.Owner == nil {
			return nil, Period{}, fmt.Errorf("%w: tag %q is served by one owner at a time, and this instance serves no such tags (it runs without sequences)", ErrNoOwner, t.Tag)
		}
		if err := is.opts.Owner.Own(ctx, t.Tag); err != nil {
			return nil, Period{}, err
		}
		take = func(row string) error {
			var err error
			ns, err = is.opts.Owner.NextRow(ctx, t.Tag, row, t.limit(), n)
			return err
		}
	}
	p, err := is.issue(ctx, t, now, take)
	if errors.Is(err, ErrSequenceFull) {
		return nil, p, fullError(t, p, err)
	}
	if err != nil {
		return nil, p, err
	}
	for _, v := range ns {
		if v > t.tmpl.MaxSeq() {
			return nil, p, fullError(t, p, nil)
		}
	}
	return ns, p, nil
}

func exhaustedError(t *Tag, n int64) error {
	return fmt.Errorf("%w: number %d is past %d, the last of %d bits", ErrExhausted, n, t.cipher.Max(), t.cipher.Bits())
}

func fullError(t *Tag, p Period, why error) error {
	w, _ := t.tmpl.SeqWidth()
	var left *LeftError
	if errors.As(why, &left) {
		return fmt.Errorf("%w: {seq:%d!} shows at most %d ids in period %q, and %d are left", ErrSequenceFull, w, t.tmpl.MaxSeq(), p.Key, left.Left)
	}
	return fmt.Errorf("%w: {seq:%d!} shows at most %d ids in period %q", ErrSequenceFull, w, t.tmpl.MaxSeq(), p.Key)
}

// issue runs take on the row of the period of t that holds now, after
// making sure the row exists; when take finds no row (pruned since), once
// more after making sure again, which fails if the period is closed.
func (is *Issuer) issue(ctx context.Context, t *Tag, now time.Time, take func(row string) error) (Period, error) {
	p, err := is.period(ctx, t, now)
	if err != nil {
		return p, err
	}
	err = take(p.Row)
	if err == nil || !is.opts.IsUnknown(err) || t.Reset == Never {
		return p, err
	}
	t.mu.Lock()
	delete(t.ensured, p.Key)
	t.mu.Unlock()
	if err := is.ensure(ctx, t, p.Key); err != nil {
		return p, err
	}
	return p, take(p.Row)
}

// period is the period of t that holds now, whose row exists.
func (is *Issuer) period(ctx context.Context, t *Tag, now time.Time) (Period, error) {
	if p := t.cur.Load(); p != nil && !now.Before(p.Start) && now.Before(p.End) {
		return *p, nil
	}
	p := PeriodAt(t.Tag, t.Reset, now)
	if t.Reset == Never {
		t.cur.Store(&p)
		return p, nil
	}
	if y := now.Year(); y < 1000 || y > 9999 {
		return p, fmt.Errorf("%w: the year %d has not four digits", ErrPeriodClosed, y)
	}
	if err := is.ensure(ctx, t, p.Key); err != nil {
		return p, err
	}
	if cur := t.cur.Load(); cur == nil || cur.Key <= p.Key {
		t.cur.Store(&p)
	}
	return p, nil
}

// maxEnsured bounds the period keys a tag remembers having made sure of.
const maxEnsured = 8

// ensure makes sure the row of t's period key exists, unless this process
// did so already; a period before the tag's pruned mark, or past the
// grace by this clock, is closed.
func (is *Issuer) ensure(ctx context.Context, t *Tag, key string) error {
	if pb := *t.pruned.Load(); pb != "" && key < pb {
		return closedError(t, key)
	}
	t.mu.Lock()
	_, done := t.ensured[key]
	t.mu.Unlock()
	if done {
		return nil
	}
	if err := is.opts.Store.EnsurePeriod(ctx, t.Tag, key); err != nil {
		if errors.Is(err, ErrPeriodClosed) {
			return closedError(t, key)
		}
		return err
	}
	t.mu.Lock()
	if len(t.ensured) >= maxEnsured {
		clear(t.ensured)
	}
	t.ensured[key] = struct{}{}
	t.mu.Unlock()
	return nil
}

func closedError(t *Tag, key string) error {
	return fmt.Errorf("%w: the period %s of tag %q ended more than the grace ago and its numbers are not issued again; check this instance's clock", ErrPeriodClosed, key, t.Tag)
}

// Reveal turns an opaque id of tag back into the number it was made from.
func (is *Issuer) Reveal(ctx context.Context, tag string, id int64) (int64, error) {
	t, err := is.Lookup(ctx, tag)
	if err != nil {
		return 0, err
	}
	if t == nil || !t.Opaque() {
		return 0, fmt.Errorf("%w: %q", ErrNotOpaque, tag)
	}
	if t.keyErr != nil {
		return 0, t.keyErr
	}
	return t.cipher.Decode(id)
}
