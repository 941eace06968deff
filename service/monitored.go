package service

import (
	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
)

// monitoredSegments is the segment part as the status page and /metrics
// see it (Parts): every tag but the opaque ones, whose counts and ranges
// would tell how many ids each issued, which its ids hide. Their figures
// leave the totals too; the number of tags still counts them. The admin
// API's list (Snapshot, behind the admin token) shows every tag.
type monitoredSegments struct {
	SegmentIDs
	kinds *Registry
}

// EachTag calls f with every tag's figures but the opaque tags', and
// returns the totals without theirs.
func (m monitoredSegments) EachTag(f func(segment.TagStats)) segment.Totals {
	var hidden segment.Totals
	t := m.SegmentIDs.EachTag(func(st segment.TagStats) {
		if m.kinds.Opaque(st.Tag) {
			hidden.Issued += st.Issued
			hidden.Loads += st.Loads
			hidden.LoadFailures += st.LoadFailures
			hidden.Waits += st.Waits
			return
		}
		f(st)
	})
	t.Issued -= hidden.Issued
	t.Loads -= hidden.Loads
	t.LoadFailures -= hidden.LoadFailures
	t.Waits -= hidden.Waits
	return t
}

// State describes a tag's buffer, but an opaque tag's.
func (m monitoredSegments) State(tag string) (segment.BufferState, bool) {
	if m.kinds.Opaque(tag) {
		return segment.BufferState{}, false
	}
	return m.SegmentIDs.State(tag)
}

// Opaque reports whether name is an opaque tag kept here, or the row of a
// period of one: told from what is kept, without a read.
func (r *Registry) Opaque(name string) bool {
	if tag, _, ok := bizid.SplitRowName(name); ok {
		name = tag
	}
	e := r.lookup(name)
	return e != nil && e.kind == kindBiz && e.settings.Opaque()
}

// Capped lists the capped formatted tags kept here ({seq:N!}) with the
// last number of each of their periods.
func (r *Registry) Capped() map[string]int64 {
	out := map[string]int64{}
	for name, e := range *r.known.Load() {
		if e.kind == kindBiz && e.biz != nil {
			if limit := e.biz.Limit(); limit > 0 {
				out[name] = limit
			}
		}
	}
	return out
}
