package fleettest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
)

// DB is the database the instances share.
type DB struct {
	// Rows is leaf_alloc.
	Rows *segmenttest.MemStore
	// Settings are the settings of formatted and opaque tags.
	Settings *bizidtest.Store
	// Seqs are the sequence tables: spaces, members, section leases.
	Seqs  *sequencetest.MemStore
	owned *ownedRows
}

func newDB(tb testing.TB) *DB {
	tb.Helper()
	ctx := context.Background()
	db := &DB{Rows: segmenttest.New(plainRows...), Seqs: sequencetest.NewMemStore(time.Now)}
	db.Rows.SetNow(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) })
	db.Settings = bizidtest.New(db.Rows)
	db.owned = &ownedRows{db: db, leases: sequencetest.NewOrderedTags(db.Seqs, 1)}
	for _, s := range spaces {
		if _, err := db.Seqs.CreateSpace(ctx, s); err != nil {
			tb.Fatal(err)
		}
	}
	settings := settingsAdmin{Store: db.Settings, db: db}
	for tag, s := range formats {
		if _, err := settings.CreateSpecialTag(ctx, segment.Tag{Name: tag, MaxID: 1, Step: 10}, s); err != nil {
			tb.Fatal(err)
		}
	}
	for tag, bits := range map[string]int{Opaque63: bizid.Bits63, Opaque53: bizid.Bits53} {
		s := bizid.Settings{OpaqueBits: bits, KeyID: bizid.KeyID([]byte(OpaqueKey))}
		if _, err := settings.CreateSpecialTag(ctx, segment.Tag{Name: tag, MaxID: 1, Step: 100}, s); err != nil {
			tb.Fatal(err)
		}
	}
	for _, tag := range []string{Ordered, OrderedB} {
		if _, err := db.owned.CreateOrderedTag(ctx, segment.Tag{Name: tag, MaxID: 1, Step: 5}); err != nil {
			tb.Fatal(err)
		}
	}
	return db
}

// ownedRows are the parts of the store about ordered tags and the rows
// their owners raise (sequence.OrderedStore, sequence.TagRows), by the
// rules of store/ordered.go: a tag is ordered when it has a lease row,
// created with it (an ordered tag, or a formatted one served by one
// owner) or at its first request (EnsureOrdered, for a tag that became
// capped by a change of its settings); an ordered tag is never plain to
// an allocator (LookupTags says it is ordered).
type ownedRows struct {
	db     *DB
	leases *sequencetest.OrderedTags // its rows are unused: the numbers are Rows'

	mu     sync.Mutex // serializes the creation of lease rows; protects writes
	writes int        // raises and hand-backs that wrote
}

var (
	_ sequence.OrderedStore = (*ownedRows)(nil)
	_ sequence.TagRows      = (*ownedRows)(nil)
)

// Writes counts the writes of the owners to rows: raises and hand-backs.
func (o *ownedRows) Writes() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writes
}

func (o *ownedRows) OrderedTags(ctx context.Context) ([]string, error) {
	return o.leases.OrderedTags(ctx)
}

func (o *ownedRows) EnsureOrdered(ctx context.Context, tag string) error {
	if _, err := o.db.Rows.Tag(ctx, tag); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.leaseLocked(tag)
}

// leaseLocked gives tag its lease row, unless it has one.
func (o *ownedRows) leaseLocked(tag string) error {
	if has, _, _ := o.leases.TagOrdered(context.Background(), tag); !has {
		o.leases.Create(tag, true)
	} else if err := o.leases.EnsureOrdered(context.Background(), tag); err != nil {
		return err
	}
	o.db.Rows.SetNotPlain(tag) // the lease row makes it ordered, whatever its settings
	return nil
}

// CreateOrderedTag creates the row and its lease row.
func (o *ownedRows) CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	created, err := o.db.Rows.CreateTag(ctx, t)
	if err != nil {
		return segment.Tag{}, err
	}
	return created, o.leaseLocked(t.Name)
}

// RaiseRow raises the row's max_id by its step (or atLeast where more), or
// by less up to limit, as store.RaiseRow does.
func (o *ownedRows) RaiseRow(ctx context.Context, row string, limit, atLeast int64) (first, last int64, err error) {
	if limit <= 0 {
		t, err := o.db.Rows.Tag(ctx, row)
		if err != nil {
			return 0, 0, err
		}
		a, err := o.db.Rows.Allocate(ctx, row, max(t.Step, atLeast))
		if err != nil {
			return 0, 0, err
		}
		o.wrote()
		return a.Start(), a.MaxID - 1, nil
	}
	if _, err := o.db.Rows.Tag(ctx, row); err != nil {
		return 0, 0, err // rows are never deleted in a fleet: Edit finds it
	}
	o.db.Rows.Edit(row, func(t *segment.Tag) {
		switch {
		case t.Step < segment.MinStep:
			err = fmt.Errorf("%w: its step is %d, below %d", segment.ErrMisconfigured, t.Step, segment.MinStep)
		case t.MaxID > limit:
			err = fmt.Errorf("%w: max_id %d is past %d", sequence.ErrFull, t.MaxID, limit)
		default:
			by := min(max(t.Step, atLeast), limit+1-t.MaxID)
			first, last = t.MaxID, t.MaxID+by-1
			t.MaxID += by
		}
	})
	if err == nil {
		o.wrote()
	}
	return first, last, err
}

func (o *ownedRows) HandBack(ctx context.Context, row string, end, first int64) (bool, error) {
	done, err := o.db.Rows.HandBack(ctx, row, end, first)
	if done {
		o.wrote()
	}
	return done, err
}

func (o *ownedRows) wrote() {
	o.mu.Lock()
	o.writes++
	o.mu.Unlock()
}

// settingsAdmin keeps the settings of formatted and opaque tags as
// store.Store does: a tag served by one owner gets its lease row with its
// creation; a change of settings writes the settings alone.
type settingsAdmin struct {
	*bizidtest.Store
	db *DB
}

func (s settingsAdmin) CreateSpecialTag(ctx context.Context, t segment.Tag, set bizid.Settings) (segment.Tag, error) {
	o := s.db.owned
	o.mu.Lock()
	defer o.mu.Unlock()
	created, err := s.Store.CreateSpecialTag(ctx, t, set)
	if err != nil || !set.Owned() {
		return created, err
	}
	return created, o.leaseLocked(t.Name)
}

// announcedRows is leaf serve's: a plain tag created is told to the
// allocator.
type announcedRows struct {
	*segmenttest.MemStore
	db    *DB
	alloc *segment.Allocator
}

func (t announcedRows) CreateTag(ctx context.Context, tag segment.Tag) (segment.Tag, error) {
	created, err := t.MemStore.CreateTag(ctx, tag)
	if err == nil {
		t.alloc.Added(created.Name)
	}
	return created, err
}

func (t announcedRows) CreateOrderedTag(ctx context.Context, tag segment.Tag) (segment.Tag, error) {
	return t.db.owned.CreateOrderedTag(ctx, tag)
}

// spaceAdmin is leaf serve's: a space created is told to the Sequencer.
type spaceAdmin struct {
	*sequencetest.MemStore
	seq *sequence.Sequencer
}

func (s spaceAdmin) CreateSpace(ctx context.Context, sp sequence.Space) (sequence.Space, error) {
	created, err := s.MemStore.CreateSpace(ctx, sp)
	if err == nil {
		s.seq.Added(created)
	}
	return created, err
}
