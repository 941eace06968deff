package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
