package bizid

import (
	"context"
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
// (tag@KEY) is no tag, whether or not the period has begun: its answer is
// a *PeriodRowError.
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
		// A period not begun has no row yet; its name is no tag all the same.
		return nil, is.periodRow(ctx, name)
	case Plain:
		if err := is.periodRow(ctx, name); err != nil {
			return nil, err
		}
		is.tags.LoadOrStore(name, plain)
		return nil, nil
	}
	return is.Put(s), nil
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
