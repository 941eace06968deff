package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// requestTimeout bounds every request of the suite: a request that takes
// longer is recorded as failed (status 0), never waited for.
const requestTimeout = 15 * time.Second

// clock measures a scenario's times as offsets from its start, so that
// requests, log lines and the faults injected share one time line.
type clock struct{ t0 time.Time }

func newClock() clock { return clock{t0: time.Now()} }

// now is the time since the scenario started.
func (c clock) now() time.Duration { return time.Since(c.t0) }

// at is t as an offset on the scenario's time line.
func (c clock) at(t time.Time) time.Duration { return t.Sub(c.t0) }

// opKind is a kind of request for ids.
type opKind uint8

const (
	segGet opKind = iota
	segBatch
	snowGet
	snowBatch
	numOps
)

func (o opKind) String() string {
	return [...]string{"segment_get", "segment_batch", "snowflake_get", "snowflake_batch"}[o]
}

func (o opKind) segment() bool { return o == segGet || o == segBatch }

// mix is the share of each kind of request and the size of batches.
type mix struct {
	weights [numOps]int // by opKind
	batch   int
}

// loadConfig describes a load: workers per target, each sending requests
// to its target only, one after another.
type loadConfig struct {
	targets []*instance
	// tags are the segment tags each target's workers ask for, by target.
	tags    [][]string
	workers int // per target
	// pace is the time between the starts of two requests of one worker;
	// 0 sends them back to back.
	pace time.Duration
	mix  mix
}

// sample is one request of the load. Times are offsets on the scenario's
// clock.
type sample struct {
	start, dur time.Duration
	status     int16 // 0: no HTTP answer (refused, reset, timed out)
	target     int8
	op         opKind
	tag        int16 // index in load.tagNames; -1 for snowflake
	retryAfter bool  // a Retry-After header came with the answer
	bad        bool  // a 200 whose body is not what the API promises
	ids        int32
}

// idRef is one id received and the request that brought it.
type idRef struct {
	id     int64
	worker int32
	sample int32
}

// load sends requests for ids from goroutines of the test process and keeps
// every id received. stop ends every goroutine; tb.Cleanup calls it too.
type load struct {
	cfg      loadConfig
	clk      clock
	client   *http.Client
	tagNames []string
	tagIndex map[string]int
	workers  []*worker

	segIDs, snowIDs atomic.Int64 // ids received so far

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// sameTags is loadConfig.tags for n instances that all serve tags.
func sameTags(n int, tags []string) [][]string {
	all := make([][]string, n)
	for i := range all {
		all[i] = tags
	}
	return all
}

// worker is one goroutine of a load; its fields are its own until the load
// has stopped.
type worker struct {
	l       *load
	id      int
	target  int
	rng     *rand.Rand
	samples []sample
	seg     [][]idRef // by tag index
	snow    []idRef
	errs    map[string]int // kinds of request failures without an answer
}

func startLoad(tb testing.TB, clk clock, cfg loadConfig) *load {
	tb.Helper()
	l := &load{cfg: cfg, clk: clk, tagIndex: map[string]int{}}
	for _, tags := range cfg.tags {
		for _, tag := range tags {
			if _, ok := l.tagIndex[tag]; !ok {
				l.tagIndex[tag] = len(l.tagNames)
				l.tagNames = append(l.tagNames, tag)
			}
		}
	}
	l.client = &http.Client{
		Timeout: requestTimeout,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: cfg.workers * 2,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	for t := range cfg.targets {
		for range cfg.workers {
			w := &worker{l: l, id: len(l.workers), target: t, errs: map[string]int{},
				seg: make([][]idRef, len(l.tagNames)),
				rng: rand.New(rand.NewPCG(uint64(len(l.workers))+1, uint64(time.Now().UnixNano())))}
			l.workers = append(l.workers, w)
		}
	}
	for _, w := range l.workers {
		l.wg.Go(w.run)
	}
	tb.Cleanup(l.stop)
	return l
}

// stop ends the load and returns once every worker has returned.
func (l *load) stop() {
	l.stopOnce.Do(func() {
		l.cancel()
		l.wg.Wait()
		l.client.CloseIdleConnections()
	})
}

func (w *worker) run() {
	l := w.l
	next := time.Now()
	for l.ctx.Err() == nil {
		if l.cfg.pace > 0 {
			if d := time.Until(next); d > 0 {
				select {
				case <-l.ctx.Done():
					return
				case <-time.After(d):
				}
			}
			next = next.Add(l.cfg.pace)
			if behind := time.Since(next); behind > l.cfg.pace {
				next = time.Now() // a slow request does not make a burst
			}
		}
		s, ok := w.request()
		if !ok {
			return // stopped mid-request: not a sample
		}
		w.samples = append(w.samples, s)
		if s.status == 0 && l.cfg.pace == 0 {
			// A killed instance refuses at once: do not spin on it.
			select {
			case <-l.ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// pick chooses the kind of the next request.
func (w *worker) pick() opKind {
	total := 0
	for _, n := range w.l.cfg.mix.weights {
		total += n
	}
	r := w.rng.IntN(total)
	for o, n := range w.l.cfg.mix.weights {
		if r < n {
			return opKind(o)
		}
		r -= n
	}
	return segGet
}

// request sends one request and keeps its ids; ok is false when the load
// was stopped meanwhile.
func (w *worker) request() (s sample, ok bool) {
	l := w.l
	s = sample{target: int8(w.target), op: w.pick(), tag: -1}
	base := l.cfg.targets[w.target].base()
	var u string
	switch s.op {
	case segGet, segBatch:
		tags := l.cfg.tags[w.target]
		tag := tags[w.rng.IntN(len(tags))]
		s.tag = int16(l.tagIndex[tag])
		u = base + "/api/segment/get/" + url.PathEscape(tag)
		if s.op == segBatch {
			u = base + "/api/segment/batch/" + url.PathEscape(tag) + "?count=" + strconv.Itoa(l.cfg.mix.batch)
		}
	case snowGet:
		u = base + "/api/snowflake/get"
	case snowBatch:
		u = base + "/api/snowflake/batch?count=" + strconv.Itoa(l.cfg.mix.batch)
	}
	start := time.Now()
	s.start = l.clk.at(start)
	status, header, body, err := get(l.ctx, l.client, u, "")
	s.dur = time.Since(start)
	if l.ctx.Err() != nil {
		return s, false
	}
	if err != nil {
		w.errs[errKind(err)]++
		return s, true
	}
	s.status = int16(status)
	s.retryAfter = header.Get("Retry-After") != ""
	if status != http.StatusOK {
		return s, true
	}
	want := 1
	if s.op == segBatch || s.op == snowBatch {
		want = l.cfg.mix.batch
	}
	ids, err := parseIDs(s.op, body, want)
	if err != nil {
		s.bad = true
		return s, true
	}
	s.ids = int32(len(ids))
	ref := idRef{worker: int32(w.id), sample: int32(len(w.samples))}
	if s.op.segment() {
		for _, id := range ids {
			ref.id = id
			w.seg[s.tag] = append(w.seg[s.tag], ref)
		}
		l.segIDs.Add(int64(len(ids)))
	} else {
		for _, id := range ids {
			ref.id = id
			w.snow = append(w.snow, ref)
		}
		l.snowIDs.Add(int64(len(ids)))
	}
	return s, true
}

// get sends a GET, with a bearer token when token is set, and reads the
// whole answer.
func get(ctx context.Context, c *http.Client, u, token string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, body, nil
}

// parseIDs reads the ids of a 200 answer and checks what the API promises:
// want ids, positive, a batch in increasing order.
func parseIDs(op opKind, body []byte, want int) ([]int64, error) {
	var texts []string
	switch op {
	case segGet, snowGet:
		texts = []string{strings.TrimSpace(string(body))}
	default:
		var v struct {
			IDs []string `json:"ids"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, err
		}
		texts = v.IDs
	}
	if len(texts) != want {
		return nil, fmt.Errorf("%d ids, want %d", len(texts), want)
	}
	ids := make([]int64, len(texts))
	for i, t := range texts {
		id, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, err
		}
		if id <= 0 || (i > 0 && id <= ids[i-1]) {
			return nil, fmt.Errorf("id %d at %d: not positive and increasing", id, i)
		}
		ids[i] = id
	}
	return ids, nil
}

// errKind names the failure of a request that got no answer.
func errKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "other"
}

// samples are every request of the load, ordered by start. Call after stop.
func (l *load) samples() []sample {
	var out []sample
	for _, w := range l.workers {
		out = append(out, w.samples...)
	}
	slices.SortFunc(out, func(a, b sample) int { return int(a.start - b.start) })
	return out
}

// segRefs are the segment ids received for the tag. Call after stop.
func (l *load) segRefs(tag string) []idRef {
	i, ok := l.tagIndex[tag]
	if !ok {
		return nil
	}
	var out []idRef
	for _, w := range l.workers {
		out = append(out, w.seg[i]...)
	}
	return out
}

// snowRefs are the snowflake ids received. Call after stop.
func (l *load) snowRefs() []idRef {
	var out []idRef
	for _, w := range l.workers {
		out = append(out, w.snow...)
	}
	return out
}

// errKinds counts the failures without an answer, by kind. Call after stop.
func (l *load) errKinds() map[string]int {
	out := map[string]int{}
	for _, w := range l.workers {
		for k, n := range w.errs {
			out[k] += n
		}
	}
	return out
}

// describe tells which request brought an id, for failure messages.
func (l *load) describe(r idRef) string {
	w := l.workers[r.worker]
	s := w.samples[r.sample]
	tag := ""
	if s.tag >= 0 {
		tag = " " + l.tagNames[s.tag]
	}
	return fmt.Sprintf("instance %s %s%s started at %v", l.cfg.targets[s.target].name, s.op, tag,
		s.start.Round(time.Millisecond))
}

// poll is one request of a poller.
type poll struct {
	start, dur time.Duration
	status     int // 0: no answer
	retryAfter bool
	body       string // the first bytes
}

// poller GETs one URL at a steady interval until stopped and records each
// answer. Requests do not overlap: one that hangs delays the next, and
// pollReadyz polls /readyz of every instance every 100 ms until the test
// ends.
func pollReadyz(tb testing.TB, clk clock, ins []*instance) []*poller {
	out := make([]*poller, len(ins))
	for i, in := range ins {
		out[i] = startPoller(tb, clk, in.base()+"/readyz", "", 100*time.Millisecond)
	}
	return out
}

// shows as a long duration.
type poller struct {
	clk    clock
	url    string
	token  string
	client *http.Client

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex // protects polls
	polls []poll
}

func startPoller(tb testing.TB, clk clock, u, token string, every time.Duration) *poller {
	tb.Helper()
	p := &poller{clk: clk, url: u, token: token, done: make(chan struct{}),
		client: &http.Client{Timeout: requestTimeout, Transport: &http.Transport{DisableCompression: true}}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.run(every)
	tb.Cleanup(func() { p.stop() })
	return p
}

func (p *poller) run(every time.Duration) {
	defer close(p.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		start := time.Now()
		status, header, body, err := get(p.ctx, p.client, p.url, p.token)
		if p.ctx.Err() != nil {
			return
		}
		pl := poll{start: p.clk.at(start), dur: time.Since(start), status: status}
		if err == nil {
			pl.retryAfter = header.Get("Retry-After") != ""
			pl.body = string(body[:min(len(body), 200)])
		} else {
			pl.body = err.Error()
		}
		p.mu.Lock()
		p.polls = append(p.polls, pl)
		p.mu.Unlock()
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stop ends the poller and returns its polls.
func (p *poller) stop() []poll {
	p.cancel()
	<-p.done
	p.client.CloseIdleConnections()
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.polls)
}
