package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

const testOpaqueKey = "the fleet's opaque key, for tests"

// bizEnv is newEnv with formatted and opaque tags served, at a time the
// test moves.
type bizEnv struct {
	*env
	biz   *bizidtest.Store
	is    *bizid.Issuer
	mu    sync.Mutex
	clock time.Time
}

func (b *bizEnv) now() time.Time  { b.mu.Lock(); defer b.mu.Unlock(); return b.clock }
func (b *bizEnv) set(t time.Time) { b.mu.Lock(); b.clock = t; b.mu.Unlock() }

func newBizEnv(tb testing.TB, keys ...string) *bizEnv {
	tb.Helper()
	b := &bizEnv{clock: time.Date(2026, 11, 23, 15, 59, 59, 0, time.UTC)} // 23:59:59 in Shanghai
	var ks [][]byte
	for _, k := range keys {
		ks = append(ks, []byte(k))
	}
	b.env = newEnv(tb, func(cfg *envConfig) {
		seg := cfg.Segments.(*fakeSegments)
		seg.anyTag = true
		seg.rows = cfg.Tags.(*segmenttest.MemStore)
		b.biz = bizidtest.New(seg.rows)
		var err error
		b.is, err = bizid.New(bizid.Options{Store: b.biz, IDs: seg, Now: b.now, Keys: ks,
			IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) }})
		if err != nil {
			tb.Fatal(err)
		}
		cfg.Kinds, cfg.Biz, cfg.BizTags = service.NewRegistry(b.biz, b.is, nil), b.is, b.biz
	})
	return b
}

func TestFormattedTag(t *testing.T) {
	b := newBizEnv(t)
	rec := b.admin(t, http.MethodPost, "/api/admin/tags",
		`{"tag":"ord","step":100,"format":"ORD-{date:20060102}-{seq:6}","reset":"day","time_zone":"Asia/Shanghai"}`)
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"format":"ORD-{date:20060102}-{seq:6}"`) ||
		!strings.Contains(rec.Body.String(), `"reset":"day"`) || !strings.Contains(rec.Body.String(), `"time_zone":"Asia/Shanghai"`) {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	get := func() string {
		t.Helper()
		rec := b.do(t, http.MethodGet, "/api/segment/get/ord", nil)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Fatalf("get: %d %s %s", rec.Code, rec.Header(), rec.Body)
		}
		return rec.Body.String()
	}
	if got := get(); got != "ORD-20261123-000001" {
		t.Fatalf("first id %q", got)
	}
	rec = b.do(t, http.MethodGet, "/api/segment/batch/ord?count=2", nil)
	if rec.Code != http.StatusOK || rec.Body.String() != `{"tag":"ord","ids":["ORD-20261123-000002","ORD-20261123-000003"]}` {
		t.Fatalf("batch: %d %s", rec.Code, rec.Body)
	}
	b.set(b.now().Add(time.Second)) // midnight in Shanghai
	if got := get(); got != "ORD-20261124-000001" {
		t.Fatalf("after midnight %q", got)
	}
	if _, err := b.tags.Tag(context.Background(), "ord@20261124"); err != nil {
		t.Fatalf("the period's row: %v", err)
	}
	wantError(t, b.do(t, http.MethodGet, "/api/segment/range/ord?count=10", nil), http.StatusConflict, "not_numeric")
	wantError(t, b.do(t, http.MethodGet, "/api/segment/get/ord?format=base62", nil), http.StatusBadRequest, "invalid_request")

	// The admin API shows the settings; plain tags stay plain.
	rec = b.admin(t, http.MethodGet, "/api/admin/tags/ord", "")
	if !strings.Contains(rec.Body.String(), `"reset":"day"`) {
		t.Fatalf("get tag: %s", rec.Body)
	}
	b.admin(t, http.MethodPost, "/api/admin/tags", `{"tag":"users"}`)
	if rec = b.do(t, http.MethodGet, "/api/segment/get/users", nil); rec.Body.String() != "1" {
		t.Fatalf("plain tag: %s", rec.Body)
	}
	rec = b.admin(t, http.MethodGet, "/api/admin/tags", "")
	if !strings.Contains(rec.Body.String(), `"format":"ORD-`) {
		t.Fatalf("list: %s", rec.Body)
	}
}

func TestFormatRefused(t *testing.T) {
	b := newBizEnv(t)
	tests := []struct {
		name, body, code, says string
	}{
		{"no seq", `{"tag":"a","format":"ORD-{date:20060102}","reset":"day"}`, "invalid_format", "no {seq}"},
		{"daily reset showing months", `{"tag":"a","format":"ORD-{date:200601}-{seq}","reset":"day"}`, "invalid_format", "same date"},
		{"unknown reset", `{"tag":"a","format":"{seq}","reset":"hour"}`, "invalid_format", "reset"},
		{"unknown zone", `{"tag":"a","format":"{date:20060102}-{seq}","reset":"day","time_zone":"Mars/Olympus"}`, "invalid_format", "time zone"},
		{"zone without format", `{"tag":"a","time_zone":"UTC"}`, "invalid_format", "need a format"},
		{"empty format", `{"tag":"a","format":""}`, "invalid_format", "empty"},
		{"ordered with an empty format", `{"tag":"a","format":"","ordered":true}`, "invalid_format", "empty"},
		{"opaque without a key", `{"tag":"a","opaque":63}`, "invalid_format", "--opaque-key"},
		{"opaque width", `{"tag":"a","opaque":32}`, "invalid_request", "63 or 53"},
		{"format is a number", `{"tag":"a","format":5}`, "invalid_request", "string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := wantError(t, b.admin(t, http.MethodPost, "/api/admin/tags", tt.body), http.StatusBadRequest, tt.code)
			if !strings.Contains(e.Error.Message, tt.says) {
				t.Fatalf("message %q does not say %q", e.Error.Message, tt.says)
			}
		})
	}
}

func TestPatchFormat(t *testing.T) {
	b := newBizEnv(t)
	// A plain tag takes a format with a letter, not an all-digit one.
	wantError(t, b.admin(t, http.MethodPatch, "/api/admin/tags/orders", `{"format":"{date:20060102}{seq:4}","reset":"day"}`),
		http.StatusConflict, "format_fixed")
	rec := b.admin(t, http.MethodPatch, "/api/admin/tags/orders", `{"format":"O-{date:20060102}-{seq}","reset":"day","time_zone":"UTC"}`)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"format":"O-`) {
		t.Fatalf("patch: %d %s", rec.Code, rec.Body)
	}
	if rec := b.do(t, http.MethodGet, "/api/segment/get/orders", nil); rec.Body.String() != "O-20261123-1" {
		t.Fatalf("after the patch: %s", rec.Body)
	}
	wantError(t, b.admin(t, http.MethodPatch, "/api/admin/tags/orders", `{"format":"O-{date:20060102}-{seq:6}"}`),
		http.StatusConflict, "format_fixed")
	wantError(t, b.admin(t, http.MethodPatch, "/api/admin/tags/orders", `{"reset":"month"}`), http.StatusConflict, "format_fixed")
	rec = b.admin(t, http.MethodPatch, "/api/admin/tags/orders", `{"time_zone":"Asia/Shanghai"}`)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"time_zone":"Asia/Shanghai"`) {
		t.Fatalf("zone: %d %s", rec.Code, rec.Body)
	}
	if rec := b.do(t, http.MethodGet, "/api/segment/get/orders", nil); rec.Body.String() != "O-20261123-2" {
		t.Fatalf("after the zone changed: %s", rec.Body)
	}
	wantError(t, b.admin(t, http.MethodPatch, "/api/admin/tags/nope", `{"format":"X{seq}"}`), http.StatusNotFound, "unknown_tag")
}

func TestOpaqueTagAPI(t *testing.T) {
	b := newBizEnv(t, testOpaqueKey)
	rec := b.admin(t, http.MethodPost, "/api/admin/tags", `{"tag":"u","opaque":53}`)
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"opaque":53`) ||
		!strings.Contains(rec.Body.String(), `"key_id":"`+bizid.TagKeyID(bizid.KeyID([]byte(testOpaqueKey)))+`"`) ||
		strings.Contains(rec.Body.String(), testOpaqueKey) {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	rec = b.do(t, http.MethodGet, "/api/segment/get/u", nil)
	id := rec.Body.String()
	if rec.Code != http.StatusOK || id == "1" {
		t.Fatalf("opaque id: %d %s", rec.Code, id)
	}
	rec = b.admin(t, http.MethodGet, "/api/admin/tags/u/reveal/"+id, "")
	if rec.Code != http.StatusOK || rec.Body.String() != `{"tag":"u","id":"`+id+`","number":"1"}` {
		t.Fatalf("reveal: %d %s", rec.Code, rec.Body)
	}
	if rec := b.do(t, http.MethodGet, "/api/segment/batch/u?count=3", nil); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"2"`) {
		t.Fatalf("batch: %d %s", rec.Code, rec.Body)
	}
	wantError(t, b.do(t, http.MethodGet, "/api/segment/range/u?count=3", nil), http.StatusConflict, "not_numeric")
	wantError(t, b.admin(t, http.MethodGet, "/api/admin/tags/orders/reveal/5", ""), http.StatusBadRequest, "invalid_request")
	wantError(t, b.admin(t, http.MethodGet, "/api/admin/tags/u/reveal/"+"9007199254740992", ""), http.StatusBadRequest, "invalid_id")
	wantError(t, b.admin(t, http.MethodGet, "/api/admin/tags/u/reveal/x", ""), http.StatusBadRequest, "invalid_id")
	n, _ := strconv.ParseInt(id, 10, 64)
	forged := strconv.FormatInt(n^1<<40, 10) // one bit flipped: an id of the domain no range held
	if e := wantError(t, b.admin(t, http.MethodGet, "/api/admin/tags/u/reveal/"+forged, ""), http.StatusBadRequest, "invalid_id"); !strings.Contains(e.Error.Message, `never issued by biz tag "u"`) {
		t.Errorf("forged id: %+v", e)
	}
	wantError(t, b.do(t, http.MethodGet, "/api/admin/tags/u/reveal/5", nil), http.StatusUnauthorized, "unauthorized")
	wantError(t, b.admin(t, http.MethodPatch, "/api/admin/tags/u", `{"opaque":63}`), http.StatusConflict, "format_fixed")
	wantError(t, b.admin(t, http.MethodPatch, "/api/admin/tags/orders", `{"opaque":63}`), http.StatusConflict, "format_fixed")
}

// TestPlainTagsWithoutBiz: a server without business ids refuses the
// settings and serves every tag as plain.
func TestSettingsWithoutBiz(t *testing.T) {
	v := newEnv(t)
	wantError(t, v.admin(t, http.MethodPost, "/api/admin/tags", `{"tag":"x","format":"X{seq}"}`), http.StatusBadRequest, "invalid_request")
	if rec := v.do(t, http.MethodGet, "/api/segment/get/orders", nil); rec.Body.String() != "1" {
		t.Fatalf("plain: %s", rec.Body)
	}
}

// orderedFake says which tags are ordered; it serves none of their ids.
type orderedFake map[string]bool

func (o orderedFake) AddedOrdered(context.Context, string) {}
func (o orderedFake) NextTag(context.Context, string, int) ([]int64, error) {
	return nil, errors.New("not served by this fake")
}

// TestOrderedFormatted: a formatted tag may be ordered (its answer says
// so, as a capped format's does); an opaque tag may not, nor settings
// without a format; giving an ordered tag a format or opaque ids is a 409
// format_fixed.
func TestOrderedFormatted(t *testing.T) {
	v := newEnv(t, func(cfg *envConfig) {
		seg := cfg.Segments.(*fakeSegments)
		seg.anyTag = true
		rows := cfg.Tags.(*segmenttest.MemStore)
		biz := bizidtest.New(rows)
		is, err := bizid.New(bizid.Options{Store: biz, IDs: seg, Keys: [][]byte{[]byte(testOpaqueKey)}, Owner: &bizidtest.Owner{Rows: rows},
			IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) }})
		if err != nil {
			t.Fatal(err)
		}
		rows.SetNotPlain("orders") // ordered, as the store says
		cfg.Kinds, cfg.Biz, cfg.BizTags, cfg.Ordered = service.NewRegistry(biz, is, nil), is, biz, orderedFake{"orders": true}
	})
	for _, tc := range []struct{ body, text string }{
		{`{"tag":"o1","ordered":true,"format":"O-{seq}"}`, "O-1"},
		{`{"tag":"o2","ordered":true,"format":"O-{date:20060102}-{seq}","reset":"day"}`, "O-"},
		{`{"tag":"o3","format":"O-{seq:3!}"}`, "O-001"},
	} {
		rec := v.admin(t, http.MethodPost, "/api/admin/tags", tc.body)
		if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"ordered":true`) {
			t.Fatalf("%s: %d %s; want 201 and ordered", tc.body, rec.Code, rec.Body)
		}
		var created struct{ Tag string }
		if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
			t.Fatal(err)
		}
		if rec := v.do(t, http.MethodGet, "/api/segment/get/"+created.Tag, nil); rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), tc.text) {
			t.Fatalf("%s: first id %d %s", tc.body, rec.Code, rec.Body)
		}
	}
	for _, tc := range []struct{ body, says string }{
		{`{"tag":"o","ordered":true,"opaque":63}`, "opaque tag is not ordered"},
		{`{"tag":"o","ordered":true,"time_zone":"UTC"}`, "need a format"},
	} {
		e := wantError(t, v.admin(t, http.MethodPost, "/api/admin/tags", tc.body), http.StatusBadRequest, "invalid_format")
		if !strings.Contains(e.Error.Message, tc.says) {
			t.Fatalf("%s: message %q", tc.body, e.Error.Message)
		}
	}
	for _, body := range []string{`{"format":"O-{seq}"}`, `{"opaque":63}`, `{"opaque":53,"step":10}`} {
		e := wantError(t, v.admin(t, http.MethodPatch, "/api/admin/tags/orders", body), http.StatusConflict, "format_fixed")
		if !strings.Contains(e.Error.Message, "ordered") {
			t.Fatalf("%s: message %q", body, e.Error.Message)
		}
	}
	// A plain tag still takes a format.
	if rec := v.admin(t, http.MethodPost, "/api/admin/tags", `{"tag":"plain"}`); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if rec := v.admin(t, http.MethodPatch, "/api/admin/tags/plain", `{"format":"U-{seq}"}`); rec.Code != http.StatusOK {
		t.Fatalf("plain tag: %d %s", rec.Code, rec.Body)
	}
}
