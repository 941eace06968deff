package service_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// TestSegmentKinds: one call issues the ids of every kind of tag, each in
// its own shape: a plain tag's numbers, a formatted tag's texts (refused
// where the caller carries numbers only), an opaque tag's hidden numbers,
// an ordered tag's from its owner; a range only of a plain tag.
func TestSegmentKinds(t *testing.T) {
	ctx := context.Background()
	p := newParts(t, true)
	svc := service.New(service.Config{Segments: p.alloc, Kinds: p.kinds, Tags: p.rows, Biz: p.is, BizTags: p.biz, Ordered: p.rows})
	for _, n := range []service.NewTag{
		{Name: "invoices", Settings: service.TagSettings{Format: ptr("INV-{seq}")}},
		{Name: "users", Settings: service.TagSettings{Opaque: ptr(int64(63))}},
		{Name: "ticks", Ordered: true},
	} {
		if _, err := svc.Tags().Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	numbers := errors.New("this caller carries numbers only")

	if id, err := svc.SegmentID(ctx, "orders", service.Want{TextsRefused: numbers}, nil); err != nil || id.N != 1 || id.Text != "" {
		t.Fatalf("plain = %+v, %v", id, err)
	}
	if id, err := svc.SegmentID(ctx, "invoices", service.Want{}, nil); err != nil || id.Text != "INV-1" {
		t.Fatalf("formatted = %+v, %v", id, err)
	}
	if id, err := svc.SegmentID(ctx, "invoices", service.Want{TextsRefused: numbers}, nil); !errors.Is(err, numbers) {
		t.Fatalf("formatted to a caller of numbers = %+v, %v", id, err)
	}
	if id, err := svc.SegmentID(ctx, "users", service.Want{}, nil); err != nil || id.N < 1<<32 || id.Text != "" {
		t.Fatalf("opaque = %+v, %v; want a number that hides the count", id, err)
	}
	first, err := svc.SegmentID(ctx, "ticks", service.Want{}, nil)
	if err != nil {
		t.Fatalf("ordered: %v", err)
	}
	if ids, err := svc.SegmentIDs(ctx, "ticks", 3, service.Want{}, nil); err != nil || len(ids.Nums) != 3 || ids.Nums[0] <= first.N || ids.Nums[2] != ids.Nums[0]+2 {
		t.Fatalf("ordered batch after %d = %+v, %v", first.N, ids, err)
	}
	if ids, err := svc.SegmentIDs(ctx, "invoices", 2, service.Want{}, nil); err != nil || len(ids.Texts) != 2 || ids.Texts[1] != "INV-3" {
		t.Fatalf("formatted batch = %+v, %v", ids, err)
	}
	if start, count, err := svc.SegmentRange(ctx, "orders", 10, "GET /api/segment/get"); err != nil || count < 1 || count > 10 || start < 2 {
		t.Fatalf("plain range = %d, %d, %v", start, count, err)
	}
	for tag, part := range map[string]string{"invoices": "texts", "users": "opaque", "ticks": "GET /api/segment/get"} {
		if _, _, err := svc.SegmentRange(ctx, tag, 10, "GET /api/segment/get"); err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("a range of %s = %v, want a refusal saying %q", tag, err, part)
		}
	}
	_, err = svc.SegmentID(ctx, "nope", service.Want{}, nil)
	wantCode(t, "a tag without a row", err, service.UnknownTag, `"nope"`)

	off := service.New(service.Config{})
	_, err = off.SegmentID(ctx, "orders", service.Want{}, nil)
	wantCode(t, "segment mode off", err, service.NotFound, "segment mode is not enabled")
	_, _, err = off.SegmentRange(ctx, "orders", 1, "")
	wantCode(t, "a range with segment mode off", err, service.NotFound, "segment mode is not enabled")
}

// elsewhere is the business ids of an instance that owns no formatted
// tag: every one is served by its owner at owner:1.
type elsewhere struct{ service.BizIDs }

func (e elsewhere) Next(ctx context.Context, t *bizid.Tag) (bizid.ID, error) {
	if t.Formatted() {
		return bizid.ID{}, &sequence.NotOwnerError{Addr: "owner:1"}
	}
	return e.BizIDs.Next(ctx, t)
}

func (e elsewhere) NextN(ctx context.Context, t *bizid.Tag, n int) ([]bizid.ID, error) {
	if t.Formatted() {
		return nil, &sequence.NotOwnerError{Addr: "owner:1"}
	}
	return e.BizIDs.NextN(ctx, t, n)
}

// TestSegmentOwnedElsewhere: the texts of a formatted tag another
// instance owns are asked of it, one or a batch; a call that came
// forwarded is refused rather than sent on; an opaque tag's batch is its
// hidden numbers; a period's row is refused by its own name, alone or in
// a batch.
func TestSegmentOwnedElsewhere(t *testing.T) {
	ctx := context.Background()
	p := newParts(t, true)
	svc := service.New(service.Config{Segments: p.alloc, Kinds: p.kinds, Tags: p.rows, Biz: elsewhere{p.is}, BizTags: p.biz,
		Ordered: p.rows, Peer: &fakePeer{}})
	for _, n := range []service.NewTag{
		{Name: "tickets", Settings: service.TagSettings{Format: ptr("T-{date:20060102}-{seq:4!}"), Reset: ptr("day")}},
		{Name: "users", Settings: service.TagSettings{Opaque: ptr(int64(53))}},
	} {
		if _, err := svc.Tags().Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := svc.SegmentID(ctx, "tickets", service.Want{}, nil); err != nil || id.Text != "tickets-1" {
		t.Fatalf("one text from the owner = %+v, %v", id, err)
	}
	if ids, err := svc.SegmentIDs(ctx, "tickets", 3, service.Want{}, nil); err != nil || len(ids.Texts) != 3 || ids.Texts[2] != "tickets-3" {
		t.Fatalf("texts from the owner = %+v, %v", ids, err)
	}
	_, err := svc.SegmentIDs(ctx, "tickets", 2, service.Want{}, forwardedVia{})
	wantCode(t, "a forwarded batch of a tag owned elsewhere", err, service.Unavailable, "ownership is moving")
	numbers := errors.New("this caller carries numbers only")
	if _, err := svc.SegmentIDs(ctx, "tickets", 2, service.Want{TextsRefused: numbers}, nil); !errors.Is(err, numbers) {
		t.Fatalf("texts to a caller of numbers: %v", err)
	}
	ids, err := svc.SegmentIDs(ctx, "users", 3, service.Want{TextsRefused: numbers}, nil)
	if err != nil || len(ids.Nums) != 3 || len(ids.Texts) != 0 || slices.Contains(ids.Nums, 0) {
		t.Fatalf("an opaque batch = %+v, %v", ids, err)
	}

	row := "tickets" + bizid.RowSep + time.Now().UTC().Format("20060102")
	_, err = svc.SegmentID(ctx, row, service.Want{}, nil)
	wantCode(t, "a period's row", err, service.InvalidTag, "period")
	_, err = svc.SegmentIDs(ctx, row, 2, service.Want{}, nil)
	wantCode(t, "a batch of a period's row", err, service.InvalidTag, "period")
	_, _, err = svc.SegmentRange(ctx, row, 2, "")
	wantCode(t, "a range of a period's row", err, service.InvalidTag, "period")
	_, err = svc.SegmentIDs(ctx, "nope", 2, service.Want{}, nil)
	wantCode(t, "a batch of a tag without a row", err, service.UnknownTag, `"nope"`)
	_, err = service.New(service.Config{}).SegmentIDs(ctx, "orders", 2, service.Want{}, nil)
	wantCode(t, "a batch with segment mode off", err, service.NotFound, "segment mode is not enabled")
}

// TestReveal: an opaque id is turned back into its number; an id of a tag
// that is not opaque, one the tag never issued, a negative one or a bad
// name is refused, and so is every reveal where business ids are off.
func TestReveal(t *testing.T) {
	ctx := context.Background()
	p := newParts(t, true)
	svc := service.New(service.Config{Segments: p.alloc, Kinds: p.kinds, Tags: p.rows, Biz: p.is, BizTags: p.biz})
	if _, err := svc.Tags().Create(ctx, service.NewTag{Name: "users", Settings: service.TagSettings{Opaque: ptr(int64(63))}}); err != nil {
		t.Fatal(err)
	}
	ids, err := svc.SegmentIDs(ctx, "users", 2, service.Want{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := svc.Tags().Reveal(ctx, "users", ids.Nums[1]); err != nil || r.Number != 2 || r.Tag != "users" || r.ID != ids.Nums[1] {
		t.Fatalf("Reveal(%d) = %+v, %v; want number 2", ids.Nums[1], r, err)
	}
	_, err = svc.Tags().Reveal(ctx, "users", ids.Nums[1]^1)
	wantCode(t, "an id never issued", err, service.InvalidID, "never issued")
	_, err = svc.Tags().Reveal(ctx, "users", -1)
	wantCode(t, "a negative id", err, service.InvalidID, "non-negative")
	_, err = svc.Tags().Reveal(ctx, "orders", 5)
	wantCode(t, "a plain tag", err, service.InvalidRequest, "not opaque")
	_, err = svc.Tags().Reveal(ctx, "", 5)
	wantCode(t, "an empty name", err, service.InvalidTag, "empty")
	_, err = service.New(service.Config{Segments: p.alloc, Tags: p.rows}).Tags().Reveal(ctx, "users", ids.Nums[0])
	wantCode(t, "business ids off", err, service.InvalidRequest, "not enabled")
}
