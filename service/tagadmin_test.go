package service_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

// parts are in-memory rows holding the plain tag orders, with ordered
// tags, and the allocator and issuer of formatted and opaque tags over
// them, as leaf serve wires them (a key for opaque tags when withKey).
type parts struct {
	rows  *segmenttest.Ordered
	alloc *segment.Allocator
	biz   *bizidtest.Store
	is    *bizid.Issuer
	kinds *service.Registry
}

func newParts(t *testing.T, withKey bool) *parts {
	t.Helper()
	rows := segmenttest.NewOrdered(segmenttest.New(segment.Tag{Name: "orders", MaxID: 1, Step: 1000}))
	biz := bizidtest.New(rows.MemStore)
	alloc := segment.New(rows.MemStore, segment.Options{RefreshInterval: -1})
	t.Cleanup(func() { _ = alloc.Close() })
	var keys [][]byte
	if withKey {
		keys = [][]byte{[]byte("the fleet's opaque key for service tests")}
	}
	is, err := bizid.New(bizid.Options{Store: biz, IDs: alloc, Keys: keys, Owner: &bizidtest.Owner{Rows: rows.MemStore},
		IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) }})
	if err != nil {
		t.Fatal(err)
	}
	kinds := service.NewRegistry(biz, is, alloc)
	return &parts{rows: rows, alloc: alloc, biz: biz, is: is, kinds: kinds}
}

// tagAdmin is the TagAdmin of parts, and the ordered tags it told of.
type tagAdmin struct {
	*service.TagAdmin
	rows  *segmenttest.Ordered
	mu    sync.Mutex
	added []string
}

func (a *tagAdmin) AddedOrdered(_ context.Context, tag string) {
	a.mu.Lock()
	a.added = append(a.added, tag)
	a.mu.Unlock()
}

func newTagAdmin(t *testing.T, withKey bool) *tagAdmin {
	t.Helper()
	p := newParts(t, withKey)
	a := &tagAdmin{rows: p.rows}
	a.TagAdmin = &service.TagAdmin{Rows: p.rows, Settings: p.biz, Kinds: p.kinds, Ordered: a}
	return a
}

func ptr[T any](v T) *T { return &v }

// wantCode fails t unless err is classified as code, with part in its
// message.
func wantCode(t *testing.T, what string, err error, code, part string) {
	t.Helper()
	got, msg := service.Classify(err)
	if err == nil || got != code || !strings.Contains(msg, part) {
		t.Fatalf("%s = %v (%s: %q), want %s saying %q", what, err, got, msg, code, part)
	}
}

// TestTagAdminCreate: a new tag takes the defaults both edges share, is
// plain, ordered, or formatted or opaque by what was given, and each
// refusal has its code and says why.
func TestTagAdminCreate(t *testing.T) {
	ctx := context.Background()
	a := newTagAdmin(t, true)
	v, err := a.Create(ctx, service.NewTag{Name: "plain"})
	if err != nil || v.Step != segment.DefaultStep || v.MaxID != 1 || v.Ordered || v.Format != "" {
		t.Fatalf("plain with defaults = %+v, %v", v, err)
	}
	if v, err = a.Create(ctx, service.NewTag{Name: "given", Step: ptr(int64(5)), MaxID: ptr(int64(70)), Description: "d"}); err != nil || v.Step != 5 || v.MaxID != 70 || v.Description != "d" {
		t.Fatalf("plain with a step and max_id = %+v, %v", v, err)
	}
	if v, err = a.Create(ctx, service.NewTag{Name: "ticks", Ordered: true}); err != nil || !v.Ordered {
		t.Fatalf("ordered = %+v, %v", v, err)
	}
	if ordered, _ := a.rows.Ordered(ctx, "ticks"); !ordered {
		t.Fatal("the ordered tag's row is not ordered")
	}
	v, err = a.Create(ctx, service.NewTag{Name: "invoices", Settings: service.TagSettings{Format: ptr("INV-{date:20060102}-{seq:4}"), Reset: ptr("day")}})
	if err != nil || v.Format != "INV-{date:20060102}-{seq:4}" || v.Reset != "day" || v.TimeZone != "UTC" {
		t.Fatalf("formatted = %+v, %v", v, err)
	}
	if v, err = a.Create(ctx, service.NewTag{Name: "users", Settings: service.TagSettings{Opaque: ptr(int64(63))}}); err != nil || v.Opaque != 63 || v.KeyID == "" {
		t.Fatalf("opaque = %+v, %v", v, err)
	}
	if !slices.Equal(a.added, []string{"ticks"}) {
		t.Fatalf("told of the ordered tags %v, want the one created", a.added)
	}
	for _, tt := range []struct {
		name       string
		n          service.NewTag
		code, part string
	}{
		{"exists", service.NewTag{Name: "orders"}, service.TagExists, `"orders" already exists`},
		{"no name", service.NewTag{Name: ""}, service.InvalidTag, ""},
		{"step 0", service.NewTag{Name: "z", Step: ptr(int64(0))}, service.InvalidRequest, "step"},
		{"empty format", service.NewTag{Name: "z", Settings: service.TagSettings{Format: ptr("")}}, service.InvalidFormat, ""},
		{"opaque 0", service.NewTag{Name: "z", Settings: service.TagSettings{Opaque: ptr(int64(0))}}, service.InvalidRequest, "63 or 53"},
		{"zone Local", service.NewTag{Name: "z", Settings: service.TagSettings{Format: ptr("Z-{seq}"), TimeZone: ptr("Local")}}, service.InvalidFormat, "Local"},
		{"ordered and opaque", service.NewTag{Name: "z", Ordered: true, Settings: service.TagSettings{Opaque: ptr(int64(63))}}, service.InvalidFormat, "an opaque tag is not ordered"},
		{"a control character", service.NewTag{Name: "z\x1b"}, service.InvalidTag, "control"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.Create(ctx, tt.n)
			wantCode(t, "Create", err, tt.code, tt.part)
		})
	}
	if _, err := a.rows.Tag(ctx, "z"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("a refused creation left a row: %v", err)
	}
}

// TestTagAdminWithout: what a server without a part refuses, in words
// that say which part: no key for opaque tags, no sequences for ordered
// ones, no formatted tags at all, no administration.
func TestTagAdminWithout(t *testing.T) {
	ctx := context.Background()
	_, err := newTagAdmin(t, false).Create(ctx, service.NewTag{Name: "users", Settings: service.TagSettings{Opaque: ptr(int64(63))}})
	wantCode(t, "opaque without a key", err, service.InvalidFormat, "need a key")

	unordered := newTagAdmin(t, true)
	unordered.Ordered = nil
	_, err = unordered.Create(ctx, service.NewTag{Name: "ticks", Ordered: true})
	wantCode(t, "ordered without sequences", err, service.InvalidRequest, "need sequences on")

	plainOnly := newTagAdmin(t, true)
	plainOnly.Settings = nil
	_, err = plainOnly.Create(ctx, service.NewTag{Name: "invoices", Settings: service.TagSettings{Format: ptr("INV-{seq}")}})
	wantCode(t, "formatted without formatted tags", err, service.InvalidRequest, "not enabled")
	_, err = plainOnly.Update(ctx, "orders", segment.TagUpdate{}, service.TagSettings{Opaque: ptr(int64(63))})
	wantCode(t, "made opaque without formatted tags", err, service.InvalidRequest, "not enabled")

	off := &service.TagAdmin{}
	_, err = off.Create(ctx, service.NewTag{Name: "orders"})
	wantCode(t, "Create off", err, service.NotFound, "not enabled")
	_, err = off.Get(ctx, "orders")
	wantCode(t, "Get off", err, service.NotFound, "not enabled")
	_, err = off.List(ctx)
	wantCode(t, "List off", err, service.NotFound, "not enabled")
	_, err = off.Update(ctx, "orders", segment.TagUpdate{Step: ptr(int64(5))}, service.TagSettings{})
	wantCode(t, "Update off", err, service.NotFound, "not enabled")
}

// TestTagAdminUpdate: a plain tag may be given a format once, an ordered
// one never; an update must change something; reads show the settings.
func TestTagAdminUpdate(t *testing.T) {
	ctx := context.Background()
	a := newTagAdmin(t, true)
	if _, err := a.Create(ctx, service.NewTag{Name: "ticks", Ordered: true}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Update(ctx, "orders", segment.TagUpdate{}, service.TagSettings{})
	wantCode(t, "an update of nothing", err, service.InvalidRequest, "nothing to update")
	_, err = a.Update(ctx, "nope", segment.TagUpdate{Step: ptr(int64(5))}, service.TagSettings{})
	wantCode(t, "an update of a tag without a row", err, service.UnknownTag, `"nope"`)
	_, err = a.Update(ctx, "ticks", segment.TagUpdate{}, service.TagSettings{Format: ptr("T-{seq}")})
	wantCode(t, "an ordered tag given a format", err, service.FormatFixed, "ordered")

	v, err := a.Update(ctx, "orders", segment.TagUpdate{Step: ptr(int64(50))}, service.TagSettings{Format: ptr("ORD-{seq:6}")})
	if err != nil || v.Step != 50 || v.Format != "ORD-{seq:6}" {
		t.Fatalf("a plain tag given a format = %+v, %v", v, err)
	}
	_, err = a.Update(ctx, "orders", segment.TagUpdate{}, service.TagSettings{Format: ptr("ORD2-{seq:6}")})
	wantCode(t, "a formatted tag given another format", err, service.FormatFixed, "")

	if v, err = a.Get(ctx, "orders"); err != nil || v.Format != "ORD-{seq:6}" || v.Step != 50 {
		t.Fatalf("Get = %+v, %v", v, err)
	}
	_, err = a.Get(ctx, strings.Repeat("x", segment.MaxTagLen+1))
	wantCode(t, "Get of an invalid name", err, service.InvalidTag, "")
	_, err = a.Get(ctx, "nope")
	wantCode(t, "Get of a tag without a row", err, service.UnknownTag, `"nope"`)
	all, err := a.List(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("List = %+v, %v", all, err)
	}
	for _, v := range all {
		if (v.Name == "orders") != (v.Format != "") {
			t.Errorf("List shows %s with format %q", v.Name, v.Format)
		}
	}
}
