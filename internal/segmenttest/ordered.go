package segmenttest

import (
	"context"
	"sync"

	"github.com/leafid/leaf/segment"
)

// Ordered is a MemStore that also creates ordered tags, says which tags
// are ordered and serves their ids, as store.Store and sequence.Sequencer
// do in leaf serve: an ordered tag is not plain (LookupTags says so), and
// NextTag raises its row by each call's count, as one owner's would.
type Ordered struct {
	*MemStore
	mu      sync.Mutex // protects ordered
	ordered map[string]bool
}

// NewOrdered is rows with the tags named ordered marked ordered.
func NewOrdered(rows *MemStore, ordered ...string) *Ordered {
	o := &Ordered{MemStore: rows, ordered: map[string]bool{}}
	for _, tag := range ordered {
		o.ordered[tag] = true
	}
	rows.SetNotPlain(ordered...)
	return o
}

// CreateOrderedTag creates t and marks it ordered.
func (o *Ordered) CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	created, err := o.CreateTag(ctx, t)
	if err == nil {
		o.mu.Lock()
		o.ordered[t.Name] = true
		o.mu.Unlock()
		o.SetNotPlain(t.Name)
	}
	return created, err
}

// Ordered says whether tag is ordered.
func (o *Ordered) Ordered(_ context.Context, tag string) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ordered[tag], nil
}

// SetOrdered makes the rows of tags ordered tags from now on, as a
// creation on another instance would have made them.
func (o *Ordered) SetOrdered(tags ...string) {
	o.mu.Lock()
	for _, tag := range tags {
		o.ordered[tag] = true
	}
	o.mu.Unlock()
	o.SetNotPlain(tags...)
}

// AddedOrdered is told of an ordered tag created (service.OrderedTags):
// CreateOrderedTag has marked it already.
func (o *Ordered) AddedOrdered(context.Context, string) {}

// NextTag returns n increasing ids of the ordered tag, raising its row by
// n; a tag that is not ordered is unknown.
func (o *Ordered) NextTag(ctx context.Context, tag string, n int) ([]int64, error) {
	if ordered, _ := o.Ordered(ctx, tag); !ordered {
		return nil, segment.ErrUnknownTag
	}
	a, err := o.Allocate(ctx, tag, int64(n))
	if err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = a.Start() + int64(i)
	}
	return ids, nil
}
