package segmenttest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/leafid/leaf/segment"
)

// Put adds t, or replaces the row of its name, as an INSERT or UPDATE from
// outside would: no rule is checked.
func (s *MemStore) Put(t segment.Tag) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[t.Name] = &t
}

// Delete removes the row of name, if any.
func (s *MemStore) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rows, name)
}

// Edit changes the row of name in place with f, under the store's lock: a
// failover that loses max_id, or an operator's fix of a step. It panics
// when there is no such row.
func (s *MemStore) Edit(name string, f func(*segment.Tag)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[name]
	if !ok {
		panic(fmt.Sprintf("segmenttest: Edit of %q, which has no row", name))
	}
	f(r)
}

// Tag returns the row of exactly this name, or segment.ErrUnknownTag.
func (s *MemStore) Tag(_ context.Context, name string) (segment.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return segment.Tag{}, s.fail
	}
	if r, ok := s.rows[name]; ok {
		return *r, nil
	}
	return segment.Tag{}, segment.ErrUnknownTag
}

// Tags returns every row, ordered by name.
func (s *MemStore) Tags(context.Context) ([]segment.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.fail != nil {
		return nil, s.fail
	}
	out := make([]segment.Tag, 0, len(s.rows))
	for _, r := range s.rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FindTags returns those of names that have a row of exactly that name,
// whatever SetFold says: a store keeps only the exact matches among what
// its collation finds.
func (s *MemStore) FindTags(ctx context.Context, names []string) ([]string, error) {
	s.mu.Lock()
	s.finds++
	s.findActive++
	s.findMost = max(s.findMost, s.findActive)
	block, began, fail := s.findBlock, s.findBegan, s.fail
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.findActive--
		s.mu.Unlock()
	}()
	if began != nil {
		began <- len(names)
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, n := range names {
		if _, ok := s.rows[n]; ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// CreateTag adds t after t.Validate and returns it as stored, or a
// *segment.ExistsError when a row has its name or one that differs from
// it only in case.
func (s *MemStore) CreateTag(_ context.Context, t segment.Tag) (segment.Tag, error) {
	if err := t.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return segment.Tag{}, s.fail
	}
	for name := range s.rows {
		if strings.EqualFold(name, t.Name) { // the stores' rule: unique whatever the case
			return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, &segment.ExistsError{Name: t.Name, Existing: name})
		}
	}
	t.UpdateTime = s.nowLocked()
	s.rows[t.Name] = &t
	return t, nil
}

// UpdateTag changes the fields of u that are set, after u.Validate, and
// returns the row as stored: segment.ErrUnknownTag without a row of
// exactly this name, segment.ErrInvalidMaxID for a max_id below the row's.
func (s *MemStore) UpdateTag(_ context.Context, name string, u segment.TagUpdate) (segment.Tag, error) {
	if err := u.Validate(); err != nil {
		return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return segment.Tag{}, s.fail
	}
	r, ok := s.rows[name]
	if !ok {
		return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, segment.ErrUnknownTag)
	}
	if u.MaxID != nil && *u.MaxID < r.MaxID {
		return segment.Tag{}, fmt.Errorf("update tag %q: %w: %d is below the current %d; max_id may only be raised",
			name, segment.ErrInvalidMaxID, *u.MaxID, r.MaxID)
	}
	if u.MaxID != nil {
		r.MaxID = *u.MaxID
	}
	if u.Step != nil {
		r.Step = *u.Step
	}
	if u.Description != nil {
		r.Description = *u.Description
	}
	r.UpdateTime = s.nowLocked()
	return *r, nil
}

func (s *MemStore) nowLocked() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now().UTC().Truncate(time.Second)
}
