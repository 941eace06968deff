package service

import (
	"context"
	"sync"
	"time"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// One rule for names: a new tag or space may not be named like an existing
// one once case and width are folded (NFKC, then full case folding, then
// NFKC again: "ＩＮＢＯＸ", "Inbox" and "inbox" are one name, as are "ß1"
// and "ss1"). Rows made before are left as they are.

// folded is the form two names are alike under.
func folded(name string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(name)))
}

// ascii reports whether name is plain ASCII, whose folded form is its
// lower case: the stores' own comparison already refuses such a name
// beside another that differs from it only in case.
func ascii(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return false
		}
	}
	return true
}

// alike is the first of names, other than name itself, that folds as name
// does; "" when none does.
func alike(name string, names []string) string {
	f := folded(name)
	for _, n := range names {
		if n != name && folded(n) == f {
			return n
		}
	}
	return ""
}

// refuseAlikeTag refuses a new tag whose name folds as an existing tag's
// does. For a name not plain ASCII every row is read, which a name of
// another script or width is worth. A plain ASCII name is compared with
// the tags whose names are not ASCII, read at most every
// nonASCIIFresh (foldedTags); beside ASCII ones the store refuses it
// itself, comparing case.
func (a *TagAdmin) refuseAlikeTag(ctx context.Context, name string) error {
	var other string
	if ascii(name) {
		byFold, err := a.nonASCII.read(ctx, a.Rows, time.Now())
		if err != nil {
			return err
		}
		other = byFold[folded(name)]
	} else {
		names, err := a.nonASCII.readAll(ctx, a.Rows, time.Now())
		if err != nil {
			return err
		}
		other = alike(name, names)
	}
	if other != "" {
		return Errorf(TagExists, "biz tag %q is named like the tag %q (names are one once case and width are folded); choose another name", name, other)
	}
	return nil
}

// nonASCIIFresh is how long the tags of names not ASCII, read for a new
// ASCII name, are used before they are read again.
const nonASCIIFresh = 10 * time.Second

// foldedTags keeps the folded names of the tags whose names are not plain
// ASCII, by folded name, from the last read of every tag.
type foldedTags struct {
	mu     sync.Mutex
	at     time.Time // of the last read; zero: none
	byFold map[string]string
}

// read returns the folded names, read again when older than
// nonASCIIFresh at now.
func (f *foldedTags) read(ctx context.Context, rows TagRows, now time.Time) (map[string]string, error) {
	f.mu.Lock()
	byFold, fresh := f.byFold, !f.at.IsZero() && now.Sub(f.at) < nonASCIIFresh
	f.mu.Unlock()
	if fresh {
		return byFold, nil
	}
	if _, err := f.readAll(ctx, rows, now); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byFold, nil
}

// readAll reads every tag's name, keeps the folded names of those not
// ASCII, and returns every name.
func (f *foldedTags) readAll(ctx context.Context, rows TagRows, now time.Time) ([]string, error) {
	tags, err := rows.Tags(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tags))
	byFold := map[string]string{}
	for i, t := range tags {
		names[i] = t.Name
		if !ascii(t.Name) {
			byFold[folded(t.Name)] = t.Name
		}
	}
	f.mu.Lock()
	f.at, f.byFold = now, byFold
	f.mu.Unlock()
	return names, nil
}

// forget has the next new ASCII name read the tags again: a tag of a name
// not ASCII was just made.
func (f *foldedTags) forget() {
	f.mu.Lock()
	f.at = time.Time{}
	f.mu.Unlock()
}

// refuseAlikeSpace refuses a new space whose name folds as an existing
// space's does.
func (s *Service) refuseAlikeSpace(ctx context.Context, name string) error {
	spaces, err := s.cfg.Spaces.Spaces(ctx)
	if err != nil {
		return err
	}
	names := make([]string, len(spaces))
	for i, sp := range spaces {
		names[i] = sp.Name
	}
	if other := alike(name, names); other != "" {
		return Errorf(SpaceExists, "sequence space %q is named like the space %q (names are one once case and width are folded); choose another name", name, other)
	}
	return nil
}
