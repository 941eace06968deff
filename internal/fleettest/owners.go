package fleettest

import (
	"context"
	"errors"
	"fmt"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/sequence"
)

// issued records n numbers an owner issued of row of tag.
func (l *Ledger) issued(tag, row string, limit int64, n int, ids []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["owner"]++
	r := l.rows[row]
	if r == nil {
		r = &rowState{}
		l.rows[row] = r
	}
	switch {
	case len(ids) != n:
		l.failLocked(fmt.Errorf("owner of %q: %d numbers of row %q, %d asked for", tag, len(ids), row, n))
	case r.refused && l.tagRows[tag] == row && r.last > 0 && ids[0] != r.last+1:
		l.failLocked(fmt.Errorf("owner of %q: row %q refused after %d, then gave %d: the refusal took numbers", tag, row, r.last, ids[0]))
	case r.refused && l.tagRows[tag] == row:
		l.reached["owner:continued"]++
	}
	for _, v := range ids {
		if v <= r.last || limit > 0 && v > limit {
			l.failLocked(fmt.Errorf("owner of %q: row %q gave %d after %d (limit %d)", tag, row, v, r.last, limit))
		}
		r.last = v
	}
	r.refused, l.tagRows[tag] = false, row
}

// refused records an owner's refusal of n numbers of row, of which left
// were left, and whether the store was written meanwhile.
func (l *Ledger) refused(tag, row string, limit int64, n int, left int64, wrote bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reached["owner:refused"]++
	r := l.rows[row]
	if r == nil {
		r = &rowState{}
		l.rows[row] = r
	}
	switch {
	case left < 0 || left >= int64(n):
		l.failLocked(fmt.Errorf("owner of %q: %d of row %q refused with %d left", tag, n, row, left))
	case limit > 0 && r.last+left > limit:
		l.failLocked(fmt.Errorf("owner of %q: row %q has %d left after %d, past the limit %d", tag, row, left, r.last, limit))
	case left == 0 && wrote:
		l.failLocked(fmt.Errorf("owner of %q: the full row %q was written by a refusal", tag, row))
	}
	r.refused, l.tagRows[tag] = true, row
}

// owner is leaf serve's bizid.Owner (cmd/leaf's owner), which tells the
// ledger what it issued and refused.
type owner struct {
	q  *sequence.Sequencer
	l  *Ledger
	db *DB
}

func (o owner) Own(ctx context.Context, tag string) error { return o.q.Own(ctx, tag) }

func (o owner) NextRow(ctx context.Context, tag, row string, limit int64, n int) ([]int64, error) {
	writes := o.db.owned.Writes()
	ids, err := o.q.NextRow(ctx, tag, row, limit, n)
	var full *sequence.FullError
	if errors.As(err, &full) {
		o.l.refused(tag, row, limit, n, full.Left, o.db.owned.Writes() != writes)
		return nil, &bizid.LeftError{Left: full.Left}
	}
	if err == nil {
		o.l.issued(tag, row, limit, n, ids)
	}
	return ids, err
}

// orderedTags is the Sequencer as it serves ordered tags, telling the
// ledger what it issued.
type orderedTags struct {
	*sequence.Sequencer
	l *Ledger
}

func (o orderedTags) NextTag(ctx context.Context, tag string, n int) ([]int64, error) {
	ids, err := o.Sequencer.NextTag(ctx, tag, n)
	if err == nil {
		o.l.issued(tag, tag, 0, n, ids)
	}
	return ids, err
}
