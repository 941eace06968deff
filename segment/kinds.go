package segment

import (
	"context"
	"errors"
	"fmt"
)

// classify asks the store what kind of tag each of tags is, before their
// first load: it sets the results of refused tags in into to ErrNotPlain,
// and remembers the special ones, whose buffers firstLoad marks. An error
// is the store's: no tag may be loaded until it has answered. A store
// that is not a Classifier has plain tags only.
func (a *Allocator) classify(tags []string, into map[string]loadResult) error {
	c, ok := a.store.(Classifier)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(a.ctx, a.opts.LoadTimeout)
	defer cancel()
	kinds, err := c.Classify(ctx, tags)
	if err != nil {
		return fmt.Errorf("which tags are plain: %w", err)
	}
	for tag, k := range kinds {
		switch k {
		case Refused:
			into[tag] = loadResult{err: ErrNotPlain}
		case Special:
			a.mu.Lock()
			a.specials[tag] = true
			a.mu.Unlock()
		}
	}
	return nil
}

// MarkNotPlain tells the allocator that tag is refused from now on
// (another part of the service issues its ids): its buffer, if it has
// one, is dropped with the ids left in it, and every call for it answers
// ErrNotPlain.
func (a *Allocator) MarkNotPlain(tag string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notPlain[tag] = true
	a.dropLocked(tag)
}

// MarkSpecial tells the allocator that tag's ids go out only transformed
// from now on: Next, NextN and NextRange refuse it with ErrSpecial,
// NextSpecial and NextNSpecial serve it.
func (a *Allocator) MarkSpecial(tag string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.specials[tag] = true
	if b := a.buffers.Load().get(tag); b != nil {
		b.special.Store(true)
	}
}

// Special reports whether tag has a buffer of Kind Special: a caller that
// hands out transformed ids asks it before Next, whose hot path does not
// look (a tag's first call finds out from Next's ErrSpecial).
func (a *Allocator) Special(tag string) bool {
	b := a.buffers.Load().get(tag)
	return b != nil && b.special.Load()
}

// NextSpecial is Next for a tag of Kind Special, whose ids the caller
// transforms before they go out; it serves plain tags as Next does.
func (a *Allocator) NextSpecial(ctx context.Context, tag string) (int64, error) {
	id, err := a.Next(ctx, tag)
	if errors.Is(err, ErrSpecial) { // its first load published its buffer
		id, err = a.Next(ctx, tag)
	}
	return id, err
}

// NextNSpecial is NextN for a tag of Kind Special (see NextSpecial).
func (a *Allocator) NextNSpecial(ctx context.Context, tag string, n int) ([]int64, error) {
	ids, err := a.NextN(ctx, tag, n)
	if errors.Is(err, ErrSpecial) {
		ids, err = a.NextN(ctx, tag, n)
	}
	return ids, err
}

// Specials returns the allocator as a source of the raw numbers of
// special tags: its Next and NextN are NextSpecial and NextNSpecial, for a
// caller that transforms them (the business ids).
func (a *Allocator) Specials() Specials { return Specials{a} }

// Specials is an Allocator whose Next and NextN serve special tags.
type Specials struct{ a *Allocator }

// Next is Allocator.NextSpecial.
func (s Specials) Next(ctx context.Context, tag string) (int64, error) {
	return s.a.NextSpecial(ctx, tag)
}

// NextN is Allocator.NextNSpecial.
func (s Specials) NextN(ctx context.Context, tag string, n int) ([]int64, error) {
	return s.a.NextNSpecial(ctx, tag, n)
}
