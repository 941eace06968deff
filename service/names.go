package service

import (
	"context"

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

// refuseAlikeTag refuses a new tag whose name is not plain ASCII and folds
// as an existing tag's does. An ASCII name is left to the store, which
// compares case: every row is read here, which a name of another script
// or width is worth and a common one is not.
func (a *TagAdmin) refuseAlikeTag(ctx context.Context, name string) error {
	if ascii(name) {
		return nil
	}
	tags, err := a.Rows.Tags(ctx)
	if err != nil {
		return err
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.Name
	}
	if other := alike(name, names); other != "" {
		return Errorf(TagExists, "biz tag %q is named like the tag %q (names are one once case and width are folded); choose another name", name, other)
	}
	return nil
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
