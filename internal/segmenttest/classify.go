package segmenttest

import (
	"context"

	"github.com/leafid/leaf/bizid"
)

// kind is what a row is beside its numbers, as the real stores keep it in
// other tables: ordered (a lease row) or special (settings).
type kind uint8

const (
	ordered kind = iota + 1
	special
)

// SetNotPlain makes LookupTags call tags ordered from now on, as a real
// store calls those with the lease row of an ordered tag.
func (s *MemStore) SetNotPlain(tags ...string) { s.setKind(ordered, tags) }

// SetSpecial makes LookupTags call tags special from now on, as a real
// store calls the formatted and opaque tags (bizidtest keeps their
// settings).
func (s *MemStore) SetSpecial(tags ...string) { s.setKind(special, tags) }

func (s *MemStore) setKind(k kind, tags []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kinds == nil {
		s.kinds = make(map[string]kind)
	}
	for _, t := range tags {
		s.kinds[t] = k
	}
}

// LookupTags says what each of names is, as a real store does (service.TagKinds):
// a name with a row is plain, ordered where SetNotPlain named it; what
// SetSpecial named is special, with the settings bizidtest keeps. A name
// without a row is absent.
func (s *MemStore) LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error) {
	out := make(map[string]bizid.Row)
	for _, name := range names {
		if _, err := s.Tag(ctx, name); err != nil {
			continue
		}
		s.mu.Lock()
		k := s.kinds[name]
		s.mu.Unlock()
		r := bizid.Row{Kind: bizid.Plain, Settings: bizid.Settings{Tag: name, Ordered: k == ordered}}
		if k == special {
			r.Kind = bizid.Special
		}
		out[name] = r
	}
	return out, nil
}
