package storeset

import (
	"context"
	"maps"
	"math"
	"sync"
	"time"
)

// mark is the highest max_id known of m's row of tag: what other stores
// recorded, read the first time this process takes a range of tag from m,
// and what m gave this process since. A row found below it went back in
// time.
func (s *Stores) mark(ctx context.Context, m *member, id, tag string) int64 {
	s.marksMu.Lock()
	known, ok := s.known[id][tag]
	s.marksMu.Unlock()
	if ok {
		return known
	}
	s.mu.RLock()
	others := make(map[*member]string, len(s.ids))
	maps.Copy(others, s.ids)
	s.mu.RUnlock()
	for o := range others {
		if o == m || !o.up() {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		got, err := o.st.Marks(cctx, id, []string{tag})
		cancel()
		if err == nil {
			known = max(known, got[tag])
		}
	}
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.known[id] == nil {
		s.known[id] = map[string]int64{}
	}
	known = max(known, s.known[id][tag])
	s.known[id][tag] = known
	return known
}

// gave records that store id raised tag's max_id to maxID for this
// process: its mark, and one to write to the other stores.
func (s *Stores) gave(id, tag string, maxID int64) {
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.known[id] == nil {
		s.known[id] = map[string]int64{}
	}
	s.known[id][tag] = max(s.known[id][tag], maxID)
	if s.pending[id] == nil {
		s.pending[id] = map[string]int64{}
	}
	s.pending[id][tag] = max(s.pending[id][tag], maxID)
	s.unfenceLocked(id, tag, maxID)
}

// fence records that store id's row of tag was found behind its mark, and
// calls OnStale: until a range at or above floor, the mark plus the
// failover jump, is taken of it, every range of it starts there. The
// range that found the row behind has moved it (to the mark or above): if
// the range past the jump is then not taken (the store stops answering in
// between, the set changes), the next load finds the row above its mark,
// no longer behind, and without the fence would take a range right above
// it, among the ids the store may have given before it went back.
func (s *Stores) fence(m *member, id, tag string, mark int64) (floor int64) {
	if s.opts.OnStale != nil {
		s.opts.OnStale(m.name, tag, mark)
	}
	floor = mark + s.opts.FailoverJump
	if floor < mark { // past the int64 maximum: the statement refuses it
		floor = math.MaxInt64
	}
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.fenced[id] == nil {
		s.fenced[id] = map[string]int64{}
	}
	s.fenced[id][tag] = max(s.fenced[id][tag], floor)
	return floor
}

// fenceOf is the floor of the next range of store id's row of tag that
// fence set, or 0.
func (s *Stores) fenceOf(id, tag string) int64 {
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	return s.fenced[id][tag]
}

// unfenceLocked forgets the fence of store id's row of tag once a range
// ending at maxID was taken past it. Called with s.marksMu held.
func (s *Stores) unfenceLocked(id, tag string, maxID int64) {
	if f, ok := s.fenced[id][tag]; ok && maxID > f {
		delete(s.fenced[id], tag)
	}
}

// marksOf is mark for each of tags, with one read of the marks per other
// store for the tags whose marks this process has not read yet.
func (s *Stores) marksOf(ctx context.Context, m *member, id string, tags []string) []int64 {
	out := make([]int64, len(tags))
	var unread []string
	s.marksMu.Lock()
	for i, tag := range tags {
		v, ok := s.known[id][tag]
		if !ok {
			unread = append(unread, tag)
		}
		out[i] = v
	}
	s.marksMu.Unlock()
	if len(unread) == 0 {
		return out
	}
	s.mu.RLock()
	var others []*member
	for o := range s.ids {
		if o != m && o.up() {
			others = append(others, o)
		}
	}
	s.mu.RUnlock()
	read := make([]map[string]int64, len(others))
	var wg sync.WaitGroup
	for i, o := range others {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
			defer cancel()
			read[i], _ = o.st.Marks(cctx, id, unread) // an error: that store's marks are not known (as mark)
		})
	}
	wg.Wait()
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.known[id] == nil {
		s.known[id] = map[string]int64{}
	}
	for _, tag := range unread {
		v := s.known[id][tag]
		for _, r := range read {
			v = max(v, r[tag])
		}
		s.known[id][tag] = v
	}
	for i, tag := range tags {
		out[i] = s.known[id][tag]
	}
	return out
}

// gaveAll is gave for each of tags that res gave a range of.
func (s *Stores) gaveAll(id string, tags []string, res []ClassResult) {
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.known[id] == nil {
		s.known[id] = map[string]int64{}
	}
	if s.pending[id] == nil {
		s.pending[id] = map[string]int64{}
	}
	for k, r := range res {
		if r.Err == nil {
			s.known[id][tags[k]] = max(s.known[id][tags[k]], r.MaxID)
			s.pending[id][tags[k]] = max(s.pending[id][tags[k]], r.MaxID)
			s.unfenceLocked(id, tags[k], r.MaxID)
		}
	}
}

// markLoop writes the marks every MarkInterval, and reads the set again
// while a member has not been checked against it (it did not answer, or a
// change of the set has not reached it).
func (s *Stores) markLoop() {
	t := time.NewTicker(s.opts.MarkInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.flushMarks(s.ctx)
			s.mu.RLock()
			unchecked := len(s.ids) < len(s.members)
			s.mu.RUnlock()
			if unchecked {
				_ = s.refresh(s.ctx) // an error: the next tick tries again
			}
		}
	}
}

// flushMarks writes the pending marks to every other store, then sets back
// those of the rows handed back (handback.go); those a store could not
// take are kept for the next round.
func (s *Stores) flushMarks(ctx context.Context) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.marksMu.Lock()
	pending := s.pending
	s.pending = map[string]map[string]int64{}
	s.marksMu.Unlock()
	s.mu.RLock()
	ids := make(map[*member]string, len(s.ids))
	maps.Copy(ids, s.ids)
	s.mu.RUnlock()
	for id, marks := range pending {
		for o, oid := range ids {
			if oid == id {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
			err := o.st.RecordMarks(cctx, id, marks)
			cancel()
			if err != nil {
				s.marksMu.Lock()
				if s.pending[id] == nil {
					s.pending[id] = map[string]int64{}
				}
				for tag, v := range marks {
					s.pending[id][tag] = max(s.pending[id][tag], v)
				}
				s.marksMu.Unlock()
			}
		}
	}
	s.lowerMarks(ctx, ids)
}
