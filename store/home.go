package store

import "context"

// HomeRows counts the sequence spaces, ordered tags and formatted or
// opaque tags the store holds: what lives in the home store of a set
// alone (storeset.Homing).
func (s *Store) HomeRows(ctx context.Context) (int, error) {
	spaces, err := s.Spaces(ctx)
	if err != nil {
		return 0, err
	}
	ordered, err := s.OrderedTags(ctx)
	if err != nil {
		return 0, err
	}
	settings, err := s.TagSettings(ctx)
	if err != nil {
		return 0, err
	}
	return len(spaces) + len(ordered) + len(settings), nil
}
