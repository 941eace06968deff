package service

import (
	"context"
	"fmt"

	"github.com/leafid/leaf/sequence"
)

// Calls for numbers of one ordered tag or one sequence key that reach an
// instance not owning it are coalesced: while a forwarded request for that
// tag or key is on its way to the owner, the calls that arrive wait, and
// the next request asks for all their numbers at once (up to maxTake),
// then hands them out in the order the calls arrived. One request to the
// owner serves many calls, as seqsvr batches the calls its proxies carry.
//
// The promise holds: every waiting call began before its request was sent
// and ends after its answer came, so the numbers it gets were taken within
// its own lifetime, above those of every call that had ended before it
// began; calls that overlap in time may be answered in any order among
// themselves.

// maxTake is the most numbers one forwarded request asks for: the largest
// batch of a tag and of a key.
const maxTake = min(MaxCount, sequence.MaxCount)

// takeKey names the numbers a forwarded request takes: the owner, and
// an ordered tag (tag) or a key of a space.
type takeKey struct {
	addr, tag, space, key string
}

// take is one call waiting for n numbers.
type take struct {
	n    int
	done chan takeResult // buffered: the sender never waits
}

type takeResult struct {
	nums []int64
	err  error
}

// takeQueue is the calls of one takeKey waiting for the next request; it
// is in Forwarder.takes while a goroutine sends its requests.
type takeQueue struct {
	waiting []*take
}

// takeOwned takes n numbers of k from its owner with the calls for the
// same numbers waiting beside it. A call whose ctx ends before its numbers
// come is unavailable; its numbers, when they come, are skipped.
func (f *Forwarder) takeOwned(ctx context.Context, k takeKey, n int) ([]int64, error) {
	t := &take{n: n, done: make(chan takeResult, 1)}
	f.mu.Lock()
	q, sending := f.takes[k]
	if !sending {
		q = &takeQueue{}
		f.takes[k] = q
	}
	q.waiting = append(q.waiting, t)
	f.mu.Unlock()
	if !sending {
		go f.sendTakes(k, q)
	}
	select {
	case r := <-t.done:
		return r.nums, r.err
	case <-ctx.Done():
		return nil, Errorf(Unavailable, "the owner did not answer in time; retry later")
	}
}

// sendTakes sends the requests of k's queue, one at a time, each for the
// numbers of every call waiting when it leaves, until none waits.
func (f *Forwarder) sendTakes(k takeKey, q *takeQueue) {
	for {
		f.mu.Lock()
		total, i := 0, 0
		for i < len(q.waiting) && (i == 0 || total+q.waiting[i].n <= maxTake) {
			total += q.waiting[i].n
			i++
		}
		batch := q.waiting[:i:i]
		q.waiting = q.waiting[i:]
		if len(batch) == 0 {
			delete(f.takes, k)
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		nums, err := f.takeOnce(k, total)
		f.coalesced.Add(float64(len(batch)))
		for _, t := range batch {
			if err != nil {
				t.done <- takeResult{err: err}
				continue
			}
			t.done <- takeResult{nums: nums[:t.n:t.n]}
			nums = nums[t.n:]
		}
	}
}

// takeOnce asks the owner for n numbers of k, as one forwarded request.
func (f *Forwarder) takeOnce(k takeKey, n int) ([]int64, error) {
	var nums []int64
	err := f.ask(context.Background(), k.addr, false, func(ctx context.Context, p Peer) (err error) {
		if k.tag != "" {
			nums, err = p.TagNumbers(ctx, k.addr, k.tag, n)
		} else {
			nums, err = p.KeyNext(ctx, k.addr, k.space, k.key, n)
		}
		if err == nil && len(nums) != n {
			err = fmt.Errorf("asked the owner for %d numbers, got %d", n, len(nums))
		}
		return err
	})
	return nums, err
}
