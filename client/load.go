package client

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// startLoadLocked plans the size of the next range and starts the
// goroutine that loads it. False once the client is closed.
func (c *Client) startLoadLocked(b *tagBuffer) bool {
	size := c.planLocked(b, c.now())
	b.running = true
	if !c.spawn(func() { c.load(b, size) }) {
		b.running = false
		return false
	}
	return true
}

// planLocked sizes the next range so that it lasts about RefillInterval:
// the ids taken since the last plan over the time since, times the
// interval. One plan can change the size by a factor of 4 at most, so that
// a burst measured over a few microseconds does not lease a million ids; a
// caller that had to wait since the last plan doubles it at least.
func (c *Client) planLocked(b *tagBuffer, now time.Time) int64 {
	s := b.cur.Load()
	total := b.taken + min(s.used.Load(), s.size)
	size := b.size
	if !b.since.IsZero() {
		if took, d := total-b.takenThen, now.Sub(b.since); took > 0 && d > 0 {
			want := float64(took) / d.Seconds() * c.cfg.RefillInterval.Seconds()
			size = int64(min(max(want, float64(b.size)/4), float64(b.size)*4))
		}
		if b.short {
			size = max(size, 2*b.size)
		}
	}
	b.short = false
	b.since, b.takenThen = now, total
	b.size = min(max(size, int64(c.cfg.MinRange)), int64(c.cfg.MaxRange))
	return b.size
}

// load is the goroutine that loads b's next range. A round asks the
// endpoints in turn (Client.get). After a failed round it tries again when
// an endpoint's back-off ends, or at once when a caller is waiting, as
// long as the tag has a range in use: ids keep coming from it meanwhile,
// and the next one is there as soon as a server answers. It stops after a
// round that succeeds, an answer that no retry changes (a 4xx), a failed
// first load (the next call tries again) and Close.
func (c *Client) load(b *tagBuffer, size int64) {
	op := fmt.Sprintf("range of %q", b.tag)
	path := b.path + strconv.FormatInt(size, 10)
	for {
		select { // a kick sent before this round is answered by it
		case <-b.kick:
		default:
		}
		r := rangeAnswer{tag: b.tag, asked: size}
		_, err := c.get(c.ctx, op, path, &r)
		b.mu.Lock()
		if err == nil {
			b.next = &span{start: r.start, size: r.Count, trigger: max(1, r.Count/prefetchQuarter)}
		}
		b.err = err
		close(b.round)
		b.round = make(chan struct{})
		first := err == nil && !b.published
		if first {
			b.published = true
		}
		retry := err != nil && b.published && errors.Is(err, ErrUnavailable) && c.ctx.Err() == nil
		if !retry {
			b.running = false
		}
		published := b.published
		b.mu.Unlock()

		switch {
		case first:
			c.publish(b)
			return
		case err != nil && !published:
			c.unpend(b)
			return
		case !retry:
			return
		}
		t := time.NewTimer(c.retryIn())
		select {
		case <-c.ctx.Done():
		case <-b.kick:
		case <-t.C:
		}
		t.Stop()
		if c.ctx.Err() != nil {
			b.mu.Lock()
			b.running = false
			b.mu.Unlock()
			return
		}
	}
}

// rangeAnswer is the body of GET /api/segment/range/{tag}?count=N:
// {"tag":"orders","start":"1001","count":1000}.
type rangeAnswer struct {
	Tag   string `json:"tag"`
	Start string `json:"start"`
	Count int64  `json:"count"`

	tag   string // asked for
	asked int64
	start int64 // Start, parsed by check
}

func (r *rangeAnswer) check() error {
	start, err := strconv.ParseInt(r.Start, 10, 64)
	switch {
	case r.Tag != r.tag:
		return fmt.Errorf("a range of tag %q, asked for %q", r.Tag, r.tag)
	case err != nil || start < 1:
		return fmt.Errorf("range start %q is not a positive 64-bit integer", r.Start)
	case r.Count < 1 || r.Count > r.asked:
		return fmt.Errorf("range of %d ids, asked for %d", r.Count, r.asked)
	case start > math.MaxInt64-r.Count+1:
		return fmt.Errorf("range of %d ids from %d passes the int64 maximum", r.Count, start)
	}
	r.start = start
	return nil
}
