package app

import (
	"context"
	"time"

	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/storeset"
)

// openSegments starts the segment allocator, with --segment, and serves
// its ids and the administration of its tags.
func (a *Server) openSegments(e *wiring) {
	if !a.cfg.Segment {
		return
	}
	e.domain.SegmentLoads = metrics.NewLoadTimes()
	a.alloc = a.newAllocator(e.domain.SegmentLoads)
	e.svc.Segments, e.domain.Segments, e.domain.Headroom, e.domain.CappedPeriods = a.alloc, a.alloc, a.headroom, a.cappedPeriods
	e.api.Instance.Headroom, e.api.Instance.CappedPeriods = a.headroom, a.cappedPeriods
	rows, _ := a.set.Rows(a.homeStore())
	e.svc.Tags = announcedRows{TagRows: rows, alloc: a.alloc}
}

// closeSegments stops the allocator's loads, then hands back what its
// segments did not use.
func (a *Server) closeSegments() error {
	if a.alloc == nil {
		return nil
	}
	err := a.alloc.Close()
	a.handBack()
	return err
}

// newAllocator starts the segment allocator, timing its loads in times
// and logging them.
func (a *Server) newAllocator(times *metrics.LoadTimes) *segment.Allocator {
	loads := newLoadLimiters()
	opts := segment.Options{
		// A load is one call of the store, or two when it fences.
		LoadTimeout:     2*a.ready.All()[0].Store.Timeout() + time.Second,
		RefreshInterval: a.cfg.RefreshTags,
		FailoverJump:    a.cfg.FailoverJump,
		RideThrough:     a.cfg.RideThrough,
		OnLoad: func(tag string, took time.Duration, err error) {
			times.Observe(tag, took, err)
			a.logLoad(loads, tag, err)
		},
		OnRegression: a.logRegression,
	}
	return segment.New(a.set, a.set.AllocatorOptions(opts))
}

// handBack returns the unused tails of the segments to their rows, so that
// a restart does not skip them, and logs what it did. With a set of
// stores, each tail goes back to the store that gave it, and the marks the
// other stores keep of that row are set back with it (storeset's
// handback.go).
func (a *Server) handBack() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	for _, r := range a.alloc.HandBack(ctx) {
		switch {
		case r.Err != nil:
			a.skipped(r.Tag, skipStop, r.IDs)
			a.log.Warn("segment: could not hand back the unused ids", "tag", r.Tag, "from", r.From, "ids", r.IDs, "err", r.Err)
		case r.Moved:
			a.skipped(r.Tag, skipStop, r.IDs)
			a.log.Info("segment: unused ids not handed back, another instance took a range after them",
				"tag", r.Tag, "from", r.From, "ids", r.IDs)
		default:
			a.log.Info("segment: handed back the unused ids", "tag", r.Tag, "from", r.From, "ids", r.IDs)
		}
	}
}

// announcedRows are the tag rows (TagRows) of leaf serve's admin calls,
// telling the allocator of a created plain tag so that it is served here
// at once, before the next read of the tag list.
type announcedRows struct {
	storeset.TagRows
	alloc *segment.Allocator
}

func (t announcedRows) CreateTag(ctx context.Context, tag segment.Tag) (segment.Tag, error) {
	created, err := t.TagRows.CreateTag(ctx, tag)
	if err == nil {
		t.alloc.Added(created.Name)
	}
	return created, err
}

// headroom is every bounded tag's distance from its bound, but the opaque
// tags' (their figures would tell how many ids they issued): the ranges
// this instance took, and for an ordered tag it owns, what it took as the
// owner.
func (a *Server) headroom() []segment.Headroom {
	hs := a.alloc.Headroom()
	out := hs[:0]
	for _, h := range hs {
		if a.kinds != nil && a.kinds.Opaque(h.Tag) {
			continue
		}
		if a.seq != nil {
			if row, taken, ok := a.seq.RowTaken(h.Tag); ok && row == h.Tag {
				h.Taken = max(h.Taken, taken)
			}
		}
		out = append(out, h)
	}
	a.rates.fill(time.Now(), out)
	return out
}

// cappedPeriods is, for each capped formatted tag this instance owns, the
// last number of a period and the last number it issued of the period in
// use (a capped period's numbers are all issued, so what its owner took
// and has not issued yet is left too).
func (a *Server) cappedPeriods() []segment.Headroom {
	if a.kinds == nil || a.seq == nil {
		return nil
	}
	var out []segment.Headroom
	for tag, limit := range a.kinds.Capped() {
		if _, issued, ok := a.seq.RowIssued(tag); ok {
			out = append(out, segment.Headroom{Tag: tag, Bound: limit, Taken: issued})
		}
	}
	return out
}
