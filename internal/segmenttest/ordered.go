package segmenttest

import (
	"context"
	"errors"
	"sync"

	"github.com/leafid/leaf/segment"
)

// Ordered is a MemStore that also creates ordered tags and says which tags
// are ordered, as store.Store and sequence.Sequencer do in leaf serve, for
// the admin calls' tests; it serves no ordered tag's ids.
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
	return o
}

// CreateOrderedTag creates t and marks it ordered.
func (o *Ordered) CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	created, err := o.CreateTag(ctx, t)
	if err == nil {
		o.mu.Lock()
		o.ordered[t.Name] = true
		o.mu.Unlock()
	}
	return created, err
}

// Ordered says whether tag is ordered.
func (o *Ordered) Ordered(_ context.Context, tag string) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ordered[tag], nil
}

// NextTag fails: ordered ids are not served by this store.
func (o *Ordered) NextTag(context.Context, string, int) ([]int64, error) {
	return nil, errors.New("segmenttest: ordered ids are not served by Ordered")
}
