package bizid

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// issue runs take on the row of the period of t that holds now, after
// making sure the row exists; when take finds no row (pruned since), once
// more after making sure again, which fails if the period is closed.
func (is *Issuer) issue(ctx context.Context, t *Tag, now time.Time, take func(row string) error) (Period, error) {
	p, err := is.period(ctx, t, now)
	if err != nil {
		return p, err
	}
	err = take(p.Row)
	if err == nil || !is.opts.IsUnknown(err) || t.Reset == Never {
		return p, err
	}
	t.mu.Lock()
	delete(t.ensured, p.Key)
	t.mu.Unlock()
	if err := is.ensure(ctx, t, p.Key); err != nil {
		return p, err
	}
	return p, take(p.Row)
}

// period is the period of t that holds now, whose row exists.
func (is *Issuer) period(ctx context.Context, t *Tag, now time.Time) (Period, error) {
	if p := t.cur.Load(); p != nil && !now.Before(p.Start) && now.Before(p.End) {
		return *p, nil
	}
	p := PeriodAt(t.Tag, t.Reset, now)
	if t.Reset == Never {
		t.cur.Store(&p)
		return p, nil
	}
	if y := now.Year(); y < 1000 || y > 9999 {
		return p, fmt.Errorf("%w: the year %d has not four digits", ErrPeriodClosed, y)
	}
	if err := is.ensure(ctx, t, p.Key); err != nil {
		return p, err
	}
	if cur := t.cur.Load(); cur == nil || cur.Key <= p.Key {
		t.cur.Store(&p)
	}
	return p, nil
}

// maxEnsured bounds the period keys a tag remembers having made sure of.
const maxEnsured = 8

// ensure makes sure the row of t's period key exists, unless this process
// did so already; a period before the tag's pruned mark, or past the
// grace by this clock, is closed.
func (is *Issuer) ensure(ctx context.Context, t *Tag, key string) error {
	if pb := *t.pruned.Load(); pb != "" && key < pb {
		return closedError(t, key)
	}
	t.mu.Lock()
	_, done := t.ensured[key]
	t.mu.Unlock()
	if done {
		return nil
	}
	if err := is.opts.Store.EnsurePeriod(ctx, t.Tag, key); err != nil {
		if errors.Is(err, ErrPeriodClosed) {
			return closedError(t, key)
		}
		return err
	}
	t.mu.Lock()
	if len(t.ensured) >= maxEnsured {
		clear(t.ensured)
	}
	t.ensured[key] = struct{}{}
	t.mu.Unlock()
	return nil
}

func closedError(t *Tag, key string) error {
	return fmt.Errorf("%w: the period %s of tag %q ended more than the grace ago and its numbers are not issued again; check this instance's clock", ErrPeriodClosed, key, t.Tag)
}
