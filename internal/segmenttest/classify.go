package segmenttest

import (
	"context"

	"github.com/leafid/leaf/segment"
)

// SetNotPlain makes Classify call tags refused from now on, as a real
// store calls the ordered tags.
func (s *MemStore) SetNotPlain(tags ...string) { s.setKind(segment.Refused, tags) }

// SetSpecial makes Classify call tags special from now on, as a real store
// calls the formatted and opaque tags.
func (s *MemStore) SetSpecial(tags ...string) { s.setKind(segment.Special, tags) }

func (s *MemStore) setKind(k segment.Kind, tags []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kinds == nil {
		s.kinds = make(map[string]segment.Kind)
	}
	for _, t := range tags {
		s.kinds[t] = k
	}
}

// Classify returns the kinds SetNotPlain and SetSpecial gave those of tags.
func (s *MemStore) Classify(_ context.Context, tags []string) (map[string]segment.Kind, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]segment.Kind)
	for _, t := range tags {
		if k, ok := s.kinds[t]; ok {
			out[t] = k
		}
	}
	return out, nil
}
