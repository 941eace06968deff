package service_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// TestForwarder: a call reaches the owner through the peer and brings
// its numbers back; the owner's refusal comes back as it is; a call
// forwarded already is refused; an owner that does not answer, or no peer,
// is unavailable, without its address; each is counted once, and two
// forwarders on one registry share the count.
func TestForwarder(t *testing.T) {
	peer := &fakePeer{owners: map[string]string{"near": "owner:1"}, refuse: map[string]*service.Error{
		"busy": {Code: service.Unavailable, Message: "moving"},
	}}
	reg := prometheus.NewRegistry()
	f := service.NewForwarder(peer, reg, nil)
	other := service.NewForwarder(peer, reg, nil) // the other edge's
	ctx := context.Background()
	tags := orderedTags{"far": "owner:1", "busy": "owner:1", "gone": "127.0.0.1:1"}

	if ids, err := f.NextOrdered(ctx, tags, "far", 2, false); err != nil || len(ids) != 2 || ids[0] != 7 {
		t.Fatalf("from the owner: %v, %v", ids, err)
	}
	if _, err := other.NextOrdered(ctx, tags, "busy", 1, false); code(err) != service.Unavailable || !strings.Contains(err.Error(), "moving") {
		t.Fatalf("the owner's refusal: %v", err)
	}
	if _, err := f.NextOrdered(ctx, tags, "far", 1, true); code(err) != service.Unavailable {
		t.Fatalf("a call forwarded already: %v", err)
	}
	if _, err := f.NextOrdered(ctx, tags, "gone", 1, false); code(err) != service.Unavailable || strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("an owner that does not answer: %v", err)
	}
	if _, err := service.NewForwarder(nil, prometheus.NewRegistry(), nil).NextOrdered(ctx, tags, "far", 1, false); code(err) != service.Unavailable {
		t.Fatalf("no peer: %v", err)
	}
	for result, want := range map[string]float64{"ok": 2, "refused": 1, "failed": 1} {
		if got := forwards(t, reg, result); got != want {
			t.Errorf("forwards %s = %v, want %v", result, got, want)
		}
	}
	if f.Forwards() != 4 || other.Forwards() != 4 {
		t.Errorf("Forwards = %d and %d, want 4", f.Forwards(), other.Forwards())
	}
}

// fakePeer is owners of ordered tags that answer numbers from 7 on, or
// their refusal; an owner at 127.0.0.1:1 does not answer.
type fakePeer struct {
	owners map[string]string
	refuse map[string]*service.Error
	mu     sync.Mutex
	next   int64
}

func (p *fakePeer) TagNumbers(_ context.Context, addr, tag string, n int) ([]int64, error) {
	if addr == "127.0.0.1:1" {
		return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
	}
	if e := p.refuse[tag]; e != nil {
		return nil, e
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = 7 + p.next
		p.next++
	}
	return ids, nil
}

func (p *fakePeer) TagTexts(_ context.Context, addr, tag string, n int) ([]string, error) {
	if addr == "127.0.0.1:1" {
		return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
	}
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("%s-%d", tag, i+1)
	}
	return texts, nil
}

// KeyNext answers a key's numbers from 100 on, as its owner would.
func (p *fakePeer) KeyNext(_ context.Context, addr, _, key string, n int) ([]int64, error) {
	nums, err := p.TagNumbers(context.Background(), addr, key, n)
	for i := range nums {
		nums[i] += 93
	}
	return nums, err
}

// KeyCurrent answers 99 for every key.
func (p *fakePeer) KeyCurrent(_ context.Context, addr, _, _ string) (int64, error) {
	if addr == "127.0.0.1:1" {
		return 0, errors.New("dial tcp 127.0.0.1:1: connection refused")
	}
	return 99, nil
}

// TestNextOrdered: an ordered tag's ids come from here when this instance
// owns it, from the owner's answer otherwise (read, asked for as a batch);
// a call that came forwarded is refused; no ordered tags at all is
// unavailable.
func TestNextOrdered(t *testing.T) {
	tags := orderedTags{"near": "", "far": "owner:1"}
	f := service.NewForwarder(&fakePeer{}, prometheus.NewRegistry(), nil)
	ctx := context.Background()

	ids, err := f.NextOrdered(ctx, tags, "near", 2, false)
	if err != nil || len(ids) != 2 || ids[0] != 1 {
		t.Fatalf("owned: %v %v", ids, err)
	}
	ids, err = f.NextOrdered(ctx, tags, "far", 2, false)
	if err != nil || len(ids) != 2 || ids[0] != 7 || ids[1] != 8 {
		t.Fatalf("forwarded: %v %v", ids, err)
	}
	if _, err := f.NextOrdered(ctx, tags, "far", 2, true); code(err) != service.Unavailable {
		t.Fatalf("forwarded twice: %v", err)
	}
	if _, err := (*service.Forwarder)(nil).NextOrdered(ctx, nil, "far", 1, false); code(err) != service.Unavailable || !strings.Contains(err.Error(), "--sequences") {
		t.Fatalf("no ordered tags: %v", err)
	}
}

// orderedTags maps each ordered tag to its owner's address, "" for this
// instance.
type orderedTags map[string]string

func (o orderedTags) AddedOrdered(context.Context, string) {}

func (o orderedTags) NextTag(_ context.Context, tag string, n int) ([]int64, error) {
	if addr := o[tag]; addr != "" {
		return nil, &sequence.NotOwnerError{Addr: addr}
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	return ids, nil
}

func code(err error) string {
	if err == nil {
		return ""
	}
	c, _ := service.Classify(err)
	return c
}

// forwards reads leaf_sequence_forwards_total{result}.
func forwards(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == "leaf_sequence_forwards_total" && m.GetLabel()[0].GetValue() == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no leaf_sequence_forwards_total{result=%q}", result)
	return 0
}
