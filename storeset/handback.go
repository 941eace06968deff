package storeset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/leafid/leaf/segment"
)

var _ segment.HandBacker = (*Stores)(nil)

// MarkBack is a mark to set back to To: the row it is the mark of was
// handed back from From to To. A mark between the two (above To, not above
// From) is set back: it is the end of one of the ranges handed back, since
// no other process took a range of the row within them.
type MarkBack struct{ From, To int64 }

// HandBack returns [first, end), the unused tail of the last range of tag
// this process took, to the store that gave it (segment.HandBacker): for
// a row numbered in classes, the store whose last range of the tag ended
// at end; for a row of the home store, the home store. Each store takes
// its part by the compare-and-set a single store uses, which succeeds only
// while its row still ends where this process's last range ended.
//
// The tail may span two ranges: the allocator's two halves count as one
// run when the second starts where the first ends, which in a set happens
// where a range of one store was cut short at its block's end and the
// next came from the store of the next block. Each part goes back to its
// own store, never below the first id of its block: a row stays in its
// class. Ids below the floor of the set in force came from an earlier set,
// whose blocks are not known here; they are not handed back (no range of
// this set is taken below the floor anyway).
//
// It reports true when every part went back; false, with no error, when
// the last range's row had moved on (another instance took a range after
// it), and an error saying what went back and what did not otherwise.
//
// The marks. The other stores hold a mark of the row at end (or will, when
// this process's marks are written), and a mark above a row is what the
// stale-store check takes for a store gone back in time: the next instance
// would move the row past the failover jump. So, in the same step as the
// row, the marks are set back: what is still to be written is lowered to
// the row's new max_id, and the marks already written are set back to it
// by the next write of the marks (Close writes them), with a
// compare-and-set that succeeds only while a mark is within the run handed
// back: above the new max_id, not above end (see Store.LowerMarks). A mark
// below end is the end of an earlier range of the run, written before the
// last range was taken; a mark above end is another process's, left. The
// writes of the marks wait for the step, so none raises a mark after it. A mark set back to the row's max_id
// still catches a real regression: a copy restored from before the hand
// back has the row at or below the first id of the range handed back,
// below the mark. A store that does not take the lowered mark keeps end:
// the next instance then jumps that row, a gap and no duplicate, as before
// hand backs in a set existed.
func (s *Stores) HandBack(ctx context.Context, tag string, end, first int64) (bool, error) {
	if s.lone != nil {
		return s.lone.HandBack(ctx, tag, end, first)
	}
	if first >= end {
		return false, fmt.Errorf("hand back %q: first unused id %d is not below the end %d", tag, first, end)
	}
	s.flushMu.Lock() // no write of the marks meanwhile
	defer s.flushMu.Unlock()
	var (
		back []string
		done = map[*member]bool{} // a run of one store's ranges is one part
	)
	for top := end; first < top; {
		m, id, from, err := s.gaveRange(tag, top, first, done)
		if err == nil {
			var done bool
			done, err = s.handBackTo(ctx, m, id, tag, top, from)
			if !done && err == nil {
				if top == end {
					return false, nil
				}
				err = errors.New("the row moved on")
			}
		}
		if err != nil {
			if len(back) == 0 {
				return false, fmt.Errorf("hand back %q: %w", tag, err)
			}
			return false, fmt.Errorf("hand back %q: %v handed back; ids %d to %d not: %w", tag, back, first, top-1, err)
		}
		back = append(back, fmt.Sprintf("ids %d to %d to store %q", from, top-1, m.name))
		done[m], top = true, from
	}
	return true, nil
}

// gaveRange returns the member, not one of done, that gave this process
// the range of tag ending at top, with its identity, and the lowest id at
// or above first that the same range, or a run of that member's ranges,
// holds: the first id of top's block for a row numbered in classes.
func (s *Stores) gaveRange(tag string, top, first int64, done map[*member]bool) (*member, string, int64, error) {
	s.mu.RLock()
	set := s.set
	var members []*member
	ids := map[*member]string{}
	for _, m := range s.members {
		if id := s.ids[m]; id != "" && !done[m] {
			members, ids[m] = append(members, m), id
		}
	}
	s.mu.RUnlock()
	if s.Homed(tag) {
		home, err := s.home()
		if err != nil || ids[home] == "" {
			return nil, "", 0, fmt.Errorf("the home store is not checked against the set: %v", err)
		}
		return home, ids[home], first, nil // only the home store numbers the row
	}
	var gave *member
	s.marksMu.Lock()
	for _, m := range members {
		if s.known[ids[m]][tag] == top {
			if gave != nil {
				s.marksMu.Unlock()
				return nil, "", 0, fmt.Errorf("stores %q and %q both ended a range at %d", gave.name, m.name, top)
			}
			gave = m
		}
	}
	s.marksMu.Unlock()
	if gave == nil {
		return nil, "", 0, fmt.Errorf("no store of the set in force gave a range ending at %d", top)
	}
	c, _ := set.Class(gave.name)
	low, ok := blockStart(c, top-1)
	if !ok {
		return nil, "", 0, fmt.Errorf("id %d is below the floor %d of the set in force, or not of store %q's class", top-1, set.Floor, gave.name)
	}
	return gave, ids[gave], max(first, low), nil
}

// blockStart is the first id of the block of id in class c, or the floor
// of a class with no blocks (one store); ok is false when id is not one of
// c's.
func blockStart(c segment.Class, id int64) (start int64, ok bool) {
	if !c.Contains(id) {
		return 0, false
	}
	if c.N <= 1 {
		return max(c.Floor, 1), true
	}
	return c.Floor + (id-c.Floor)/c.Block*c.Block, true
}

// handBackTo sets m's row of tag back from top to from, and the marks of
// it with it (see HandBack). Called with s.flushMu held.
func (s *Stores) handBackTo(ctx context.Context, m *member, id, tag string, top, from int64) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	done, err := m.st.HandBack(cctx, tag, top, from)
	if err != nil || !done {
		return done, err
	}
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	s.known[id][tag] = from
	if _, ok := s.pending[id][tag]; ok {
		s.pending[id][tag] = from
	}
	if s.lowered[id] == nil {
		s.lowered[id] = map[string]MarkBack{}
	}
	s.lowered[id][tag] = MarkBack{From: top, To: from}
	return true, nil
}

// lowerMarks sets back, in every other store, the marks of the rows handed
// back; those a store could not take are kept for the next round. Called
// with s.flushMu held.
func (s *Stores) lowerMarks(ctx context.Context, ids map[*member]string) {
	s.marksMu.Lock()
	lowered := s.lowered
	s.lowered = map[string]map[string]MarkBack{}
	s.marksMu.Unlock()
	for id, all := range lowered {
		backs, err := s.unshared(ctx, ids, id, all)
		if err != nil {
			backs = all
		}
		for o, oid := range ids {
			if oid == id || err != nil {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
			err = o.st.LowerMarks(cctx, id, backs)
			cancel()
		}
		if err != nil {
			// Again for every store: a mark already set back is not
			// From any more, and the compare-and-set leaves it.
			s.marksMu.Lock()
			if s.lowered[id] == nil {
				s.lowered[id] = map[string]MarkBack{}
			}
			for tag, b := range backs {
				if _, newer := s.lowered[id][tag]; !newer {
					s.lowered[id][tag] = b
				}
			}
			s.marksMu.Unlock()
		}
	}
}

// unshared leaves out of backs, the marks to set back of store id's rows,
// those of tags whose mark another tag shares: on MySQL the key of
// leaf_marks ignores trailing spaces, so "a" and "a " (two rows of a table
// under a NO PAD collation) have one mark, the higher of theirs; setting
// it back for one could take it below the other's. Such a tag keeps its
// mark: the next instance moves its row past the failover jump, a gap and
// no duplicate. The names are read from the store that handed the rows
// back.
func (s *Stores) unshared(ctx context.Context, ids map[*member]string, id string, backs map[string]MarkBack) (map[string]MarkBack, error) {
	var from *member
	for m, mid := range ids {
		if mid == id {
			from = m
		}
	}
	if from == nil {
		return nil, fmt.Errorf("store %s is not checked against the set", id)
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	rows, err := from.st.Tags(cctx)
	cancel()
	if err != nil {
		return nil, err
	}
	names := make(map[string]int, len(rows))
	for _, r := range rows {
		names[strings.TrimRight(r.Name, " ")]++
	}
	out := make(map[string]MarkBack, len(backs))
	for tag, b := range backs {
		if names[strings.TrimRight(tag, " ")] <= 1 {
			out[tag] = b
		}
	}
	return out, nil
}
