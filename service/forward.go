package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultForwardTimeout bounds a forwarded request when no other bound is
// given.
const DefaultForwardTimeout = 2 * time.Second

// Peer asks another instance, the owner of an ordered or formatted tag or
// of a key's section, for numbers, marking the call as forwarded so that
// the owner never sends it on: the HTTP edge's client (httpapi.Peer),
// which speaks the HTTP API between instances. An owner's refusal is a
// *Error with its code and message; any other error is an owner that could
// not be asked or did not answer.
type Peer interface {
	// TagNumbers takes n ids of an ordered tag, increasing.
	TagNumbers(ctx context.Context, addr, tag string, n int) ([]int64, error)
	// TagTexts takes n ids of a formatted tag served by one owner.
	TagTexts(ctx context.Context, addr, tag string, n int) ([]string, error)
	// KeyNext takes n numbers of a key, consecutive.
	KeyNext(ctx context.Context, addr, space, key string, n int) ([]int64, error)
	// KeyCurrent reads the last number issued to a key.
	KeyCurrent(ctx context.Context, addr, space, key string) (int64, error)
}

// Results of a forward, the label of leaf_sequence_forwards_total.
const (
	forwardOK      = "ok"      // the owner answered (whatever its status)
	forwardFailed  = "failed"  // the owner did not answer
	forwardRefused = "refused" // a forwarded request reached a non-owner
)

var forwardResults = []string{forwardOK, forwardFailed, forwardRefused}

// Forwarder asks the owner of a sequence section or an ordered tag for the
// numbers of a call that reaches another instance, through a Peer, and
// counts every forward, of either edge, in leaf_sequence_forwards_total.
type Forwarder struct {
	peer      Peer
	forwards  *prometheus.CounterVec
	coalesced prometheus.Counter
	log       *slog.Logger

	mu    sync.Mutex
	takes map[takeKey]*takeQueue // the tags and keys whose requests are under way
}

// NewForwarder returns a Forwarder asking owners through peer (nil: no
// owner can be asked), counting on reg. Both edges may build one on the
// same registry: they share the counter.
func NewForwarder(peer Peer, reg prometheus.Registerer, log *slog.Logger) *Forwarder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Forwarder{
		peer: peer,
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

// ask makes one call to the owner at addr, counted by its outcome. A call
// that came forwarded already (forwarded) is not sent again: it is refused
// as unavailable. The owner's refusal comes back as it is; an owner that
// could not be asked or did not answer is unavailable.
func (f *Forwarder) ask(ctx context.Context, addr string, forwarded bool, call func(ctx context.Context, p Peer) error) error {
	if forwarded {
		return f.refuseForwarded()
	}
	if f.peer == nil {
		f.forwards.WithLabelValues(forwardFailed).Inc()
		return Errorf(Unavailable, "the owner cannot be asked; retry later")
	}
	err := call(ctx, f.peer)
	var refused *Error
	if err == nil || errors.As(err, &refused) {
		f.forwards.WithLabelValues(forwardOK).Inc()
		return err
	}
	f.forwards.WithLabelValues(forwardFailed).Inc()
	f.log.DebugContext(ctx, "forward to the owner failed", "owner", addr, "err", err)
	return Errorf(Unavailable, "the owner did not answer; retry later")
}

// refuseForwarded is the answer to a call that came forwarded already and
// reached an instance not owning its tag or section either: it is never
// sent on.
func (f *Forwarder) refuseForwarded() error {
	f.forwards.WithLabelValues(forwardRefused).Inc()
	return Errorf(Unavailable, "this instance does not own the key's section or the tag either (ownership is moving); retry later")
}

// tagTexts takes n ids of a formatted tag from its owner at addr.
func (f *Forwarder) tagTexts(ctx context.Context, addr, tag string, n int, forwarded bool) ([]string, error) {
	var texts []string
	err := f.ask(ctx, addr, forwarded, func(ctx context.Context, p Peer) (err error) {
		texts, err = p.TagTexts(ctx, addr, tag, n)
		if err == nil && len(texts) != n {
			err = fmt.Errorf("asked the owner for %d ids, got %d", n, len(texts))
		}
		return err
	})
	return texts, err
}

// keyCurrent reads the last number of a key from its owner at addr.
func (f *Forwarder) keyCurrent(ctx context.Context, addr, space, key string, forwarded bool) (int64, error) {
	var v int64
	err := f.ask(ctx, addr, forwarded, func(ctx context.Context, p Peer) (err error) {
		v, err = p.KeyCurrent(ctx, addr, space, key)
		return err
	})
	return v, err
}
