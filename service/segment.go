package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/sequence"
)

// Via is how a request reached this instance: Forwarded says it was
// forwarded here by another instance already, and is then refused rather
// than sent on should its tag's or key's owner be another instance. A nil
// Via came directly.
type Via interface {
	Forwarded() bool
}

// Want is what the caller can answer with. TextsRefused, when not nil, is
// the error to answer for a formatted tag, whose ids are texts, before any
// is issued: the caller can only carry numbers.
type Want struct {
	TextsRefused error
}

// ID is one id of a segment tag: N, or Text for a formatted tag.
type ID struct {
	N    int64
	Text string
}

// IDs are the ids of a batch, increasing where the tag's ids are: Nums, or
// Texts for a formatted tag.
type IDs struct {
	Nums  []int64
	Texts []string
}

// SegmentID issues one id of tag, whatever kind of tag it is (the
// registry says, once): a plain tag's from the allocator (the hot path:
// one look-up and one call), a formatted or opaque tag's through the
// business ids, an ordered tag's from its owner, here or asked through
// via.
func (s *Service) SegmentID(ctx context.Context, tag string, want Want, via Via) (ID, error) {
	if s.cfg.Segments == nil {
		return ID{}, ModeOff("segment")
	}
	if k := s.cfg.Kinds; k == nil || k.lookup(tag) == nil && !mayBeRowName(tag) {
		// The hot path: a plain tag with a buffer, found in one look-up.
		if id, loaded, err := s.cfg.Segments.NextLoaded(ctx, tag); loaded {
			return ID{N: id}, WithTag(tag, err)
		}
	}
	e, err := s.kindOf(ctx, tag)
	if err != nil {
		return ID{}, err
	}
	switch e.kind {
	case kindBiz:
		return s.bizID(ctx, tag, e.biz, want, via)
	case kindOrdered:
		ids, err := s.fwd.NextOrdered(ctx, s.cfg.Ordered, tag, 1, forwarded(via))
		if err != nil {
			return ID{}, err
		}
		return ID{N: ids[0]}, nil
	case kindPeriodRow:
		return ID{}, WithTag(tag, e.err)
	}
	id, err := s.cfg.Segments.Next(ctx, tag)
	if err != nil {
		return ID{}, WithTag(tag, err)
	}
	return ID{N: id}, nil
}

// SegmentIDs issues n ids of tag, as SegmentID issues one.
func (s *Service) SegmentIDs(ctx context.Context, tag string, n int, want Want, via Via) (IDs, error) {
	if s.cfg.Segments == nil {
		return IDs{}, ModeOff("segment")
	}
	e, err := s.kindOf(ctx, tag)
	if err != nil {
		return IDs{}, err
	}
	switch e.kind {
	case kindBiz:
		return s.bizIDs(ctx, tag, e.biz, n, want, via)
	case kindOrdered:
		ids, err := s.fwd.NextOrdered(ctx, s.cfg.Ordered, tag, n, forwarded(via))
		if err != nil {
			return IDs{}, err
		}
		return IDs{Nums: ids}, nil
	case kindPeriodRow:
		return IDs{}, WithTag(tag, e.err)
	}
	ids, err := s.cfg.Segments.NextN(ctx, tag, n)
	if err != nil {
		return IDs{}, WithTag(tag, err)
	}
	return IDs{Nums: ids}, checkCount(len(ids), n)
}

// SegmentRange takes up to n consecutive ids of a plain tag, [start,
// start+count). A formatted or opaque tag's range is refused (its ids are
// texts, or hide their numbers), and so is an ordered tag's (a range
// handed out whole would be used out of order with its owner's later
// ids); use names the caller's calls that serve such tags.
func (s *Service) SegmentRange(ctx context.Context, tag string, n int, use string) (start int64, count int, err error) {
	if s.cfg.Segments == nil {
		return 0, 0, ModeOff("segment")
	}
	e, err := s.kindOf(ctx, tag)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case e.kind == kindBiz && e.biz.Opaque():
		return 0, 0, WithTag(tag, fmt.Errorf("%w: its ids are opaque: a range would be their numbers, which they hide, asked for one at a time or in batches", bizid.ErrNotNumeric))
	case e.kind == kindBiz:
		return 0, 0, WithTag(tag, fmt.Errorf("%w: its ids are texts, asked for one at a time or in batches", bizid.ErrNotNumeric))
	case e.kind == kindOrdered && s.cfg.Ordered == nil:
		return 0, 0, orderedOff(tag)
	case e.kind == kindOrdered:
		return 0, 0, Errorf(InvalidRequest, "biz tag %q is ordered: its ids are issued one by one by its owner, never as ranges; use %s", tag, use)
	case e.kind == kindPeriodRow:
		return 0, 0, WithTag(tag, e.err)
	}
	if n > s.cfg.RangeMax {
		n = s.cfg.RangeMax
		s.clamped.WithLabelValues("range_count").Inc()
	}
	start, count, err = s.cfg.Segments.NextRange(ctx, tag, n)
	switch {
	case err != nil:
		return 0, 0, WithTag(tag, err)
	case count < 1 || count > n:
		return 0, 0, fmt.Errorf("asked for a range of up to %d ids, got %d", n, count)
	}
	return start, count, nil
}

// mayBeRowName reports whether name may be the row of a period
// (bizid.SplitRowName): only a name with the separator may.
func mayBeRowName(name string) bool { return strings.IndexByte(name, bizid.RowSep[0]) >= 0 }

// kindOf is what the registry says tag is, looked up once per request: a
// tag that is not plain is kept there; a plain tag's record is its buffer
// in the allocator, made only after the registry read its row plain (but
// for names like a period's row, which the business ids number in the
// allocator too: the registry tells those from their tag); any other name
// is read from the store, with the others asked for meanwhile, and one
// without a row is an unknown tag. Every tag is plain without a registry,
// and so is a formatted or opaque one where the business ids are off.
func (s *Service) kindOf(ctx context.Context, tag string) (*tagEntry, error) {
	k := s.cfg.Kinds
	if k == nil {
		return plainEntry, nil
	}
	if k.lookup(tag) == nil && !mayBeRowName(tag) && s.cfg.Segments.Loaded(tag) {
		return plainEntry, nil
	}
	e, err := k.kind(ctx, tag)
	if err != nil {
		return nil, WithTag(tag, err)
	}
	if e.kind == kindBiz && (s.cfg.Biz == nil || e.biz == nil) {
		return plainEntry, nil
	}
	return e, nil
}

// bizID issues one id of a formatted or opaque tag: a formatted tag
// served by one owner that another instance owns is asked there.
func (s *Service) bizID(ctx context.Context, tag string, bt *bizid.Tag, want Want, via Via) (ID, error) {
	if !bt.Formatted() {
		id, err := s.cfg.Biz.Next(ctx, bt)
		if err != nil {
			return ID{}, WithTag(tag, err)
		}
		return ID{N: id.N}, nil
	}
	if want.TextsRefused != nil {
		return ID{}, want.TextsRefused
	}
	id, err := s.cfg.Biz.Next(ctx, bt)
	if err != nil {
		texts, err := s.ownerTexts(ctx, tag, 1, err, via)
		if err != nil {
			return ID{}, err
		}
		return ID{Text: texts[0]}, nil
	}
	return ID{Text: id.Text}, nil
}

// bizIDs is bizID for a batch.
func (s *Service) bizIDs(ctx context.Context, tag string, bt *bizid.Tag, n int, want Want, via Via) (IDs, error) {
	if bt.Formatted() && want.TextsRefused != nil {
		return IDs{}, want.TextsRefused
	}
	// A call for more than a whole period is sequence_full, as before;
	// one for a share of it larger than a call may take, invalid_count.
	if c := bt.Capacity(); c > 0 && int64(n) <= c && int64(n) > cappedMost(c, s.cfg.CappedShare) {
		s.limited.WithLabelValues("capped_share").Inc()
		return IDs{}, Errorf(InvalidCount, "biz tag %q is capped at %d numbers a period, and one call may take at most %d of them (--capped-share %g): ask for fewer",
			tag, c, cappedMost(c, s.cfg.CappedShare), s.cfg.CappedShare)
	}
	ids, err := s.cfg.Biz.NextN(ctx, bt, n)
	if err != nil {
		texts, err := s.ownerTexts(ctx, tag, n, err, via)
		return IDs{Texts: texts}, err
	}
	if err := checkCount(len(ids), n); err != nil {
		return IDs{}, err
	}
	var out IDs
	if bt.Formatted() {
		out.Texts = make([]string, len(ids))
		for i, id := range ids {
			out.Texts[i] = id.Text
		}
		return out, nil
	}
	out.Nums = make([]int64, len(ids))
	for i, id := range ids {
		out.Nums[i] = id.N
	}
	return out, nil
}

// ownerTexts takes n ids of a formatted tag from its owner when err says
// another instance owns it (only a formatted tag served by one owner says
// so), and answers err otherwise.
func (s *Service) ownerTexts(ctx context.Context, tag string, n int, err error, via Via) ([]string, error) {
	var no *sequence.NotOwnerError
	if errors.As(err, &no) && s.fwd != nil {
		return s.fwd.tagTexts(ctx, no.Addr, tag, n, forwarded(via))
	}
	return nil, WithTag(tag, err)
}

// checkCount checks that a batch got the count asked for.
func checkCount(got, asked int) error {
	if got != asked {
		return fmt.Errorf("asked for %d ids, got %d", asked, got)
	}
	return nil
}

func forwarded(v Via) bool { return v != nil && v.Forwarded() }
