// Package bizidtest keeps the settings of formatted and opaque tags in
// memory, beside the rows of a segmenttest.MemStore, by the rules of the
// real stores (store/bizid.go, store/periods.go): for the tests of httpapi
// and cmd/leaf.
package bizidtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
)

var _ bizid.Store = (*Store)(nil)

// Store is the settings table in memory; the rows are Rows'.
type Store struct {
	Rows *segmenttest.MemStore

	mu       sync.Mutex // protects the fields below
	settings map[string]bizid.Settings
	ensures  int
}

// New returns a Store over rows.
func New(rows *segmenttest.MemStore) *Store {
	return &Store{Rows: rows, settings: map[string]bizid.Settings{}}
}

// Ensures counts EnsurePeriod calls.
func (s *Store) Ensures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ensures
}

func (s *Store) exists(ctx context.Context, name string) (bool, error) {
	_, err := s.Rows.Tag(ctx, name)
	if errors.Is(err, segment.ErrUnknownTag) {
		return false, nil
	}
	return err == nil, err
}

// LookupTags says what each of names is, as store.Store does: the rows'
// kinds, the settings kept here, and the rows of the periods of formatted
// tags, made or not.
func (s *Store) LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error) {
	out, err := s.Rows.LookupTags(ctx, names)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range names {
		r, ok := out[name]
		if set, has := s.settings[name]; ok && has {
			set.Ordered = set.Ordered || r.Settings.Ordered
			r.Kind, r.Settings = bizid.Special, set
		}
		if tag, key, split := bizid.SplitRowName(name); split {
			if set, has := s.settings[tag]; has && set.PeriodKey(key) {
				r.Period = &bizid.PeriodRowError{Row: name, Tag: tag, Key: key}
			}
		}
		if ok || r.Period != nil {
			out[name] = r
		}
	}
	return out, nil
}

// TagSettings implements bizid.Store.
func (s *Store) TagSettings(context.Context) ([]bizid.Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]bizid.Settings, 0, len(s.settings))
	for _, set := range s.settings {
		out = append(out, set)
	}
	return out, nil
}

// EnsurePeriod implements bizid.Store.
func (s *Store) EnsurePeriod(ctx context.Context, tag, key string) error {
	s.mu.Lock()
	s.ensures++
	set, ok := s.settings[tag]
	s.mu.Unlock()
	if !ok {
		return segment.ErrUnknownTag
	}
	if key < set.PrunedBefore {
		return bizid.ErrPeriodClosed
	}
	base, err := s.Rows.Tag(ctx, tag)
	if err != nil {
		return err
	}
	_, err = s.Rows.CreateTag(ctx, segment.Tag{Name: bizid.RowName(tag, key), MaxID: 1, Step: base.Step})
	if errors.Is(err, segment.ErrTagExists) {
		return nil
	}
	return err
}

// PrunePeriods implements bizid.Store.
func (s *Store) PrunePeriods(ctx context.Context, tag, before string) (int, error) {
	s.mu.Lock()
	set := s.settings[tag]
	set.PrunedBefore = max(set.PrunedBefore, before)
	s.settings[tag] = set
	s.mu.Unlock()
	rows, err := s.Rows.Tags(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		if k, ok := strings.CutPrefix(r.Name, tag+bizid.RowSep); ok && len(k) == len(before) && k < set.PrunedBefore {
			s.Rows.Delete(r.Name)
			n++
		}
	}
	return n, nil
}

// CreateSpecialTag creates the row and its settings.
func (s *Store) CreateSpecialTag(ctx context.Context, t segment.Tag, set bizid.Settings) (segment.Tag, error) {
	set.Tag = t.Name
	if err := set.Validate(); err != nil {
		return segment.Tag{}, err
	}
	created, err := s.Rows.CreateTag(ctx, t)
	if err != nil {
		return segment.Tag{}, err
	}
	s.Rows.SetSpecial(t.Name) // as the real store's LookupTags says
	s.mu.Lock()
	s.settings[t.Name] = set
	s.mu.Unlock()
	return created, nil
}

// SetTagSettings gives a tag settings, or a new zone.
func (s *Store) SetTagSettings(ctx context.Context, old bizid.Settings, had bool, set bizid.Settings) error {
	if ok, err := s.exists(ctx, set.Tag); err != nil || !ok {
		return fmt.Errorf("%w: %q", segment.ErrUnknownTag, set.Tag)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, has := s.settings[set.Tag]
	if has != had || has && (cur.Format != old.Format || cur.Reset != old.Reset) {
		return fmt.Errorf("%w: the tag's settings changed meanwhile", bizid.ErrFixed)
	}
	if had {
		cur.TimeZone = set.TimeZone
		s.settings[set.Tag] = cur
		return nil
	}
	s.settings[set.Tag] = set
	s.Rows.SetSpecial(set.Tag)
	return nil
}

var _ bizid.Owner = (*Owner)(nil)

// Owner is the bizid.Owner of a lone instance: it owns every tag, and
// takes n numbers of a row at a time from the rows of Rows, none past the
// limit.
type Owner struct {
	Rows *segmenttest.MemStore

	mu   sync.Mutex // protects owns
	owns int
}

// Owns counts Own calls.
func (o *Owner) Owns() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owns
}

// Own implements bizid.Owner.
func (o *Owner) Own(context.Context, string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.owns++
	return nil
}

// NextRow implements bizid.Owner.
func (o *Owner) NextRow(ctx context.Context, _, row string, limit int64, n int) ([]int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, err := o.Rows.Tag(ctx, row)
	if err != nil {
		return nil, err
	}
	if limit > 0 && t.MaxID+int64(n)-1 > limit {
		return nil, &bizid.LeftError{Left: max(0, limit-t.MaxID+1)}
	}
	a, err := o.Rows.Allocate(ctx, row, int64(n))
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = a.Start() + int64(i)
	}
	return out, nil
}
