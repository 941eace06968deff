package app

import (
	"context"
	"errors"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/store"
)

// pruneEvery is how often each instance closes and prunes the periods past
// the grace; the work is idempotent, so instances need not agree on who
// does it.
const pruneEvery = time.Hour

// openIssuer serves formatted and opaque tags, whose ids the segment
// allocator issues (or the Sequencer, for those served by one owner). They
// live in one store: the store, or the home store of a set, whose rows
// the set's allocator numbers there (storeset's home.go).
func (a *Server) openIssuer(e *wiring) error {
	if !a.cfg.Segment {
		return nil
	}
	st := a.homeStore()
	is, err := a.newIssuer(st)
	if err != nil {
		return err
	}
	e.svc.Kinds, e.svc.Biz = a.kinds, is
	_, e.svc.BizTags = a.set.Rows(st)
	e.svc.Bounds, e.svc.BoundSet = st, a.alloc.SetBound
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	a.refreshBounds(ctx, st)
	return nil
}

// refreshBounds reads the tags' declared bounds into the allocator: a
// bound changed anywhere holds here within --tag-refresh. A failed read
// keeps the bounds read before.
func (a *Server) refreshBounds(ctx context.Context, st *store.Store) {
	bounds, err := st.TagBounds(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Warn("tag bounds: read failed; the bounds read before hold", "err", err)
		}
		return
	}
	a.alloc.SetBounds(bounds)
}

// closeIssuer stops the issuer's loop.
func (a *Server) closeIssuer() {
	if a.bizStop == nil {
		return
	}
	a.bizStop()
	a.bizWG.Wait()
}

// newIssuer serves formatted and opaque tags over the store and the
// allocator, and starts the loop that re-reads their settings every
// --tag-refresh and prunes old periods every hour.
func (a *Server) newIssuer(st *store.Store) (*bizid.Issuer, error) {
	opts := bizid.Options{
		Store: st, IDs: a.alloc, Keys: a.cfg.OpaqueKeys, Grace: a.cfg.PeriodGrace,
		IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) },
	}
	if a.seq != nil {
		opts.Owner = owner{a.seq}
	}
	is, err := bizid.New(opts)
	if err != nil {
		return nil, err
	}
	a.kinds = service.NewRegistry(a.set, is, a.alloc)
	ctx, stop := context.WithCancel(context.Background())
	a.biz, a.bizStop = is, stop
	a.bizWG.Go(func() { a.runIssuer(ctx, is, st) })
	return is, nil
}

// runIssuer re-reads every tag's settings and the ordered tags into the
// registry, and prunes, until ctx ends.
func (a *Server) runIssuer(ctx context.Context, is *bizid.Issuer, st *store.Store) {
	refresh := time.NewTicker(a.cfg.RefreshTags)
	defer refresh.Stop()
	prune := time.NewTicker(pruneEvery)
	defer prune.Stop()
	a.pruneOnce(ctx, is) // at the start too: a fleet that restarts often still prunes
	for {
		select {
		case <-ctx.Done():
			return
		case <-refresh.C:
			a.refreshKinds(ctx, st)
		case <-prune.C:
			a.pruneOnce(ctx, is)
		}
	}
}

// refreshKinds reads every tag's settings, then the ordered tags, into the
// registry.
func (a *Server) refreshKinds(ctx context.Context, st *store.Store) {
	all, err := st.TagSettings(ctx)
	if err != nil && ctx.Err() == nil {
		a.log.Debug("formatted tags: refresh failed", "err", err)
	}
	a.kinds.PutAll(all)
	ordered, err := st.OrderedTags(ctx)
	if err != nil && ctx.Err() == nil {
		a.log.Debug("ordered tags: refresh failed", "err", err)
	}
	a.kinds.Ordered(ordered...)
	a.refreshBounds(ctx, st)
}

// pruneOnce closes and prunes the periods past the grace, and logs what
// it did.
func (a *Server) pruneOnce(ctx context.Context, is *bizid.Issuer) {
	n, raised, err := is.Prune(ctx)
	a.kinds.PutAll(raised)
	switch {
	case err != nil && ctx.Err() == nil:
		a.log.Warn("formatted tags: pruning old periods failed", "err", err)
	case n > 0:
		a.log.Info("formatted tags: pruned the rows of old periods", "rows", n)
	}
}

// owner serves the formatted tags whose numbers come from one owner at a
// time (bizid.Tag.Owned) from the Sequencer, as it serves ordered tags.
type owner struct{ seq *sequence.Sequencer }

func (o owner) Own(ctx context.Context, tag string) error { return o.seq.Own(ctx, tag) }

func (o owner) NextRow(ctx context.Context, tag, row string, limit int64, n int) ([]int64, error) {
	ids, err := o.seq.NextRow(ctx, tag, row, limit, n)
	var full *sequence.FullError
	if errors.As(err, &full) {
		return nil, &bizid.LeftError{Left: full.Left}
	}
	return ids, err
}
