package storeset

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// Store is one independent store of a set, or the one store served alone,
// as Stores uses it: its parts by job below. The store package implements
// it.
type Store interface {
	Allocating
	Administering
	Marking
	// LookupTags says what each of names is, and HomeRows counts what lives in
	// the home store of a set alone (home.go).
	LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error)
	Homing
	// AcquireIn, Renew and Release lease snowflake worker ids in the
	// store's part of the worker-id space (leases.go).
	LeaseStore
}

// Allocating is how a store gives ranges: alone, as segment's allocator
// asks for them, or in its class of a set.
type Allocating interface {
	segment.Store
	// AllocateIn takes the tag's next range of class c at or above floor
	// while the store is active under version (ErrSetChanged otherwise),
	// and returns with it the max_id it found the row at.
	AllocateIn(ctx context.Context, tag string, step, floor int64, c segment.Class, version int64) (a segment.Allocation, found int64, err error)
	// AllocateBatchIn does for each of tags what AllocateIn(ctx, tag, 0,
	// floors[i], c, version) does, in one transaction; ErrSetChanged for
	// the whole call when the store is not active under version.
	AllocateBatchIn(ctx context.Context, tags []string, floors []int64, c segment.Class, version int64) ([]ClassResult, error)
	// AllocateBatch takes the first range of each of tags, rows of the
	// home store, in one transaction (segment.BatchAllocator).
	segment.BatchAllocator
	// HandBack sets the row's max_id back from end to first, only while
	// it is still end (segment.HandBacker).
	segment.HandBacker
	// Highest is the highest max_id of any row.
	Highest(ctx context.Context) (int64, error)
}

// Administering is how a store's rows and record are changed: its tags,
// and what it says about itself and its set.
type Administering interface {
	// CreateTag and UpdateTag administer the store's rows of leaf_alloc.
	CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error)
	UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error)
	// Record reads what the store says about itself and its set.
	Record(ctx context.Context) (Record, error)
	// SetRecord replaces the record with to while it is still from.
	SetRecord(ctx context.Context, from, to Record) (bool, error)
}

// Marking is how a store keeps the marks of the other stores of its set
// (marks.go).
type Marking interface {
	// Marks, HighestMark and RecordMarks read and raise the marks this
	// store holds of another store's tags.
	Marks(ctx context.Context, storeID string, tags []string) (map[string]int64, error)
	HighestMark(ctx context.Context, storeID string) (int64, error)
	RecordMarks(ctx context.Context, storeID string, marks map[string]int64) error
	// LowerMarks sets this store's marks of the tags of store storeID back
	// to To, each only while it is above To and not above From: the rows
	// were handed back from From (see Stores.HandBack).
	LowerMarks(ctx context.Context, storeID string, marks map[string]MarkBack) error
}

// Named is a store as an instance is configured with it.
type Named struct {
	Name  string
	Store Store
	// Up reports whether the store answers now; nil means always.
	Up func() bool
	// Err, when set, is why the store could not be opened (Store is nil):
	// the set's administration (Init, Change) takes it as a store that
	// does not answer; Open refuses it.
	Err error
}

// Defaults of Options.
const (
	DefaultMarkInterval = time.Second
	DefaultFailoverJump = segment.DefaultFailoverJump
)

// Options configures Stores. Zero fields take the defaults above.
type Options struct {
	// MarkInterval is how often the marks of the ranges taken are written
	// to the other stores: the window in which a store restored from a
	// backup can hide a range from an instance that just started.
	MarkInterval time.Duration
	// FailoverJump is how far past the highest mark known of a row a store
	// found behind it is moved (see the package comment).
	FailoverJump int64
	// CallTimeout bounds each store call of a load, so that a store that
	// does not answer leaves time to try the next; 0 means a third of
	// segment.DefaultLoadTimeout.
	CallTimeout time.Duration
	// OnStale, when set, is called each time a store's row is found behind
	// a mark recorded for it.
	OnStale func(store, tag string, mark int64)
	// OnChange, when set, is called with the set in force and the newer
	// one each time a read of the set finds it changed (leaf store add,
	// leaf store retire), without a lock of the Stores held.
	OnChange func(before, after Set)
}

// Stores serves one number space from several independent stores: it is
// the segment.Store of an allocator. Each load goes to the first configured
// store that is up, falling back to the others in their order; the range
// comes from that store's class of the set, so no two stores hand out the
// same id. It is safe for concurrent use; Close stops its goroutines.
type Stores struct {
	lone    Store // the one store served alone (lone.go), nil for a set
	opts    Options
	members []*member // in the configured order: the first is preferred

	mu  sync.RWMutex // protects the fields below
	set Set
	ids map[*member]string // the identity of each member checked against set

	rereads singleflight.Group // reads of the set by recheck

	// homed holds the tags whose rows the home store numbers, and striped
	// those numbered in classes (a map under a mutex: it holds every plain
	// tag served, and is read once per load), as LookupTags found them
	// (home.go).
	homed     sync.Map
	stripedMu sync.Mutex
	striped   map[string]struct{}

	// flushMu is held while the marks are written, and while a row is
	// handed back with its marks (handback.go).
	flushMu sync.Mutex

	marksMu sync.Mutex                     // protects the fields below
	pending map[string]map[string]int64    // marks to write: store id -> tag -> max_id
	known   map[string]map[string]int64    // marks read of each store's tags, and what it gave us
	lowered map[string]map[string]MarkBack // marks to set back: store id -> tag -> from, to
	// fenced are the rows found behind their marks whose range past the
	// failover jump is not taken yet: store id -> tag -> the floor of
	// their next range (see fence).
	fenced map[string]map[string]int64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// member is a configured store.
type member struct {
	name string
	st   Store
	up   func() bool
}

// Open reads the record of every configured store and checks that they
// describe one set that matches the configuration: the same names, each
// name the database the set knows by it, no database given twice. It
// fails with an error wrapping ErrMismatch, saying what differs, when they
// do not; and when no store answers, since nothing can be checked then.
func Open(ctx context.Context, named []Named, opts Options) (*Stores, error) {
	if len(named) == 0 {
		return nil, errors.New("no store configured")
	}
	if len(named) == 1 && named[0].Name == Lone {
		return openLone(ctx, named[0])
	}
	if opts.MarkInterval <= 0 {
		opts.MarkInterval = DefaultMarkInterval
	}
	if opts.FailoverJump <= 0 {
		opts.FailoverJump = DefaultFailoverJump
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = segment.DefaultLoadTimeout / 3
	}
	s := &Stores{opts: opts, pending: map[string]map[string]int64{}, known: map[string]map[string]int64{},
		lowered: map[string]map[string]MarkBack{}, fenced: map[string]map[string]int64{}}
	for _, n := range named {
		if err := ValidateName(n.Name); err != nil {
			return nil, err
		}
		if n.Err != nil {
			return nil, n.Err
		}
		up := n.Up
		if up == nil {
			up = func() bool { return true }
		}
		s.members = append(s.members, &member{name: n.Name, st: n.Store, up: up})
	}
	set, ids, err := s.readSet(ctx, true)
	if err != nil {
		return nil, err
	}
	s.set, s.ids = set, ids
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Go(s.markLoop)
	return s, nil
}

// Close writes the marks still pending, and sets back those of the rows
// handed back, once, and stops.
func (s *Stores) Close() error {
	if s.lone != nil {
		return nil
	}
	s.cancel()
	s.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CallTimeout)
	defer cancel()
	s.flushMarks(ctx)
	return nil
}

// Set returns the set of stores in force.
func (s *Stores) Set() Set {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.set
}
