package storeset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/leafid/leaf/segment"
)

// Tag returns the tag's row from the first store that has it. A tag no
// store that answered has is unknown, unless the home store did not
// answer: it may hold the row alone.
func (s *Stores) Tag(ctx context.Context, tag string) (segment.Tag, error) {
	if s.lone != nil {
		return s.lone.Tag(ctx, tag)
	}
	home, _ := s.home()
	var errs []error
	var homeErr error
	for _, m := range s.members {
		t, err := m.st.Tag(ctx, tag)
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, segment.ErrUnknownTag) {
			errs = append(errs, fmt.Errorf("store %q: %w", m.name, err))
			if m == home {
				homeErr = homeMissing(m, err)
			}
		}
	}
	switch {
	case len(errs) == len(s.members):
		return segment.Tag{}, errors.Join(errs...)
	case homeErr != nil:
		return segment.Tag{}, fmt.Errorf("read tag %q: %w", tag, homeErr)
	}
	return segment.Tag{}, fmt.Errorf("read tag %q: %w", tag, segment.ErrUnknownTag)
}

// Tags returns the tags of every store that answers, each once (as the
// first store in the configured order has it), ordered by name. Without
// the home store the list would leave out the rows only it holds (the
// formatted and opaque tags and their periods), which a reader would take
// for gone: then it fails.
func (s *Stores) Tags(ctx context.Context) ([]segment.Tag, error) {
	if s.lone != nil {
		return s.lone.Tags(ctx)
	}
	home, _ := s.home()
	byName := map[string]segment.Tag{}
	var errs []error
	for i := len(s.members) - 1; i >= 0; i-- {
		m := s.members[i]
		tags, err := m.st.Tags(ctx)
		if err != nil {
			if m == home {
				return nil, homeMissing(m, err)
			}
			errs = append(errs, err)
			continue
		}
		for _, t := range tags {
			byName[t.Name] = t
		}
	}
	if len(errs) == len(s.members) {
		return nil, errors.Join(errs...)
	}
	out := make([]segment.Tag, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out, nil
}

// FindTags returns those of names that some store that answers has. A
// name no store that answered has, when the home store did not answer,
// may be a row only the home store holds: then it fails.
func (s *Stores) FindTags(ctx context.Context, names []string) ([]string, error) {
	if s.lone != nil {
		return s.lone.FindTags(ctx, names)
	}
	home, _ := s.home()
	found := map[string]bool{}
	var errs []error
	var homeErr error
	for _, m := range s.members {
		got, err := m.st.FindTags(ctx, names)
		if err != nil {
			if m == home {
				homeErr = homeMissing(m, err)
			}
			errs = append(errs, err)
			continue
		}
		for _, n := range got {
			found[n] = true
		}
	}
	if len(errs) == len(s.members) {
		return nil, errors.Join(errs...)
	}
	if homeErr != nil && len(found) < len(names) {
		return nil, homeErr
	}
	return slices.Collect(maps.Keys(found)), nil
}

// homeMissing is the error of a read of every store's rows that the home
// store m did not answer.
func homeMissing(m *member, err error) error {
	return fmt.Errorf("%w: the home store %q holds the rows of formatted and opaque tags and of their periods, and did not answer: %w", segment.ErrStoreUnavailable, m.name, err)
}

// CreateTag creates the tag in every store that answers; it is
// segment.ErrTagExists when any of them has it already. A store that did
// not answer gets the row when a load first finds it missing there (see
// copyRow). The home store must answer, and is written first: it alone
// holds the formatted, opaque and ordered tags, one of which may have the
// name, or be created under it meanwhile; then no other store gets a row.
func (s *Stores) CreateTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	if s.lone != nil {
		return s.lone.CreateTag(ctx, t)
	}
	switch _, err := s.Tag(ctx, t.Name); {
	case err == nil:
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, segment.ErrTagExists)
	case !errors.Is(err, segment.ErrUnknownTag):
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	home, err := s.home()
	if err != nil {
		return segment.Tag{}, fmt.Errorf("create tag %q: %w", t.Name, err)
	}
	created, err := home.st.CreateTag(ctx, t)
	if err != nil {
		return segment.Tag{}, fmt.Errorf("store %q: %w", home.name, err)
	}
	for _, m := range s.members {
		if m != home {
			_, _ = m.st.CreateTag(ctx, t) // a store that refuses gets the row at its first load
		}
	}
	return created, nil
}

// UpdateTag changes the tag in every store that has it.
func (s *Stores) UpdateTag(ctx context.Context, name string, u segment.TagUpdate) (segment.Tag, error) {
	if s.lone != nil {
		return s.lone.UpdateTag(ctx, name, u)
	}
	var (
		updated segment.Tag
		errs    []error
		ok      bool
	)
	for _, m := range s.members {
		t, err := m.st.UpdateTag(ctx, name, u)
		switch {
		case err == nil:
			if !ok {
				updated, ok = t, true
			}
		case errors.Is(err, segment.ErrUnknownTag):
		default:
			errs = append(errs, fmt.Errorf("store %q: %w", m.name, err))
		}
	}
	if !ok {
		if len(errs) == 0 {
			return segment.Tag{}, fmt.Errorf("update tag %q: %w", name, segment.ErrUnknownTag)
		}
		return segment.Tag{}, errors.Join(errs...)
	}
	return updated, errors.Join(errs...)
}
