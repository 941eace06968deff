package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
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

// SegmentID issues one id of tag, whatever kind of tag it is: a plain
// tag's from the allocator (the hot path: one call), a formatted or opaque
// tag's through the business ids, an ordered or capped tag's from its
// owner, here or asked through via.
func (s *Service) SegmentID(ctx context.Context, tag string, want Want, via Via) (ID, error) {
	if s.cfg.Segments == nil {
		return ID{}, ModeOff("segment")
	}
	if !s.cfg.Segments.Special(tag) {
		id, err := s.cfg.Segments.Next(ctx, tag)
		switch {
		case err == nil:
			return ID{N: id}, nil
		case !errors.Is(err, segment.ErrNotPlain):
			return ID{}, s.plainError(ctx, tag, err)
		}
	}
	if bt, err := s.bizTag(ctx, tag); err != nil {
		return ID{}, err
	} else if bt != nil {
		return s.bizID(ctx, tag, bt, want, via)
	}
	ids, err := s.fwd.NextOrdered(ctx, s.cfg.Ordered, tag, 1, forwarded(via))
	if err != nil {
		return ID{}, err
	}
	return ID{N: ids[0]}, nil
}

// SegmentIDs issues n ids of tag, as SegmentID issues one.
func (s *Service) SegmentIDs(ctx context.Context, tag string, n int, want Want, via Via) (IDs, error) {
	if s.cfg.Segments == nil {
		return IDs{}, ModeOff("segment")
	}
	if !s.cfg.Segments.Special(tag) {
		ids, err := s.cfg.Segments.NextN(ctx, tag, n)
		switch {
		case err == nil:
			return IDs{Nums: ids}, checkCount(len(ids), n)
		case !errors.Is(err, segment.ErrNotPlain):
			return IDs{}, s.plainError(ctx, tag, err)
		}
	}
	if bt, err := s.bizTag(ctx, tag); err != nil {
		return IDs{}, err
	} else if bt != nil {
		return s.bizIDs(ctx, tag, bt, n, want, via)
	}
	ids, err := s.fwd.NextOrdered(ctx, s.cfg.Ordered, tag, n, forwarded(via))
	if err != nil {
		return IDs{}, err
	}
	return IDs{Nums: ids}, nil
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
	if !s.cfg.Segments.Special(tag) {
		start, count, err := s.cfg.Segments.NextRange(ctx, tag, n)
		switch {
		case err == nil && (count < 1 || count > n):
			return 0, 0, fmt.Errorf("asked for a range of up to %d ids, got %d", n, count)
		case err == nil:
			return start, count, nil
		case !errors.Is(err, segment.ErrNotPlain):
			return 0, 0, s.plainError(ctx, tag, err)
		}
	}
	bt, err := s.bizTag(ctx, tag)
	switch {
	case err != nil:
		return 0, 0, err
	case bt != nil && bt.Opaque():
		return 0, 0, WithTag(tag, fmt.Errorf("%w: its ids are opaque: a range would be their numbers, which they hide, asked for one at a time or in batches", bizid.ErrNotNumeric))
	case bt != nil:
		return 0, 0, WithTag(tag, fmt.Errorf("%w: its ids are texts, asked for one at a time or in batches", bizid.ErrNotNumeric))
	}
	return 0, 0, RefuseOrderedRange(ctx, s.cfg.Ordered, tag, use)
}

// plainError is the allocator's error for tag as answered. A name
// without a row that is the row of a period of a formatted tag, not begun
// yet, is refused as that row is once the period has begun: never as a
// tag that does not exist.
func (s *Service) plainError(ctx context.Context, tag string, err error) error {
	if errors.Is(err, segment.ErrUnknownTag) {
		if _, _, ok := bizid.SplitRowName(tag); ok {
			if _, perr := s.bizTag(ctx, tag); perr != nil {
				return perr
			}
		}
	}
	return WithTag(tag, err)
}

// bizTag is the formatted or opaque tag of name, nil for another kind or
// where the business ids are off.
func (s *Service) bizTag(ctx context.Context, tag string) (*bizid.Tag, error) {
	if s.cfg.Biz == nil {
		return nil, nil
	}
	bt, err := s.cfg.Biz.Lookup(ctx, tag)
	if err != nil {
		return nil, WithTag(tag, err)
	}
	return bt, nil
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
