package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
)

// HeaderForwarded marks a request that an instance forwarded to the owner
// of a sequence section or an ordered tag, over the HTTP API. An instance
// that gets one for a section or tag it does not own answers 503 with
// Retry-After rather than forward it again: a request hops at most once.
// The HTTP routes and the gRPC calls forward the same way, through one
// Forwarder.
const HeaderForwarded = "Leaf-Forwarded"

// DefaultForwardTimeout bounds a forwarded request when no other bound is
// given.
const DefaultForwardTimeout = 2 * time.Second

// maxForwardedBody bounds the answer of a forwarded request: the longest
// an owner gives is a batch of MaxCount texts of a formatted tag, each at
// most maxTextJSON bytes and a comma (about 15 MB). A longer answer is
// refused, never passed on cut.
const maxForwardedBody = MaxCount*(maxTextJSON+1) + 1<<10

// maxTextJSON bounds a formatted id in a JSON answer: each byte of its
// format written as at most six (a '<' is \u003c; a date widens its layout
// less, "MST" writing "+0530"), a number of up to MaxSeqWidth digits, and
// the quotes.
const maxTextJSON = 6*bizid.MaxFormatLen + bizid.MaxSeqWidth + 2

// Results of a forward, the label of leaf_sequence_forwards_total.
const (
	forwardOK      = "ok"      // the owner answered (whatever its status)
	forwardFailed  = "failed"  // the owner did not answer
	forwardRefused = "refused" // a forwarded request reached a non-owner
)

var forwardResults = []string{forwardOK, forwardFailed, forwardRefused}

// Forwarder sends a request for a sequence section or an ordered tag that
// another instance owns to the owner's HTTP API, marked with
// HeaderForwarded, and counts every forward, of either edge, in
// leaf_sequence_forwards_total. The HTTP API is the protocol between
// instances: the HTTP routes pass the owner's answer on as it is, the gRPC
// calls read it.
type Forwarder struct {
	client    *http.Client
	forwards  *prometheus.CounterVec
	coalesced prometheus.Counter
	log       *slog.Logger

	mu    sync.Mutex
	takes map[takeKey]*takeQueue // the tags and keys whose requests are under way
}

// NewForwarder returns a Forwarder whose requests end after timeout
// (DefaultForwardTimeout when 0), counting them on reg. Both edges may
// build one on the same registry: they share the counter.
func NewForwarder(reg prometheus.Registerer, timeout time.Duration, log *slog.Logger) *Forwarder {
	if timeout <= 0 {
		timeout = DefaultForwardTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Forwarder{
		client: &http.Client{
			Timeout: timeout,
			Transport: &http.Transport{
				MaxIdleConnsPerHost: 64,
				IdleConnTimeout:     time.Minute,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		forwards: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leaf_sequence_forwards_total",
			Help: "Requests and calls, over HTTP or gRPC, sent on to the owner of a sequence section or an ordered tag, by result: ok (the owner answered), failed (it did not), refused (a forwarded request that reached an instance not owning the section or tag, answered 503).",
		}, []string{"result"}),
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "leaf_sequence_forwarded_calls_total",
			Help: "Calls, over HTTP or gRPC, for an ordered tag's or a sequence key's next numbers that another instance owns, answered through a forwarded request: the calls for one tag or key waiting at once share one request (leaf_sequence_forwards_total).",
		}),
		log:   log,
		takes: map[takeKey]*takeQueue{},
	}
	f.forwards = Register(reg, f.forwards)
	f.coalesced = Register(reg, f.coalesced)
	for _, r := range forwardResults {
		f.forwards.WithLabelValues(r)
	}
	return f
}

// Forwards is the number of forwards counted so far, of every result.
func (f *Forwarder) Forwards() int64 {
	var n int64
	for _, r := range forwardResults {
		n += counterValue(f.forwards.WithLabelValues(r))
	}
	return n
}

// Answer is the owner's answer to a forwarded request.
type Answer struct {
	Status      int
	ContentType string
	RetryAfter  string
	Body        []byte
}

// Forward sends GET target (a path and query of the HTTP API) to the owner
// at addr and returns its answer, whatever its status. A request that
// came forwarded already (forwarded) is not sent again: it is refused as
// unavailable. An owner that does not answer is unavailable too. Every
// outcome is counted.
func (f *Forwarder) Forward(ctx context.Context, addr, target string, forwarded bool) (*Answer, error) {
	if forwarded {
		f.forwards.WithLabelValues(forwardRefused).Inc()
		return nil, Errorf(Unavailable, "this instance does not own the key's section or the tag either (ownership is moving); retry later")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+target, nil)
	if err != nil {
		f.forwards.WithLabelValues(forwardFailed).Inc()
		f.log.DebugContext(ctx, "forward to the owner failed", "owner", addr, "err", err)
		return nil, Errorf(Unavailable, "the owner cannot be asked; retry later")
	}
	req.Header.Set(HeaderForwarded, "1")
	resp, err := f.client.Do(req)
	if err != nil {
		f.forwards.WithLabelValues(forwardFailed).Inc()
		f.log.DebugContext(ctx, "forward to the owner failed", "owner", addr, "err", err)
		return nil, Errorf(Unavailable, "the owner did not answer; retry later")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardedBody+1))
	if err == nil && len(body) > maxForwardedBody {
		err = fmt.Errorf("the owner's answer is longer than %d bytes", maxForwardedBody)
	}
	if err != nil {
		f.forwards.WithLabelValues(forwardFailed).Inc()
		f.log.DebugContext(ctx, "forward to the owner failed", "owner", addr, "err", err)
		return nil, Errorf(Unavailable, "the owner did not answer; retry later")
	}
	f.forwards.WithLabelValues(forwardOK).Inc()
	return &Answer{
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		RetryAfter:  resp.Header.Get("Retry-After"),
		Body:        body,
	}, nil
}

// OK returns the body of a 200; any other answer is an error: the owner's
// own, when it is the API's error shape with a known code, else
// unavailable.
func (a *Answer) OK() ([]byte, error) {
	if a.Status == http.StatusOK {
		return a.Body, nil
	}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(a.Body, &e) != nil || !slices.Contains(Codes(), e.Error.Code) {
		return nil, Errorf(Unavailable, "the owner answered %d; retry later", a.Status)
	}
	return nil, &Error{Code: e.Error.Code, Message: e.Error.Message}
}

// Numbers reads the numbers of a 200: n numbers as strings in the JSON
// member of a batch answer, or the one number of a text answer when member
// is empty; any other answer is its error, as OK says. A protocol that
// carries numbers, not the HTTP API's bytes, answers them so.
func (a *Answer) Numbers(member string, n int) ([]int64, error) {
	body, err := a.OK()
	if err != nil {
		return nil, err
	}
	if member == "" {
		v, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the owner answered %q, not a number", body)
		}
		return []int64{v}, nil
	}
	var batch map[string]json.RawMessage
	var texts []string
	if err := json.Unmarshal(body, &batch); err != nil {
		return nil, fmt.Errorf("the owner's answer: %w", err)
	}
	if err := json.Unmarshal(batch[member], &texts); err != nil {
		return nil, fmt.Errorf("the owner's answer, %s: %w", member, err)
	}
	if len(texts) != n {
		return nil, fmt.Errorf("asked the owner for %d numbers, got %d", n, len(texts))
	}
	out := make([]int64, n)
	for i, t := range texts {
		v, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the owner answered %q, not a number", t)
		}
		out[i] = v
	}
	return out, nil
}

// SegmentBatchTarget and SequenceTarget are the HTTP API's requests of a
// segment tag's batch and of a key's next or current number ("next",
// "current"), for a protocol whose calls are forwarded to their owner as
// those requests.
func SegmentBatchTarget(tag string, n int) string {
	return "/api/segment/batch/" + url.PathEscape(tag) + "?count=" + strconv.Itoa(n)
}

// SequenceTarget: see SegmentBatchTarget.
func SequenceTarget(route, space, key string, n int) string {
	t := "/api/sequence/" + route + "/" + url.PathEscape(space) + "/" + url.PathEscape(key)
	if route == "next" {
		t += "?count=" + strconv.Itoa(n)
	}
	return t
}
