package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/sequence"
)

// idKind is one kind of id of TestMatrix: how it is made (an admin API
// request), how it is asked for (routes, by weight), and what it promises
// (how its answers are read and checked).
type idKind struct {
	name string
	// name of the tag or of the sequence space.
	tag string
	// create is the admin API request that makes the tag or space.
	createPath, createBody string
	ops                    []kindOp
	workers                int
	pace                   time.Duration // between two calls of a worker
	form                   valueForm
	order                  orderRule
	// owned: served by one owner at a time, under a lease: unavailable
	// for about a lease when its owner dies, and its numbers skipped only
	// then, at most step for each owner lost.
	owned bool
	step  int64
	// dense: the numbers skipped are bounded (the owned kinds whose
	// numbers people count: ordered and capped tags).
	dense bool
	// prefix and width of a formatted id: prefix, the date as 20060102,
	// "-", the number on width digits at least (capped: exactly).
	prefix string
	width  int
	// capped: the last number of a period, for a capped format.
	capped int64
}

// kindOp is a route of a kind, asked for with count ids.
type kindOp struct {
	route  route
	count  int
	weight int
}

// route is a kind of request.
type route uint8

const (
	routeGet       route = iota // GET /api/segment/get/{tag}
	routeBatch                  // GET /api/segment/batch/{tag}?count=N
	routeRange                  // GET /api/segment/range/{tag}?count=N
	routeNext                   // GET /api/sequence/next/{space}/{key}[?count=N]
	routeSnowGet                // GET /api/snowflake/get
	routeSnowBatch              // GET /api/snowflake/batch?count=N
)

// valueForm is how a kind's ids are read.
type valueForm uint8

const (
	formNumber    valueForm = iota // decimal ids, checked as numbers
	formFormatted                  // texts PREFIX-20060102-000042, checked as texts
	formOpaque                     // decimal ids, made from numbers the key turns back
	formKeyed                      // per-key sequence numbers, checked per key
)

// orderRule is the order a kind promises.
type orderRule uint8

const (
	orderNone    orderRule = iota // unique only
	orderProcess                  // increasing within one process of one instance
	orderFleet                    // strictly increasing across the fleet, in the order of the calls
	orderKey                      // the same, per key
)

// Settings of the kinds.
const (
	// matrixKey is the fleet's opaque key.
	matrixKey = "fault-suite-opaque-key-0001"
	// matrixSections are the sequence space's sections: few, so that each
	// gets many calls a second and its gaps are measured finely.
	matrixSections = 8
	// matrixKeys are the sequence keys asked for; the first matrixHotKeys
	// get a fifth of the calls.
	matrixKeys    = 1000
	matrixHotKeys = 8
	// cappedLast is the last number of a period of {seq:5!}.
	cappedLast = 99_999
	// matrixPace is the time between two calls of a worker.
	matrixPace = 8 * time.Millisecond
)

// matrixKinds are every kind of id leaf serves.
var matrixKinds = []*idKind{
	{
		name: "plain", tag: "mx-plain", createPath: "/api/admin/tags", createBody: `{"tag":"mx-plain","step":1000}`,
		ops:     []kindOp{{routeGet, 1, 4}, {routeBatch, 20, 3}, {routeRange, 50, 1}},
		workers: 2, pace: matrixPace, form: formNumber, order: orderProcess, step: 1000,
	},
	{
		name: "ordered", tag: "mx-ordered", createPath: "/api/admin/tags", createBody: `{"tag":"mx-ordered","step":100,"ordered":true}`,
		ops:     []kindOp{{routeGet, 1, 3}, {routeBatch, 10, 1}},
		workers: 2, pace: matrixPace, form: formNumber, order: orderFleet, owned: true, dense: true, step: 100,
	},
	{
		name: "open", tag: "mx-open", createPath: "/api/admin/tags",
		createBody: `{"tag":"mx-open","step":100,"format":"O-{date:20060102}-{seq:6}","reset":"day"}`,
		ops:        []kindOp{{routeGet, 1, 3}, {routeBatch, 10, 1}},
		workers:    2, pace: matrixPace, form: formFormatted, prefix: "O-", width: 6, step: 100,
	},
	{
		name: "capped", tag: "mx-capped", createPath: "/api/admin/tags",
		createBody: `{"tag":"mx-capped","step":100,"format":"C-{date:20060102}-{seq:5!}","reset":"day"}`,
		ops:        []kindOp{{routeGet, 1, 3}, {routeBatch, 5, 1}},
		workers:    2, pace: 10 * time.Millisecond, form: formFormatted, prefix: "C-", width: 5, capped: cappedLast,
		order: orderFleet, owned: true, dense: true, step: 100,
	},
	{
		name: "fmt_ordered", tag: "mx-fordered", createPath: "/api/admin/tags",
		createBody: `{"tag":"mx-fordered","step":100,"format":"F-{date:20060102}-{seq:6}","reset":"day","ordered":true}`,
		ops:        []kindOp{{routeGet, 1, 3}, {routeBatch, 5, 1}},
		workers:    2, pace: matrixPace, form: formFormatted, prefix: "F-", width: 6,
		order: orderFleet, owned: true, dense: true, step: 100,
	},
	{
		name: "opaque", tag: "mx-opaque", createPath: "/api/admin/tags", createBody: `{"tag":"mx-opaque","step":1000,"opaque":63}`,
		ops:     []kindOp{{routeGet, 1, 3}, {routeBatch, 20, 1}},
		workers: 2, pace: matrixPace, form: formOpaque, step: 1000,
	},
	{
		name: "sequences", tag: "mx-seq", createPath: "/api/admin/sequences",
		createBody: fmt.Sprintf(`{"space":"mx-seq","step":100,"sections":%d}`, matrixSections),
		ops:        []kindOp{{routeNext, 1, 7}, {routeNext, 5, 1}},
		workers:    3, pace: matrixPace, form: formKeyed, order: orderKey, owned: true, step: 100,
	},
	{
		name: "snowflake", ops: []kindOp{{routeSnowGet, 1, 3}, {routeSnowBatch, 20, 1}},
		workers: 2, pace: matrixPace, form: formNumber,
	},
}

// path is the URL path and query of a request of op, for key (sequences).
func (k *idKind) path(op kindOp, key string) string {
	q := ""
	if op.count > 1 || op.route == routeBatch || op.route == routeRange || op.route == routeSnowBatch {
		q = "?count=" + strconv.Itoa(op.count)
	}
	switch op.route {
	case routeGet:
		return "/api/segment/get/" + url.PathEscape(k.tag)
	case routeBatch:
		return "/api/segment/batch/" + url.PathEscape(k.tag) + q
	case routeRange:
		return "/api/segment/range/" + url.PathEscape(k.tag) + q
	case routeNext:
		return "/api/sequence/next/" + url.PathEscape(k.tag) + "/" + url.PathEscape(key) + q
	case routeSnowGet:
		return "/api/snowflake/get"
	default:
		return "/api/snowflake/batch" + q
	}
}

// mvalue is one id of an answer, or a range of ids (the range route):
// n..hi are its numbers; id is the id as answered when it is a number
// (an opaque id, whose number n the key turns back); text a formatted id,
// whose number n is counted in its period, group.
type mvalue struct {
	group int64 // the period of a formatted id (20261126), the key of a sequence, else 0
	n, hi int64
	id    int64
	text  string
	call  int32 // in the kind's calls
}

// mcall is one call of a kind: its attempts, instance after instance,
// until one answered or each was tried.
type mcall struct {
	start, end time.Duration
	op         int8
	target     int8  // the instance that gave the final answer; -1: none answered
	run        int16 // its process (instance.runs), for the order within a process
	status     int16 // the final answer: 200, a refusal such as 409; 0: no instance answered
	code       string
	key        int32  // the sequence key asked for; -1 for a tag
	msg        string // the body of an answer other than 200
	bad        bool   // a 200 that breaks the API's promises
	lo, hi     int64  // its numbers in the kind's order, for the order checks
}

// attemptFail is one attempt of a call that got no answer, or a 503: the
// call went on at the next instance.
type attemptFail struct {
	at     time.Duration // when the attempt began
	end    time.Duration // when it failed
	target int8
	what   string // conn_refused, conn_reset, http_503_unavailable, …
	count  int32  // the numbers asked for
}

// kindLoad is the load of one kind, and what it gathered.
type kindLoad struct {
	kind    *idKind
	created bool
	// createErr is why the kind could not be made; its load does not run.
	createErr string
	cipher    *bizid.Cipher // opaque
	keys      []string      // sequences
	clk       clock
	workers   []*kindWorker

	// Set once the load stopped: every worker's, in one list.
	calls  []mcall
	values []mvalue
	fails  []attemptFail
}

// kindWorker is one goroutine calling for ids of a kind, as a client
// behind a load balancer would: each call goes to the next instance in
// turn and, when it gets no answer or a 503, to the next one, until each
// instance was tried once. Its fields are its own until the load stopped.
type kindWorker struct {
	m    *matrixRun
	kl   *kindLoad
	id   int
	rng  *rand.Rand
	turn int

	calls  []mcall
	values []mvalue
	fails  []attemptFail
}

func (w *kindWorker) run() {
	m := w.m
	next := time.Now()
	single := false // draining: batches were refused, single ids go on
	for m.ctx.Err() == nil {
		draining := w.kl.kind.capped > 0 && m.draining()
		if !draining {
			if d := time.Until(next); d > 0 && !sleepCtx(m.ctx, d) {
				return
			}
			next = next.Add(w.kl.kind.pace)
			if time.Since(next) > w.kl.kind.pace {
				next = time.Now()
			}
		}
		op := w.pick()
		switch {
		case draining && single:
			op = 0 // a capped kind's first op is a get
		case draining:
			op = -1 // a batch of drainBatch
		}
		c, ok := w.call(op)
		if !ok {
			return
		}
		if draining && c.status == http.StatusConflict && c.code == "sequence_full" {
			if single {
				m.drainEnded()
				return
			}
			single = true
		}
		if c.status != http.StatusOK && c.status != http.StatusConflict && !sleepCtx(m.ctx, 20*time.Millisecond) {
			return
		}
	}
}

// drainBatch is the count of the batches that take a capped period to
// its end.
const drainBatch = 20

// pick chooses the op of the next call, by weight.
func (w *kindWorker) pick() int {
	ops := w.kl.kind.ops
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	r := w.rng.IntN(total)
	for i, o := range ops {
		if r < o.weight {
			return i
		}
		r -= o.weight
	}
	return 0
}

// call makes one call of op (-1: a drain batch) and keeps what it got; ok
// is false when the load stopped meanwhile.
func (w *kindWorker) call(opIdx int) (c mcall, ok bool) {
	m, k := w.m, w.kl.kind
	op := kindOp{route: routeBatch, count: drainBatch}
	if opIdx >= 0 {
		op = k.ops[opIdx]
	}
	c = mcall{op: int8(opIdx), target: -1, key: -1}
	key := ""
	if k.form == formKeyed {
		c.key = int32(w.rng.IntN(matrixKeys))
		if w.rng.IntN(5) == 0 {
			c.key = int32(w.rng.IntN(matrixHotKeys))
		}
		key = w.kl.keys[c.key]
	}
	path := k.path(op, key)
	first := w.turn
	w.turn++
	c.start = m.clk.now()
	var body []byte
	for a := range len(m.ins) {
		t := (first + a) % len(m.ins)
		in := m.ins[t]
		run := 0
		if p := in.running(); p != nil {
			run = p.run
		}
		at := m.clk.now()
		// Go's transport sends a GET again on a new connection when a
		// kept-alive one fails before the answer; a refused dial then
		// hides a request that was sent, whose numbers may be issued.
		reused := false
		ctx := httptrace.WithClientTrace(m.ctx, &httptrace.ClientTrace{
			GotConn: func(ci httptrace.GotConnInfo) { reused = reused || ci.Reused },
		})
		status, header, b, err := get(ctx, m.client, in.base()+path, "")
		if m.ctx.Err() != nil {
			// Cut off by the end of the load: it may have issued its
			// numbers, and a call of another client above them ended.
			w.fails = append(w.fails, attemptFail{at: at, end: m.clk.now(), target: int8(t), what: "cut_at_the_end", count: int32(max(op.count, 1))})
			return c, false
		}
		if err != nil {
			what := "conn_" + errKind(err)
			if what == "conn_refused" && reused {
				what = "conn_refused_after_sent"
			}
			w.fails = append(w.fails, attemptFail{at: at, end: m.clk.now(), target: int8(t), what: what, count: int32(max(op.count, 1))})
			continue
		}
		if status == http.StatusServiceUnavailable || status == http.StatusBadGateway || status == http.StatusGatewayTimeout {
			what := fmt.Sprintf("http_%d_%s", status, errorCode(b))
			if header.Get("Retry-After") == "" && status == http.StatusServiceUnavailable {
				what += "_no_retry_after"
			}
			w.fails = append(w.fails, attemptFail{at: at, end: m.clk.now(), target: int8(t), what: what, count: int32(max(op.count, 1))})
			continue
		}
		c.target, c.run, c.status, body = int8(t), int16(run), int16(status), b
		if status != http.StatusOK {
			c.code, c.msg = errorCode(b), string(b)
		}
		break
	}
	c.end = m.clk.now()
	idx := int32(len(w.calls))
	if c.status == http.StatusOK {
		vals, err := w.kl.read(op, body, c)
		if err != nil {
			c.bad = true
			c.code = err.Error()
		} else {
			for i := range vals {
				vals[i].call = idx
				if i == 0 || vals[i].order(k) < c.lo {
					c.lo = vals[i].order(k)
				}
				c.hi = max(c.hi, vals[i].orderHi(k))
			}
			w.values = append(w.values, vals...)
		}
	}
	w.calls = append(w.calls, c)
	return c, true
}

// order is the value's place in the kind's order: a formatted id's
// period before its number.
func (v mvalue) order(k *idKind) int64 {
	if k.form == formFormatted {
		return v.group*1e10 + v.n
	}
	return v.n
}

func (v mvalue) orderHi(k *idKind) int64 { return v.order(k) + v.hi - v.n }

// read reads the ids of an answer 200 to op and checks what the API
// promises: as many as asked for (a range: 1 to count; a capped tag's
// batch may be cut at the end of the period), each valid for the kind,
// a batch in increasing order but an opaque tag's.
func (kl *kindLoad) read(op kindOp, body []byte, c mcall) ([]mvalue, error) {
	k := kl.kind
	var texts []string
	switch op.route {
	case routeGet, routeSnowGet:
		texts = []string{strings.TrimSpace(string(body))}
	case routeNext:
		if op.count == 1 {
			texts = []string{strings.TrimSpace(string(body))}
			break
		}
		fallthrough
	case routeBatch, routeSnowBatch:
		var v struct {
			IDs  []string `json:"ids"`
			Seqs []string `json:"seqs"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, err
		}
		texts = append(v.IDs, v.Seqs...)
	case routeRange:
		var v struct {
			Start string `json:"start"`
			Count int64  `json:"count"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, err
		}
		start, err := strconv.ParseInt(v.Start, 10, 64)
		if err != nil || start <= 0 || v.Count < 1 || v.Count > int64(op.count) {
			return nil, fmt.Errorf("range from %q of %d ids, asked for %d", v.Start, v.Count, op.count)
		}
		return []mvalue{{n: start, hi: start + v.Count - 1, id: start}}, nil
	}
	if len(texts) != op.count && (k.capped == 0 || len(texts) < 1 || len(texts) > op.count) {
		return nil, fmt.Errorf("%d ids, asked for %d", len(texts), op.count)
	}
	out := make([]mvalue, len(texts))
	for i, s := range texts {
		v, err := kl.value(s, c)
		if err != nil {
			return nil, err
		}
		if i > 0 && k.form != formOpaque && v.order(k) <= out[i-1].order(k) {
			return nil, fmt.Errorf("batch not increasing: %q after %q", s, texts[i-1])
		}
		out[i] = v
	}
	return out, nil
}

// value reads one id of the kind.
func (kl *kindLoad) value(s string, c mcall) (mvalue, error) {
	k := kl.kind
	if k.form == formFormatted {
		return k.parseFormatted(s, c, kl.clk)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return mvalue{}, fmt.Errorf("id %q: not a positive number", s)
	}
	v := mvalue{n: n, hi: n, id: n}
	switch k.form {
	case formOpaque:
		if v.n, err = kl.cipher.Decode(n); err != nil {
			return mvalue{}, fmt.Errorf("opaque id %d: %w", n, err)
		}
		v.hi = v.n
	case formKeyed:
		v.group = int64(c.key)
	}
	return v, nil
}

// parseFormatted reads PREFIX-20060102-NNNNNN: the date must be the day
// of the call in UTC, and the number shown as the format shows it.
func (k *idKind) parseFormatted(s string, c mcall, clk clock) (mvalue, error) {
	rest, ok := strings.CutPrefix(s, k.prefix)
	date, seq, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 || len(date) != 8 {
		return mvalue{}, fmt.Errorf("id %q: not %sYYYYMMDD-%s", s, k.prefix, strings.Repeat("N", k.width))
	}
	d, err := strconv.ParseInt(date, 10, 64)
	if err != nil {
		return mvalue{}, fmt.Errorf("id %q: date %q", s, date)
	}
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || n <= 0 || fmt.Sprintf("%0*d", k.width, n) != seq || (k.capped > 0 && n > k.capped) {
		return mvalue{}, fmt.Errorf("id %q: number %q is not shown on %d digits", s, seq, k.width)
	}
	if day := clk.day(c.start); d != day && d != clk.day(c.end) {
		return mvalue{}, fmt.Errorf("id %q: the date is not the day of the call, %d", s, day)
	}
	return mvalue{group: d, n: n, hi: n, text: s}, nil
}

// day is the UTC day, as 20061102, of an offset on the clock.
func (c clock) day(at time.Duration) int64 {
	d, _ := strconv.ParseInt(c.t0.Add(at).UTC().Format("20060102"), 10, 64)
	return d
}

// unit is what a call of the kind asks about, for the availability
// measures: the section of its key, or 0.
func (kl *kindLoad) unit(c mcall) int {
	if c.key < 0 {
		return 0
	}
	return sequence.SectionOf(kl.keys[c.key], matrixSections)
}

// start makes the kind's workers and starts them.
func (kl *kindLoad) start(m *matrixRun) {
	k := kl.kind
	kl.clk = m.clk
	if k.form == formKeyed {
		kl.keys = make([]string, matrixKeys)
		for i := range kl.keys {
			kl.keys[i] = "key-" + strconv.Itoa(i)
		}
	}
	for i := range k.workers {
		w := &kindWorker{m: m, kl: kl, id: i, turn: i,
			rng: rand.New(rand.NewPCG(uint64(i)+1, uint64(time.Now().UnixNano())))}
		kl.workers = append(kl.workers, w)
		m.wg.Go(w.run)
	}
}

// gather puts every worker's calls, values and failed attempts in one
// list each, values pointing at the calls of the one list. Call after the
// load stopped.
func (kl *kindLoad) gather() {
	for _, w := range kl.workers {
		off := int32(len(kl.calls))
		kl.calls = append(kl.calls, w.calls...)
		for _, v := range w.values {
			v.call += off
			kl.values = append(kl.values, v)
		}
		kl.fails = append(kl.fails, w.fails...)
	}
}

// create makes the kind's tag or space through instance in's admin API.
func (kl *kindLoad) create(ctx context.Context, c *http.Client, in *instance) {
	k := kl.kind
	if k.createPath == "" {
		kl.created = true
		return
	}
	status, body, err := post(ctx, c, in.base()+k.createPath, adminToken, k.createBody)
	switch {
	case err != nil:
		kl.createErr = err.Error()
	case status != http.StatusCreated:
		kl.createErr = fmt.Sprintf("%d %s", status, strings.TrimSpace(string(body)))
	default:
		kl.created = true
	}
}

// post sends a POST of a JSON body with a bearer token and reads the
// whole answer.
func post(ctx context.Context, c *http.Client, u, token, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}
