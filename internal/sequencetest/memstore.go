// Package sequencetest provides an in-memory sequence.Store for tests:
// MemStore, the tables of spaces, members and sections held in maps, by the
// rules of the real stores, with its own clock (the "database's") and a
// knob that makes every call fail.
package sequencetest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/leafid/leaf/sequence"
)

// MemStore is an in-memory sequence.Store. Its clock is now, which the
// test moves; leases and heartbeats run out by it.
type MemStore struct {
	mu       sync.Mutex // protects the fields below
	now      func() time.Time
	spaces   map[string]sequence.Space
	members  map[string]memberRow
	sections map[sectionKey]*sectionRow
	fail     error
	raises   int
}

type memberRow struct {
	addr    string
	expires time.Time
}

type sectionKey struct {
	space   string
	section int
}

type sectionRow struct {
	maxSeq  int64
	holder  string
	addr    string
	expires time.Time
}

var _ sequence.Store = (*MemStore)(nil)

// NewMemStore returns an empty store whose clock is now.
func NewMemStore(now func() time.Time) *MemStore {
	return &MemStore{
		now:      now,
		spaces:   make(map[string]sequence.Space),
		members:  make(map[string]memberRow),
		sections: make(map[sectionKey]*sectionRow),
	}
}

// Fail makes every call return err from now on; nil heals the store.
func (m *MemStore) Fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

// Raises counts the raises of max_seq that succeeded.
func (m *MemStore) Raises() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.raises
}

// MaxSeq is a section's max_seq.
func (m *MemStore) MaxSeq(space string, section int) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sections[sectionKey{space, section}].maxSeq
}

// Holder is the member id holding a section's lease, live or not.
func (m *MemStore) Holder(space string, section int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sections[sectionKey{space, section}].holder
}

func (m *MemStore) CreateSpace(_ context.Context, s sequence.Space) (sequence.Space, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return sequence.Space{}, m.fail
	}
	if err := s.Validate(); err != nil {
		return sequence.Space{}, err
	}
	if _, ok := m.spaces[s.Name]; ok {
		return sequence.Space{}, sequence.ErrSpaceExists
	}
	m.spaces[s.Name] = s
	for i := range s.Sections {
		m.sections[sectionKey{s.Name, i}] = &sectionRow{}
	}
	return s, nil
}

func (m *MemStore) Space(_ context.Context, name string) (sequence.Space, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return sequence.Space{}, m.fail
	}
	s, ok := m.spaces[name]
	if !ok {
		return sequence.Space{}, sequence.ErrUnknownSpace
	}
	return s, nil
}

func (m *MemStore) Spaces(context.Context) ([]sequence.Space, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	out := make([]sequence.Space, 0, len(m.spaces))
	for _, s := range m.spaces {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (m *MemStore) Heartbeat(_ context.Context, mb sequence.Member, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.members[mb.ID] = memberRow{addr: mb.Addr, expires: m.now().Add(ttl)}
	return nil
}

func (m *MemStore) Leave(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	delete(m.members, id)
	return nil
}

func (m *MemStore) Members(context.Context) ([]sequence.Member, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	now := m.now()
	var out []sequence.Member
	for id, r := range m.members {
		if r.expires.After(now) {
			out = append(out, sequence.Member{ID: id, Addr: r.addr})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *MemStore) Sections(context.Context) ([]sequence.SectionRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	now := m.now()
	out := make([]sequence.SectionRow, 0, len(m.sections))
	for k, r := range m.sections {
		row := sequence.SectionRow{Space: k.space, Section: k.section, Holder: r.holder, Addr: r.addr, Live: r.expires.After(now)}
		if row.Live {
			row.Left = r.expires.Sub(now)
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Space != out[j].Space {
			return out[i].Space < out[j].Space
		}
		return out[i].Section < out[j].Section
	})
	return out, nil
}

func (m *MemStore) RenewSections(_ context.Context, holder string, ttl time.Duration) error {
	return m.eachHeld(holder, func(r *sectionRow) { r.expires = m.now().Add(ttl) })
}

// eachHeld calls f with every section row holder holds, unless the store
// fails.
func (m *MemStore) eachHeld(holder string, f func(*sectionRow)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	for _, r := range m.sections {
		if r.holder == holder {
			f(r)
		}
	}
	return nil
}

func (m *MemStore) AcquireSection(_ context.Context, space string, section int, mb sequence.Member, ttl time.Duration) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return 0, false, m.fail
	}
	r, ok := m.sections[sectionKey{space, section}]
	if !ok {
		return 0, false, fmt.Errorf("no section %d of %q", section, space)
	}
	now := m.now()
	if r.expires.After(now) && r.holder != mb.ID {
		return 0, false, nil
	}
	r.holder, r.addr, r.expires = mb.ID, mb.Addr, now.Add(ttl)
	return r.maxSeq, true, nil
}

func (m *MemStore) AcquireSections(ctx context.Context, secs []sequence.SectionID, mb sequence.Member, ttl time.Duration) ([]sequence.Acquired, error) {
	out := make([]sequence.Acquired, len(secs))
	for i, id := range secs {
		v, ok, err := m.AcquireSection(ctx, id.Space, id.Section, mb, ttl)
		if err != nil {
			return nil, err
		}
		out[i] = sequence.Acquired{MaxSeq: v, OK: ok}
	}
	return out, nil
}

func (m *MemStore) ReleaseSections(_ context.Context, holder string) error {
	return m.eachHeld(holder, func(r *sectionRow) { r.holder, r.addr, r.expires = "", "", time.Time{} })
}

func (m *MemStore) ReleaseSection(_ context.Context, space string, section int, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if r, ok := m.sections[sectionKey{space, section}]; ok && r.holder == holder {
		r.holder, r.addr, r.expires = "", "", time.Time{}
	}
	return nil
}

func (m *MemStore) RaiseMax(_ context.Context, space string, section int, holder string, by int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return 0, m.fail
	}
	r, ok := m.sections[sectionKey{space, section}]
	switch {
	case !ok || r.holder != holder:
		return 0, sequence.ErrLeaseLost
	case r.maxSeq > math.MaxInt64-by:
		return 0, sequence.ErrExhausted
	}
	r.maxSeq += by
	m.raises++
	return r.maxSeq, nil
}

// OrderedTags are the tags created with CreateOrderedTag; tags of
// PlainTag exist and are not ordered. RaiseRow raises a tag's row by step,
// rows starting at max_id 1 as leaf_alloc's do.
type OrderedTags struct {
	mu      sync.Mutex // protects the fields below
	step    int64
	rows    map[string]int64 // max_id
	ordered map[string]bool
	raises  int
	store   *MemStore
}

var (
	_ sequence.OrderedStore = (*OrderedTags)(nil)
	_ sequence.TagRows      = (*OrderedTags)(nil)
)

// NewOrderedTags returns tags whose rows live beside store's sections.
func NewOrderedTags(store *MemStore, step int64) *OrderedTags {
	return &OrderedTags{step: step, rows: map[string]int64{}, ordered: map[string]bool{}, store: store}
}

// Create makes a tag's row, ordered or not; an ordered one gets its lease
// row among the store's sections.
func (o *OrderedTags) Create(tag string, ordered bool) {
	o.mu.Lock()
	o.rows[tag], o.ordered[tag] = 1, ordered
	o.mu.Unlock()
	if ordered {
		o.store.mu.Lock()
		o.store.sections[sectionKey{tag, sequence.OrderedSection}] = &sectionRow{}
		o.store.mu.Unlock()
	}
}

func (o *OrderedTags) OrderedTags(context.Context) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for t, ord := range o.ordered {
		if ord {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (o *OrderedTags) TagOrdered(_ context.Context, tag string) (bool, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, exists := o.rows[tag]
	return exists, o.ordered[tag], nil
}

func (o *OrderedTags) EnsureOrdered(_ context.Context, tag string) error {
	o.mu.Lock()
	_, exists := o.rows[tag]
	if exists {
		o.ordered[tag] = true
	}
	o.mu.Unlock()
	if !exists {
		return fmt.Errorf("no tag %q", tag)
	}
	o.store.mu.Lock()
	if _, ok := o.store.sections[sectionKey{tag, sequence.OrderedSection}]; !ok {
		o.store.sections[sectionKey{tag, sequence.OrderedSection}] = &sectionRow{}
	}
	o.store.mu.Unlock()
	return nil
}

// RaiseRow raises a row by step (or atLeast where more), or less up to
// limit; a row not created (a period's) starts at max_id 1.
func (o *OrderedTags) RaiseRow(_ context.Context, row string, limit, atLeast int64) (int64, int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	maxID, ok := o.rows[row]
	if !ok {
		maxID = 1
	}
	by := max(o.step, atLeast)
	if limit > 0 {
		if maxID > limit {
			return 0, 0, sequence.ErrFull
		}
		by = min(by, limit+1-maxID)
	}
	o.rows[row] = maxID + by
	o.raises++
	return maxID, maxID + by - 1, nil
}

func (o *OrderedTags) HandBack(_ context.Context, row string, end, first int64) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.rows[row] != end {
		return false, nil
	}
	o.rows[row] = first
	return true, nil
}

// MaxID is a row's max_id.
func (o *OrderedTags) MaxID(row string) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.rows[row]
}

// Raises is how many raises the rows had.
func (o *OrderedTags) Raises() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.raises
}

// SetMaxID sets a tag's max_id: its next range starts there.
func (o *OrderedTags) SetMaxID(tag string, maxID int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rows[tag] = maxID
}
