package bizid

import "context"

// periodRow returns a *PeriodRowError when name, which has no settings,
// is the row of a period of a formatted tag (made or still to be made): the
// Issuer never answers it as a tag of its own, so that none of the
// period's numbers goes out but as the tag's texts.
func (is *Issuer) periodRow(ctx context.Context, name string) error {
	tag, key, ok := SplitRowName(name)
	if !ok {
		return nil
	}
	t, err := is.Lookup(ctx, tag)
	if err != nil || t == nil || !t.PeriodKey(key) {
		return err
	}
	return &PeriodRowError{Row: name, Tag: tag, Key: key}
}
