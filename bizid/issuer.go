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

// Row is what one name is in the database, as a Store reads many names in
// one statement: its row, its settings and whether it is ordered read
// together, so that a tag created with settings (one transaction) is never
// seen without them.
type Row struct {
	Kind Kind
	// Settings are the tag's settings where Kind is Special; of a Plain
	// row only Tag and Ordered are set.
	Settings Settings
	// Period, when not nil, says that the name is the row of a period of a
	// formatted tag, made or still to be made (Kind says which): its
	// numbers go out only as that tag's texts.
	Period *PeriodRowError
}

// Plain reports whether the name's numbers are the segment allocator's to
// hand out as they are: no settings, not ordered, no period's row. A name
// without a row is plain too (the allocator answers it as unknown).
func (r Row) Plain() bool {
	return r.Kind != Special && !r.Settings.Ordered && r.Period == nil
}

// Homed reports whether the name's numbers live in the home store of a
// set alone: a formatted or opaque tag's, or a period's row of one.
func (r Row) Homed() bool { return r.Kind == Special || r.Period != nil }

// Store is what an Issuer needs from the database.
type Store interface {
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

// Issuer serves the ids of formatted and opaque tags, compiled from their
// settings (Compile); which names are such tags is its caller's to know
// (the service's tag registry). It is safe for concurrent use.
type Issuer struct {
	opts    Options
	secrets map[string][]byte // key id -> secret
	current string            // key id of new opaque tags
}

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

// CurrentKeyID is the key id new opaque tags store: the fingerprint of
// the key they are made with, marked for a permutation of each tag's own
// (TagKeyID); false when no key is configured.
func (is *Issuer) CurrentKeyID() (string, bool) {
	if is.current == "" {
		return "", false
	}
	return TagKeyID(is.current), true
}

// Compile returns the tag of settings s, to serve by from now on: old,
// the tag as compiled before (nil if none), when s issues the same ids the
// same way, with its pruned mark raised to s's; a new compilation
// otherwise.
func (is *Issuer) Compile(old *Tag, s Settings) *Tag {
	if old != nil && sameIssue(old.Settings, s) {
		p := max(s.PrunedBefore, *old.pruned.Load())
		old.pruned.Store(&p)
		return old
	}
	return is.compile(s)
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
		fingerprint, own := SplitKeyID(s.KeyID)
		secret, ok := is.secrets[fingerprint]
		switch {
		case !ok:
			t.keyErr = fmt.Errorf("%w: this instance has no opaque key with id %s, which the tag's ids are made with", ErrNoKey, s.KeyID)
		case own:
			t.cipher, t.keyErr = NewTagCipher(secret, s.OpaqueBits, s.Tag)
		default:
			t.cipher, t.keyErr = NewCipher(secret, s.OpaqueBits)
		}
	}
	return t
}

// Reveal turns an opaque id of t back into the number it was made from.
func (t *Tag) Reveal(id int64) (int64, error) {
	if !t.Opaque() {
		return 0, fmt.Errorf("%w: %q", ErrNotOpaque, t.Tag)
	}
	if t.keyErr != nil {
		return 0, t.keyErr
	}
	return t.cipher.Decode(id)
}
