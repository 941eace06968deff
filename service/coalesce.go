package service

import (
	"context"
	"net/url"
	"strconv"

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

// takeKey names the numbers a forwarded request takes: the owner, the
// request's path without its count, and the member of the answer that
// holds the numbers.
type takeKey struct {
	addr, path, member string
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

// takeOwned takes n numbers from the owner at addr with the calls for the
// same numbers waiting beside it: path is the HTTP API's path of a batch
// (a tag's or a key's), member the member of its answer that lists them.
// A call whose ctx ends before its numbers come is unavailable; its
// numbers, when they come, are skipped.
func (f *Forwarder) takeOwned(ctx context.Context, addr, path, member string, n int) ([]int64, error) {
	t := &take{n: n, done: make(chan takeResult, 1)}
	k := takeKey{addr: addr, path: path, member: member}
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
	ans, err := f.Forward(context.Background(), k.addr, k.path+"?count="+strconv.Itoa(n), false)
	if err != nil {
		return nil, err
	}
	return ans.Numbers(k.member, n)
}

// tagBatchPath and keyNextPath are the HTTP API's paths of an ordered
// tag's batch and of a key's next numbers, without their count.
func tagBatchPath(tag string) string { return "/api/segment/batch/" + url.PathEscape(tag) }

func keyNextPath(space, key string) string {
	return "/api/sequence/next/" + url.PathEscape(space) + "/" + url.PathEscape(key)
}
