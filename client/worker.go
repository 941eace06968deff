package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// Worker is a worker id of the fleet's, leased for snowflake ids made in
// this process (POST /api/snowflake/leases): from the pool the servers
// lease their own from, so no other generator of the fleet, leaf's or a
// client's, makes ids with it meanwhile. Next makes ids at memory speed,
// no call per id. The lease is kept as leaf's own generator keeps its
// own: a reserve (now plus the TTL less a margin) is recorded before ids
// are made up to it, renewals run in the background every third of the
// TTL, and the worker makes no id once a renewal was refused (lease_lost)
// or none succeeded within the TTL less the margin; ids start above the
// floor the lease came with, the last time an earlier holder of the id may
// have used. ID gives the id to another library's generator (bwmarrin/
// snowflake's node, sonyflake's machine id) that asks Valid before each
// id. A Worker is safe for concurrent use.
type Worker struct {
	c         *Client
	ttl       time.Duration
	margin    time.Duration
	id        int64
	layout    SnowflakeLayout
	token     string
	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	floor   int64     // Unix ms: ids are made above it
	reserve int64     // Unix ms: no id past it
	until   time.Time // no id after it (local clock) unless renewed
	lost    error     // set once a renewal was refused, or at Close
	last    int64     // unit of time of the last id
	seq     int64     // the next sequence number in last
}

// ErrWorkerNotRenewed: no renewal of the worker lease succeeded within its
// TTL less the margin; ids resume once one does.
var ErrWorkerNotRenewed = errors.New("leaf client: worker lease not renewed in time")

type workerAnswer struct {
	WorkerID  int64         `json:"worker_id"`
	Lease     string        `json:"lease"`
	FloorMs   int64         `json:"floor_ms"`
	ReserveMs int64         `json:"reserve_ms"`
	Layout    *layoutAnswer `json:"layout"`
}

func (a *workerAnswer) check() error {
	if a.Lease == "" || a.WorkerID < 0 || a.Layout == nil {
		return errors.New("not a worker lease")
	}
	return a.Layout.check()
}

// LeaseWorker leases a worker id for holder (a name of this process: its
// host and pid, say) for ttl (3 s to 10 min; 30 s is a good choice) and
// starts renewing it. Close releases it.
func (c *Client) LeaseWorker(ctx context.Context, holder string, ttl time.Duration) (*Worker, error) {
	w := &Worker{c: c, ttl: ttl, margin: ttl / 5, done: make(chan struct{})}
	start := c.now()
	reserve := start.Add(ttl - w.margin).UnixMilli()
	body, _ := json.Marshal(map[string]any{"holder": holder, "ttl_ms": ttl.Milliseconds(), "reserve_ms": reserve})
	var a workerAnswer
	if _, err := c.do(ctx, "lease a worker id", "POST", "/api/snowflake/leases", body, &a); err != nil {
		return nil, err
	}
	w.id, w.token, w.layout = a.WorkerID, a.Lease, a.Layout.layout()
	w.floor, w.reserve, w.until = a.FloorMs, a.ReserveMs, start.Add(ttl-w.margin)
	w.last = w.unitOf(a.FloorMs)
	w.seq = 1 << w.layout.SequenceBits // the floor's unit is spent
	rctx, stop := context.WithCancel(c.ctx)
	w.stop = stop
	go w.renewLoop(rctx)
	return w, nil
}

// ID is the worker id leased.
func (w *Worker) ID() int64 { return w.id }

// Layout is the layout of the fleet's snowflake ids.
func (w *Worker) Layout() SnowflakeLayout { return w.layout }

// Floor is the last time an earlier holder of the worker id may have made
// an id at: another library's generator given ID starts after it.
func (w *Worker) Floor() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.UnixMilli(w.floor)
}

// Valid is nil while the lease lets this process make ids now.
func (w *Worker) Valid() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.validLocked(w.c.now())
}

func (w *Worker) validLocked(now time.Time) error {
	switch {
	case w.lost != nil:
		return w.lost
	case !now.Before(w.until):
		return ErrWorkerNotRenewed
	}
	return nil
}

func (w *Worker) unitOf(ms int64) int64 {
	return floorDiv(ms-w.layout.Epoch.UnixMilli(), w.layout.unitMs())
}

// Next makes a snowflake id of the fleet's layout with this worker id:
// above every id it made before, above the floor, within the reserve.
// When the current unit of time has no sequence number left it waits for
// the next; it fails while the lease is not valid, or when the clock is
// behind the last id by more than a unit.
func (w *Worker) Next() (int64, error) {
	for {
		w.mu.Lock()
		now := w.c.now()
		if err := w.validLocked(now); err != nil {
			w.mu.Unlock()
			return 0, err
		}
		unit := w.unitOf(now.UnixMilli())
		if unit > w.unitOf(w.reserve) {
			w.mu.Unlock()
			return 0, ErrWorkerNotRenewed
		}
		if unit > w.last {
			w.last, w.seq = unit, 0
		}
		if w.seq < 1<<w.layout.SequenceBits {
			id := w.compose(w.last, w.seq)
			w.seq++
			w.mu.Unlock()
			return id, nil
		}
		// The unit of the last id is spent (or is the floor's): wait for
		// the clock to reach the next, a second at most; the last stretch
		// yields rather than sleeps, which overshoots a millisecond.
		wait := time.UnixMilli(w.layout.Epoch.UnixMilli() + (w.last+1)*w.layout.unitMs()).Sub(now)
		w.mu.Unlock()
		switch {
		case wait > time.Second:
			return 0, fmt.Errorf("leaf client: the clock is %v behind the worker's last id or floor", wait)
		case wait > time.Millisecond:
			time.Sleep(wait - time.Millisecond)
		default:
			runtime.Gosched()
		}
	}
}

func (w *Worker) compose(unit, seq int64) int64 {
	s := w.layout.timeShift()
	if w.layout.SequenceAboveWorker {
		return unit<<s | seq<<uint(w.layout.WorkerBits) | w.id
	}
	return unit<<s | w.id<<uint(w.layout.SequenceBits) | seq
}

func (w *Worker) renewLoop(ctx context.Context) {
	defer close(w.done)
	every := w.ttl / 3
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next := every
		if err := w.renew(ctx); err != nil && !errors.Is(err, ErrLeaseLost) {
			next = min(every, time.Second) // try again soon
		} else if err != nil {
			return
		}
		t.Reset(next)
	}
}

func (w *Worker) renew(ctx context.Context) error {
	start := w.c.now()
	reserve := start.Add(w.ttl - w.margin).UnixMilli()
	body, _ := json.Marshal(map[string]any{"lease": w.token, "ttl_ms": w.ttl.Milliseconds(), "reserve_ms": reserve})
	var a workerAnswer
	_, err := w.c.do(ctx, "renew a worker lease", "PUT", "/api/snowflake/leases/"+strconv.FormatInt(w.id, 10), body, &a)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case errors.Is(err, ErrLeaseLost):
		w.lost = err
	case err == nil:
		w.reserve, w.until = max(w.reserve, a.ReserveMs), start.Add(w.ttl-w.margin)
	}
	return err
}

// Close stops renewing and releases the lease, recording the last time
// this process made an id at; no id is made after it. Calls after the
// first return the first's result.
func (w *Worker) Close(ctx context.Context) error {
	w.closeOnce.Do(func() {
		w.stop()
		<-w.done
		w.mu.Lock()
		last := max(w.layout.Epoch.UnixMilli()+w.last*w.layout.unitMs()+w.layout.unitMs()-1, w.floor)
		w.lost = fmt.Errorf("%w: the worker was closed", ErrClosed)
		w.mu.Unlock()
		body, _ := json.Marshal(map[string]any{"lease": w.token, "last_ms": last})
		_, w.closeErr = w.c.do(ctx, "release a worker lease", "DELETE", "/api/snowflake/leases/"+strconv.FormatInt(w.id, 10), body, nil)
	})
	return w.closeErr
}
