package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// The tag registry: what kind each tag is (plain, formatted or opaque,
// ordered, or the row of a formatted tag's period, which is no tag), read
// from the store by one statement for many names (TagKinds), kept once,
// and changed in one place when a tag is created or its settings change,
// here (Put, Ordered) or on another instance (PutAll, from the periodic
// read of every tag's settings). The service looks a tag's kind up here
// once per request and dispatches by it; a set of stores learns from the
// same read which rows live in its home store.
//
// Plain tags cost the registry nothing once served: it keeps the tags
// that are not plain, and a plain tag's record is its buffer in the
// segment allocator, which holds the buffers of plain tags and of the
// rows the business ids number (a formatted or opaque tag's own, which
// the registry keeps, and its periods', named tag@KEY, which the service
// always asks the registry about). A buffer is only ever made for a name
// this registry read as a plain tag's row (or for the business ids' rows):
// a name without a row is refused here, never handed to the allocator,
// so a tag created under it meanwhile, of whatever kind, is read again
// before its first number. A tag's kind is fixed at its creation (its row
// and its settings or ordering are written in one transaction and read in
// one statement) but for one change: a plain tag may be given settings,
// which Put records here and the next read of every tag's settings on the
// other instances.
//
// Names that are not tags cost nothing that grows: a name without a row
// is not kept, nor is the row of a period, which is told from its tag's
// settings (the tag is read with it, and kept).

// TagKinds reads what names are in the database (store.Store and
// storeset.Stores implement it).
type TagKinds interface {
	LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error)
}

// FirstLoads takes the first ranges of many plain tags together
// (segment.Allocator implements it): the registry hands it the tags a read
// found plain, so that their first loads make one batch as their read did.
type FirstLoads interface {
	LoadFirst(ctx context.Context, tags []string)
}

// Compiler compiles the settings of formatted and opaque tags, with the
// opaque keys of this instance (bizid.Issuer implements it).
type Compiler interface {
	// Compile returns the tag of s, old when it issues the same ids.
	Compile(old *bizid.Tag, s bizid.Settings) *bizid.Tag
	// CurrentKeyID is the fingerprint of the key new opaque tags get.
	CurrentKeyID() (string, bool)
}

// tagKind is what the registry knows a name to be.
type tagKind uint8

const (
	// kindPlain: numbers from the allocator as they are.
	kindPlain tagKind = iota
	// kindBiz: a formatted or opaque tag, served by the business ids.
	kindBiz
	// kindOrdered: numbers from the tag's one owner.
	kindOrdered
	// kindPeriodRow: the row of a period of a formatted tag, made or
	// still to be made: refused by its own name.
	kindPeriodRow
	// kindNone: a name without a row, refused as an unknown tag. It is
	// never handed to the allocator: a tag created under that name later,
	// of whatever kind, is read again before its first number.
	kindNone
)

// tagEntry is one name's kind: biz and settings for kindBiz (biz nil
// where business ids are off), err for kindPeriodRow and kindNone.
type tagEntry struct {
	kind     tagKind
	biz      *bizid.Tag
	settings bizid.Settings
	err      error
}

var (
	plainEntry   = &tagEntry{kind: kindPlain}
	orderedEntry = &tagEntry{kind: kindOrdered}
)

// noneEntry is the entry of name, which has no row.
func noneEntry(name string) *tagEntry {
	return &tagEntry{kind: kindNone, err: fmt.Errorf("%w: %q", segment.ErrUnknownTag, name)}
}

// maxKindReads is the most reads of the registry that run at once: two,
// as the allocator's first loads that follow them (segment's
// maxLoadCalls).
const maxKindReads = 2

// failedReadPause is how long after a read that failed the reads of names
// not known fail at once with its error, as the allocator's first loads
// do after a failed one: while the store does not answer, a request for a
// tag not served yet is refused at once rather than waiting for a read
// that would time out.
const failedReadPause = segment.DefaultRetryMin

// Registry is the one record of what kind each tag is. It is safe for
// concurrent use.
type Registry struct {
	rows     TagKinds
	compiler Compiler   // nil: formatted and opaque tags are served as plain
	loads    FirstLoads // nil: the requests load their tags
	now      func() time.Time

	// known maps the names kept (the tags that are not plain, and names
	// like a period's row) to their entries; it is replaced whole under
	// mu, and read without a lock.
	known atomic.Pointer[map[string]*tagEntry]

	mu      sync.Mutex // protects the fields below and writes of known
	next    *kindRead
	running int
	failed  error     // the last read's error, nil when it succeeded
	retry   time.Time // when a read may be tried again after failed
}

// kindRead is the names one read takes; done is closed when it has.
type kindRead struct {
	names []string
	done  chan struct{}
	found map[string]*tagEntry // set before done; absent: no row
	err   error
}

// NewRegistry returns the registry of the tags whose rows are read from
// rows, compiling settings with compiler (nil: business ids are off, and
// the service serves formatted and opaque tags as plain ones), and handing
// the plain tags of each read to loads (nil: none).
func NewRegistry(rows TagKinds, compiler Compiler, loads FirstLoads) *Registry {
	r := &Registry{rows: rows, compiler: compiler, loads: loads, now: time.Now}
	r.known.Store(&map[string]*tagEntry{})
	return r
}

// Compiler is the registry's compiler, nil where business ids are off.
func (r *Registry) Compiler() Compiler { return r.compiler }

// lookup is the entry kept of name, nil when none is: a plain tag's, or a
// name not read yet. Where every tag is plain it hashes nothing.
func (r *Registry) lookup(name string) *tagEntry {
	if m := *r.known.Load(); len(m) > 0 {
		return m[name]
	}
	return nil
}

// periodRow is the entry of name when it is the row of a period of a
// formatted tag kept here, told without a read; nil otherwise. Such names
// are never kept: what they are follows from their tag's settings.
func (r *Registry) periodRow(name string) *tagEntry {
	tag, key, ok := bizid.SplitRowName(name)
	if !ok {
		return nil
	}
	if e := r.lookup(tag); e != nil && e.kind == kindBiz && e.settings.PeriodKey(key) {
		return &tagEntry{kind: kindPeriodRow, err: &bizid.PeriodRowError{Row: name, Tag: tag, Key: key}}
	}
	return nil
}

// kind is what name is: the entry kept, or one told from its tag for a
// period's row, or else read from the store in the next read. A name
// without a row is an error wrapping segment.ErrUnknownTag, and so never
// reaches the allocator: the registry alone says that a name is a plain
// tag, from a read that found its row plain.
func (r *Registry) kind(ctx context.Context, name string) (*tagEntry, error) {
	e := r.lookup(name)
	if e == nil {
		e = r.periodRow(name)
	}
	if e == nil {
		var err error
		if e, err = r.read(ctx, name); err != nil {
			return nil, err
		}
	}
	if e.kind == kindNone {
		return nil, e.err
	}
	return e, nil
}

// read returns what name is, read from the store in the next read;
// plainEntry for a plain tag, an entry of kindNone for a name without a
// row.
func (r *Registry) read(ctx context.Context, name string) (*tagEntry, error) {
	r.mu.Lock()
	if e := r.lookup(name); e != nil { // kept while this call waited for mu
		r.mu.Unlock()
		return e, nil
	}
	if r.failed != nil && r.now().Before(r.retry) {
		err := r.failed
		r.mu.Unlock()
		return nil, err
	}
	b := r.next
	if b == nil {
		b = &kindRead{done: make(chan struct{})}
		r.next = b
	}
	b.names = append(b.names, name)
	start := r.running < maxKindReads
	if start {
		r.running++
		r.next = nil
	}
	r.mu.Unlock()
	if start {
		go r.run(b)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: what kind of tag: %w", segment.ErrStoreUnavailable, ctx.Err())
	}
	if b.err != nil {
		return nil, b.err
	}
	if e := b.found[name]; e != nil {
		return e, nil
	}
	return noneEntry(name), nil
}

// run reads b, then each batch that filled meanwhile, until none waits;
// the plain tags of a batch have their first loads taken together before
// its requests go on.
func (r *Registry) run(b *kindRead) {
	for {
		if plain := r.readBatch(b); len(plain) > 0 && r.loads != nil {
			r.loads.LoadFirst(context.Background(), plain)
		}
		close(b.done)
		r.mu.Lock()
		b, r.next = r.next, nil
		if b == nil {
			r.running--
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
	}
}

// readBatch reads the names of b, each once, keeps what it found, and
// returns the names that are plain tags. With a name like a period's row
// it reads the tag before the separator too, which, formatted, is kept:
// the rows of its periods are then told without a read.
func (r *Registry) readBatch(b *kindRead) (plain []string) {
	asked := make(map[string]bool, len(b.names))
	names := b.names[:0:0]
	for _, n := range b.names {
		if !asked[n] {
			asked[n] = true
			names = append(names, n)
		}
	}
	for _, n := range names {
		if tag, _, ok := bizid.SplitRowName(n); ok && !asked[tag] && r.lookup(tag) == nil {
			asked[tag] = false
			names = append(names, tag)
		}
	}
	rows, err := r.rows.LookupTags(context.Background(), names)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if !errors.Is(err, segment.ErrStoreUnavailable) {
			err = fmt.Errorf("%w: what kind of tag: %w", segment.ErrStoreUnavailable, err)
		}
		b.err, r.failed, r.retry = err, err, r.now().Add(failedReadPause)
		return nil
	}
	r.failed = nil
	b.found = make(map[string]*tagEntry, len(rows))
	kept := r.cloneKnown()
	for name, row := range rows {
		e := r.entryOf(kept[name], row)
		if asked[name] {
			b.found[name] = e
		}
		_, _, rowName := bizid.SplitRowName(name)
		switch {
		case e.kind == kindPeriodRow:
			// never kept: told from its tag's settings
		case e != plainEntry || rowName:
			kept[name] = e
		case asked[name]:
			plain = append(plain, name)
		}
	}
	r.known.Store(&kept)
	return plain
}

// cloneKnown is a copy of known to change and store. Called with r.mu
// held.
func (r *Registry) cloneKnown() map[string]*tagEntry { return maps.Clone(*r.known.Load()) }

// entryOf is the entry of what row says a name is; old is the entry kept
// before, whose compiled tag is kept when the settings issue the same ids.
func (r *Registry) entryOf(old *tagEntry, row bizid.Row) *tagEntry {
	switch {
	case row.Kind == bizid.Special && (row.Settings.Formatted() || row.Settings.Opaque()):
		e := &tagEntry{kind: kindBiz, settings: row.Settings}
		if r.compiler != nil {
			var was *bizid.Tag
			if old != nil {
				was = old.biz
			}
			e.biz = r.compiler.Compile(was, row.Settings)
		}
		return e
	case row.Settings.Ordered:
		return orderedEntry
	case row.Period != nil:
		return &tagEntry{kind: kindPeriodRow, err: row.Period}
	}
	return plainEntry
}

// Put records the settings of a formatted or opaque tag, created or
// changed here.
func (r *Registry) Put(s bizid.Settings) { r.PutAll([]bizid.Settings{s}) }

// PutAll records the settings of formatted and opaque tags read from the
// store (every tag's, read every --tag-refresh).
func (r *Registry) PutAll(all []bizid.Settings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.cloneKnown()
	for _, s := range all {
		if s.Formatted() || s.Opaque() {
			kept[s.Tag] = r.entryOf(kept[s.Tag], bizid.Row{Kind: bizid.Special, Settings: s})
		}
	}
	r.known.Store(&kept)
}

// Ordered records names as ordered tags: one created here, or every one
// read from the store (read every --tag-refresh, as the settings are, so
// that a tag created ordered on another instance while this one was
// taking its first range is sent to its owner from then on). A formatted
// tag that is ordered stays the business ids' to serve.
func (r *Registry) Ordered(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.cloneKnown()
	for _, name := range names {
		if e := kept[name]; e == nil || e.kind == kindPlain {
			kept[name] = orderedEntry
		}
	}
	r.known.Store(&kept)
}
