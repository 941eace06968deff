package bizid

import (
	"context"
	"fmt"
)

// Prune closes, for every tag that resets, the periods that ended more
// than the grace ago, and deletes their rows. It says how many rows it
// deleted, and returns the settings of the tags whose pruned mark it
// raised, to compile them by (Compile).
func (is *Issuer) Prune(ctx context.Context) (int, []Settings, error) {
	all, err := is.opts.Store.TagSettings(ctx)
	if err != nil {
		return 0, nil, err
	}
	var raised []Settings
	total := 0
	for _, s := range all {
		r, _ := ParseReset(string(s.Reset))
		if !s.Formatted() || r == Never {
			continue
		}
		loc, err := s.Location()
		if err != nil {
			continue
		}
		before := r.key(is.opts.Now().Add(-is.opts.Grace).In(loc))
		n, err := is.opts.Store.PrunePeriods(ctx, s.Tag, before)
		total += n
		if err != nil {
			return total, raised, fmt.Errorf("prune tag %q: %w", s.Tag, err)
		}
		s.PrunedBefore = max(s.PrunedBefore, before)
		raised = append(raised, s)
	}
	return total, raised, nil
}
