package storeset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/leafid/leaf/segment"
)

// Add makes the store named name a member of the set the stores record
// (leaf store add): every store given must be a member but it, and it
// must hold nothing of what lives in the home store alone. First it is
// given the plain tags the members have, with their steps and
// descriptions (copied: those it did not have), so that it serves them
// once the change gives it its class. An add left half way is finished
// by running it again.
func Add(ctx context.Context, named []Named, name string) (set Set, copied []segment.Tag, err error) {
	i := slices.IndexFunc(named, func(n Named) bool { return n.Name == name })
	if i < 0 {
		return Set{}, nil, fmt.Errorf("store %q is not given", name)
	}
	old, recs, errs, err := current(ctx, named, name)
	if err != nil {
		return Set{}, nil, err
	}
	_, member := old.Member(name)
	if member && settled(named, old, recs, errs) {
		return Set{}, nil, fmt.Errorf("store %q is in the set already (version %d)", name, old.Version)
	}
	if !member {
		if err := refuseHomeRows(ctx, named[i]); err != nil {
			return Set{}, nil, err
		}
	}
	if copied, err = copyTags(ctx, named, old, named[i]); err != nil {
		return Set{}, copied, err
	}
	names := old.Names()
	if !member {
		names = append(names, name)
	}
	set, err = Change(ctx, named, names, false)
	return set, copied, err
}

// Retire takes the store named name out of the set the stores record
// (leaf store retire). Every member must answer, but the one retired
// when force is true: see Change.
func Retire(ctx context.Context, named []Named, name string, force bool) (Set, error) {
	old, _, _, err := current(ctx, named, "")
	if err != nil {
		return Set{}, err
	}
	if _, member := old.Member(name); !member {
		return Set{}, fmt.Errorf("store %q is not in the set (version %d: %s)", name, old.Version, strings.Join(old.Names(), ", "))
	}
	names := slices.DeleteFunc(old.Names(), func(n string) bool { return n == name })
	if len(names) == 0 {
		return Set{}, fmt.Errorf("store %q is the last of the set: a set keeps at least one store", name)
	}
	return Change(ctx, named, names, force)
}

// current is the set the stores record now, checked against the stores
// given: every one is a member, but adding, the store added. A store given
// that is not in the set would be marked retired by the change, whatever
// set it belongs to. recs and errs are what each store answered.
func current(ctx context.Context, named []Named, adding string) (set Set, recs []Record, errs []error, err error) {
	recs, errs = records(ctx, named)
	set, ok, err := Newest(recs, errs, true)
	if err != nil {
		return Set{}, nil, nil, err
	}
	if !ok {
		return Set{}, nil, nil, fmt.Errorf("%w: no store given belongs to a set: make one with `leaf store init`", ErrMismatch)
	}
	for _, n := range named {
		if _, member := set.Member(n.Name); !member && n.Name != adding {
			return Set{}, nil, nil, fmt.Errorf("%w: store %q is given but not in the set (version %d: %s); leave it out",
				ErrMismatch, n.Name, set.Version, strings.Join(set.Names(), ", "))
		}
	}
	return set, recs, errs, nil
}

// settled reports whether every member of set that is given answered
// (recs, errs) and records it, active: no change of the set is left half
// way.
func settled(named []Named, set Set, recs []Record, errs []error) bool {
	for i, n := range named {
		if _, member := set.Member(n.Name); member && (errs[i] != nil || recs[i].Version != set.Version || recs[i].State != Active) {
			return false
		}
	}
	return true
}

// copyTags creates in the store to the plain tags the members of set have
// and it has not, and returns those it created. A row's max_id is copied
// too, though the class's floor lies above it anyway.
func copyTags(ctx context.Context, named []Named, set Set, to Named) ([]segment.Tag, error) {
	tags, err := to.Store.Tags(ctx)
	if err != nil {
		return nil, fmt.Errorf("store %q: %w", to.Name, err)
	}
	have := map[string]bool{}
	for _, t := range tags {
		have[t.Name] = true
	}
	var rows []segment.Tag
	for _, n := range named {
		if _, member := set.Member(n.Name); !member || n.Name == to.Name {
			continue
		}
		plain, err := plainTags(ctx, n)
		if err != nil {
			return nil, err
		}
		for _, t := range plain {
			if !have[t.Name] {
				have[t.Name] = true
				rows = append(rows, t)
			}
		}
	}
	var created []segment.Tag
	for _, t := range rows {
		c, err := to.Store.CreateTag(ctx, segment.Tag{Name: t.Name, MaxID: t.MaxID, Step: t.Step, Description: t.Description})
		if errors.Is(err, segment.ErrTagExists) {
			continue
		}
		if err != nil {
			return created, fmt.Errorf("copy tag %q to store %q: %w", t.Name, to.Name, err)
		}
		created = append(created, c)
	}
	return created, nil
}

// plainTags are the rows of the store n that are plain tags: the others
// live in the home store alone (home.go).
func plainTags(ctx context.Context, n Named) ([]segment.Tag, error) {
	tags, err := n.Store.Tags(ctx)
	if err != nil {
		return nil, fmt.Errorf("store %q: %w", n.Name, err)
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.Name
	}
	rows, err := n.Store.LookupTags(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("store %q: %w", n.Name, err)
	}
	return slices.DeleteFunc(tags, func(t segment.Tag) bool { return !rows[t.Name].Plain() }), nil
}

// refuseHomeRows refuses a store, not the home of its set, that holds what
// lives in the home store alone: sequence spaces, ordered tags, formatted
// and opaque tags. Their rows would be numbered in that store's class, and
// their settings missed.
func refuseHomeRows(ctx context.Context, n Named) error {
	count, err := n.Store.HomeRows(ctx)
	if err != nil {
		return fmt.Errorf("store %q: %w", n.Name, err)
	}
	if count > 0 {
		return fmt.Errorf("%w: store %q holds sequence spaces, ordered tags or formatted or opaque tags (%d), which live in the home store of a set alone: only the home (the first store of leaf store init) may hold them",
			ErrMismatch, n.Name, count)
	}
	return nil
}
