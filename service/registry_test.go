package service_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

// countingKinds counts the reads of what tags are, the names each read
// asked about, and the most reads that ran at once.
type countingKinds struct {
	service.TagKinds
	mu           sync.Mutex
	reads        int
	active, most int
	asked        map[string]int
	fail         error
}

func (c *countingKinds) LookupTags(ctx context.Context, names []string) (map[string]bizid.Row, error) {
	c.mu.Lock()
	c.reads++
	c.active++
	c.most = max(c.most, c.active)
	if c.asked == nil {
		c.asked = map[string]int{}
	}
	for _, n := range names {
		c.asked[n]++
	}
	fail := c.fail
	c.mu.Unlock()
	time.Sleep(time.Millisecond) // the requests that arrive meanwhile wait for the next read
	defer func() {
		c.mu.Lock()
		c.active--
		c.mu.Unlock()
	}()
	if fail != nil {
		return nil, fail
	}
	return c.TagKinds.LookupTags(ctx, names)
}

// TestRegistryReads: many requests for many tags at once cost the store a
// few reads, two at a time at most (a name asked for again while its
// first load runs rides along in a read of others); a plain tag once
// loaded is never read again, and a name without a row is, so that a tag
// created under it later is seen.
func TestRegistryReads(t *testing.T) {
	ctx := context.Background()
	p := newParts(t, true)
	for i := range 200 {
		if _, err := p.rows.CreateTag(ctx, segment.Tag{Name: fmt.Sprintf("t%03d", i), MaxID: 1, Step: 10}); err != nil {
			t.Fatal(err)
		}
	}
	kinds := &countingKinds{TagKinds: p.biz}
	reg := service.NewRegistry(kinds, p.is, p.alloc)
	svc := service.New(service.Config{Segments: p.alloc, Kinds: reg, Tags: p.rows, Biz: p.is, BizTags: p.biz, Ordered: p.rows})
	var wg sync.WaitGroup
	for g := range 50 {
		wg.Go(func() {
			for i := range 200 {
				tag := fmt.Sprintf("t%03d", (g*7+i)%200)
				if _, err := svc.SegmentID(ctx, tag, service.Want{}, nil); err != nil {
					t.Errorf("%s: %v", tag, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if kinds.most > 2 {
		t.Errorf("%d reads ran at once, want at most 2", kinds.most)
	}
	if kinds.reads > 100 {
		t.Errorf("%d reads for 200 tags asked by 50 callers at once: not batched", kinds.reads)
	}
	if len(kinds.asked) != 200 {
		t.Errorf("%d names read, want the 200 tags", len(kinds.asked))
	}
	reads := kinds.reads
	for range 3 {
		if _, err := svc.SegmentID(ctx, "t001", service.Want{}, nil); err != nil {
			t.Fatal(err)
		}
		_, err := svc.SegmentID(ctx, "later", service.Want{}, nil)
		wantCode(t, "a tag without a row", err, service.UnknownTag, `"later"`)
	}
	if got := kinds.reads - reads; got != 3 {
		t.Errorf("%d reads for a known tag and a name without a row, three times each; want 3, the name's", got)
	}
	if _, err := svc.Tags().Create(ctx, service.NewTag{Name: "later", Ordered: true}); err != nil {
		t.Fatal(err)
	}
	_, _, err := svc.SegmentRange(ctx, "later", 5, "GET /api/segment/get")
	wantCode(t, "a range of the ordered tag created under the name", err, service.InvalidRequest, "ordered")
}

// TestRegistryUnanswered: while the store does not answer, a tag not known
// yet is unavailable (never taken for a plain one) and the allocator is not
// asked for it; right after a read failed, such requests fail at once
// without another; once the store answers, the tag is served.
func TestRegistryUnanswered(t *testing.T) {
	ctx := context.Background()
	p := newParts(t, true)
	kinds := &countingKinds{TagKinds: p.biz, fail: errors.New("the database is down")}
	reg := service.NewRegistry(kinds, p.is, p.alloc)
	svc := service.New(service.Config{Segments: p.alloc, Kinds: reg, Tags: p.rows, Biz: p.is, BizTags: p.biz})
	for range 3 {
		_, err := svc.SegmentID(ctx, "orders", service.Want{}, nil)
		wantCode(t, "a tag while the store is down", err, service.Unavailable, "unreachable")
	}
	if kinds.reads != 1 {
		t.Errorf("%d reads for three requests right after a failed one, want 1", kinds.reads)
	}
	if p.alloc.Loaded("orders") {
		t.Fatal("the allocator took a range while the tag's kind was unknown")
	}
	kinds.mu.Lock()
	kinds.fail = nil
	kinds.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		id, err := svc.SegmentID(ctx, "orders", service.Want{}, nil)
		if err == nil && id.N == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("once the store answers: %+v, %v", id, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRegistryKinds: what the registry keeps decides each request: a
// period's row is refused by its name before and after the period's row is
// made, while its numbers go out as the tag's texts; a plain tag given a
// format is served as texts at once here, and on another instance once its
// settings are read there (PutAll); an ordered tag created is served by its
// owner at once.
func TestRegistryKinds(t *testing.T) {
	ctx := context.Background()
	p := newParts(t, true)
	svc := service.New(service.Config{Segments: p.alloc, Kinds: p.kinds, Tags: p.rows, Biz: p.is, BizTags: p.biz, Ordered: p.rows})
	if _, err := svc.Tags().Create(ctx, service.NewTag{Name: "inv", Settings: service.TagSettings{Format: ptr("INV-{date:20060102}-{seq}"), Reset: ptr("day")}}); err != nil {
		t.Fatal(err)
	}
	row := "inv@" + time.Now().UTC().Format("20060102")
	_, err := svc.SegmentID(ctx, row, service.Want{}, nil)
	wantCode(t, "a period's row not made yet", err, service.InvalidTag, "row of period")
	if id, err := svc.SegmentID(ctx, "inv", service.Want{}, nil); err != nil || id.Text == "" {
		t.Fatalf("the formatted tag = %+v, %v", id, err)
	}
	if !p.alloc.Loaded(row) {
		t.Fatalf("the period's row %s has no buffer after the tag's first id", row)
	}
	_, err = svc.SegmentID(ctx, row, service.Want{}, nil)
	wantCode(t, "a period's row with a buffer", err, service.InvalidTag, "row of period")

	// Two instances over one database: the plain tag orders, loaded on both.
	other := newParts(t, true)
	other.rows, other.biz = p.rows, p.biz
	otherKinds := service.NewRegistry(p.biz, other.is, other.alloc)
	otherSvc := service.New(service.Config{Segments: other.alloc, Kinds: otherKinds, Tags: p.rows, Biz: other.is, BizTags: p.biz})
	for _, s := range []*service.Service{svc, otherSvc} {
		if id, err := s.SegmentID(ctx, "orders", service.Want{}, nil); err != nil || id.N == 0 {
			t.Fatalf("plain = %+v, %v", id, err)
		}
	}
	if _, err := svc.Tags().Update(ctx, "orders", segment.TagUpdate{}, service.TagSettings{Format: ptr("ORD-{seq}")}); err != nil {
		t.Fatal(err)
	}
	if id, err := svc.SegmentID(ctx, "orders", service.Want{}, nil); err != nil || id.Text == "" {
		t.Fatalf("given a format, here = %+v, %v; want a text at once", id, err)
	}
	if id, err := otherSvc.SegmentID(ctx, "orders", service.Want{}, nil); err != nil || id.N == 0 {
		t.Fatalf("given a format, on the other instance before it reads the settings = %+v, %v; want a number still", id, err)
	}
	all, err := p.biz.TagSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	otherKinds.PutAll(all)
	if id, err := otherSvc.SegmentID(ctx, "orders", service.Want{}, nil); err != nil || id.Text == "" {
		t.Fatalf("given a format, on the other instance once it read the settings = %+v, %v", id, err)
	}

	if _, err := svc.Tags().Create(ctx, service.NewTag{Name: "ticks", Ordered: true}); err != nil {
		t.Fatal(err)
	}
	if id, err := svc.SegmentID(ctx, "ticks", service.Want{}, nil); err != nil || id.N != 1 || p.alloc.Loaded("ticks") {
		t.Fatalf("the ordered tag = %+v, %v; want its owner's first id, and no buffer", id, err)
	}
}

// TestRegistryOrderedRead: a tag this instance took a plain range of while
// it was made ordered elsewhere (a request racing its creation) goes to its
// owner once the ordered tags are read (Registry.Ordered, every
// --tag-refresh), never again to its buffer; a formatted tag that is
// ordered stays the business ids' to serve.
func TestRegistryOrderedRead(t *testing.T) {
	ctx := context.Background()
	p := newParts(t, true)
	svc := service.New(service.Config{Segments: p.alloc, Kinds: p.kinds, Tags: p.rows, Biz: p.is, BizTags: p.biz, Ordered: p.rows})
	if id, err := svc.SegmentID(ctx, "orders", service.Want{}, nil); err != nil || id.N != 1 {
		t.Fatalf("plain = %+v, %v", id, err)
	}
	p.rows.SetOrdered("orders")
	if _, err := svc.Tags().Create(ctx, service.NewTag{Name: "inv", Ordered: true, Settings: service.TagSettings{Format: ptr("INV-{seq}")}}); err != nil {
		t.Fatal(err)
	}
	p.kinds.Ordered("orders", "inv")
	if id, err := svc.SegmentID(ctx, "orders", service.Want{}, nil); err != nil || id.N <= 1000 {
		t.Fatalf("once read as ordered = %+v, %v; want its owner's id, past the plain range 1..1000", id, err)
	}
	if id, err := svc.SegmentID(ctx, "inv", service.Want{}, nil); err != nil || id.Text != "INV-1" {
		t.Fatalf("a formatted ordered tag = %+v, %v; want its first text", id, err)
	}
}
