package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
)

// opaqueKeysFlag is --opaque-key: the fleet's keys of opaque tags,
// separated by commas, the first for new tags and the others for the tags
// made with them before a rotation. Its String never shows a key: the
// flag package prints it in help texts.
type opaqueKeysFlag struct{ keys [][]byte }

func (f *opaqueKeysFlag) String() string {
	if f == nil || len(f.keys) == 0 {
		return ""
	}
	return fmt.Sprintf("(%d keys)", len(f.keys))
}

func (f *opaqueKeysFlag) Set(s string) error {
	var keys [][]byte
	for i, k := range strings.Split(s, ",") {
		if len(k) < bizid.MinKeyLen {
			// The error names the key by its place, never by its value.
			return valueError{"(secret)", fmt.Errorf("key %d has %d bytes; an opaque key needs at least %d", i+1, len(k), bizid.MinKeyLen)}
		}
		keys = append(keys, []byte(k))
	}
	f.keys = keys
	return nil
}

// periodGraceFlag is --period-grace: at least bizid.MinGrace.
type periodGraceFlag time.Duration

func (d periodGraceFlag) String() string { return time.Duration(d).String() }
func (d periodGraceFlag) Get() any       { return time.Duration(d) }

func (d *periodGraceFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < bizid.MinGrace {
		return valueError{v.String(), fmt.Errorf("want at least %v, well past the clock differences of a fleet", bizid.MinGrace)}
	}
	*d = periodGraceFlag(v)
	return nil
}

// pruneEvery is how often each instance closes and prunes the periods past
// the grace; the work is idempotent, so instances need not agree on who
// does it.
const pruneEvery = time.Hour

// newIssuer serves formatted and opaque tags over the store and the
// allocator, and starts the loop that re-reads their settings every
// --tag-refresh and prunes old periods every hour. With several stores
// they are off: a period's row would have to be made in every store.
func (a *app) newIssuer(st *store.Store) (*bizid.Issuer, error) {
	is, err := bizid.New(bizid.Options{
		Store: st, IDs: a.alloc.Specials(), Keys: a.cfg.opaqueKeys.keys, Grace: time.Duration(a.cfg.periodGrace),
		OnSpecial: a.alloc.MarkSpecial,
		IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) },
	})
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	a.biz, a.bizStop = is, stop
	a.bizWG.Go(func() { a.runIssuer(ctx, is) })
	return is, nil
}

// runIssuer refreshes and prunes until ctx ends.
func (a *app) runIssuer(ctx context.Context, is *bizid.Issuer) {
	refresh := time.NewTicker(a.cfg.refreshTags)
	defer refresh.Stop()
	prune := time.NewTicker(pruneEvery)
	defer prune.Stop()
	a.pruneOnce(ctx, is) // at the start too: a fleet that restarts often still prunes
	for {
		select {
		case <-ctx.Done():
			return
		case <-refresh.C:
			if err := is.Refresh(ctx); err != nil && ctx.Err() == nil {
				a.log.Debug("formatted tags: refresh failed", "err", err)
			}
		case <-prune.C:
			a.pruneOnce(ctx, is)
		}
	}
}

// pruneOnce closes and prunes the periods past the grace, and logs what
// it did.
func (a *app) pruneOnce(ctx context.Context, is *bizid.Issuer) {
	n, err := is.Prune(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		a.log.Warn("formatted tags: pruning old periods failed", "err", err)
	case n > 0:
		a.log.Info("formatted tags: pruned the rows of old periods", "rows", n)
	}
}
