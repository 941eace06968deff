package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// Tokens of the server of TestOpenAPIAnswers.
const (
	oaAdmin  = "admin-token"
	oaStatus = "status-token"
)

// oaServer is a real server, over TCP, with the real segment allocator
// on the in-memory leaf_alloc, a real snowflake generator and UUIDs.
type oaServer struct {
	url      string
	store    *segmenttest.MemStore
	notReady atomic.Bool // makes /readyz a 503
	degraded atomic.Bool // makes /readyz degraded
	// Sequences and ordered tags, on one in-memory store, this server the
	// only member (so the owner of every section).
	seqStore *sequencetest.MemStore
	seqs     *sequence.Sequencer
}

// oaTags is the in-memory leaf_alloc that also creates ordered tags: the
// row in leaf_alloc, and the ordered tag the Sequencer serves.
type oaTags struct {
	*segmenttest.MemStore
	ordered *sequencetest.OrderedTags
	seqs    *sequence.Sequencer
}

func (o oaTags) CreateOrderedTag(ctx context.Context, t segment.Tag) (segment.Tag, error) {
	created, err := o.CreateTag(ctx, t)
	if err != nil {
		return created, err
	}
	o.SetNotPlain(t.Name)
	o.ordered.Create(t.Name, true)
	o.seqs.AddedOrdered(ctx, t.Name)
	return created, nil
}

// round lets the Sequencer take the sections and ordered tags it owns.
func (s *oaServer) round(tb testing.TB) {
	tb.Helper()
	if err := s.seqs.Round(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// startOAServer starts a server with every mode on, the admin and status
// tokens set and two readiness checks the test can fail; or, when on is
// false, one with every mode off and the admin API unmounted.
func startOAServer(tb testing.TB, on bool) *oaServer {
	tb.Helper()
	s := &oaServer{}
	cfg := envConfig{
		Config: service.Config{Metrics: prometheus.NewRegistry()},
		Now:    func() time.Time { return fakeNow },
	}
	if on {
		s.store = segmenttest.New(
			segment.Tag{Name: "orders", MaxID: 1, Step: 1000, Description: "order ids", UpdateTime: fakeNow},
			segment.Tag{Name: "misconfigured", MaxID: 1, Step: 0},
			segment.Tag{Name: "exhausted", MaxID: math.MaxInt64, Step: 1000},
			segment.Tag{Name: "down", MaxID: 1, Step: 1000},
		)
		s.store.SetNow(func() time.Time { return fakeNow })
		s.store.SetFailTag("down", errors.New("store down"))
		biz := bizidtest.New(s.store)
		alloc := segment.New(s.store, segment.Options{RefreshInterval: -1})
		tb.Cleanup(func() { alloc.Close() })
		gen, err := snowflake.New(context.Background(), snowflake.Settings{WorkerID: 1})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { gen.Close(context.Background()) })
		cfg.Segments, cfg.Snowflake, cfg.Tags = alloc, gen, s.store
		// Per-key sequences: the space inbox; ordered tags created by the
		// admin API.
		s.seqStore = sequencetest.NewMemStore(func() time.Time { return fakeNow })
		if _, err := s.seqStore.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 100, Sections: 4}); err != nil {
			tb.Fatal(err)
		}
		ordered := sequencetest.NewOrderedTags(s.seqStore, 10)
		s.seqs, err = sequence.New(sequence.Options{Store: s.seqStore, Ordered: ordered, Tags: ordered, Addr: "self:1", Lease: time.Hour, Interval: -1})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.seqs.Close(context.Background()) })
		s.round(tb)
		cfg.Sequences, cfg.Spaces, cfg.Ordered = s.seqs, s.seqStore, s.seqs
		cfg.Tags = oaTags{MemStore: s.store, ordered: ordered, seqs: s.seqs}
		cfg.Bounds = &fakeBounds{rows: s.store}
		// Formatted and opaque tags: a daily one, an opaque one, and one
		// whose fixed-width sequence is full ({seq:1!} at 10).
		for _, t := range []struct {
			name  string
			maxID int64
			set   bizid.Settings
		}{
			{"fmt", 1, bizid.Settings{Format: "ORD-{date:20060102}-{seq:6}", Reset: bizid.Day, TimeZone: "Asia/Shanghai"}},
			{"opq", 1, bizid.Settings{OpaqueBits: bizid.Bits63, KeyID: bizid.KeyID([]byte(testOpaqueKey))}},
			{"full", 10, bizid.Settings{Format: "F-{seq:1!}", Reset: bizid.Never}},
		} {
			if _, err := biz.CreateSpecialTag(context.Background(), segment.Tag{Name: t.name, MaxID: t.maxID, Step: 10}, t.set); err != nil {
				tb.Fatal(err)
			}
		}
		issuer, err := bizid.New(bizid.Options{Store: biz, IDs: alloc, Keys: [][]byte{[]byte(testOpaqueKey)},
			Owner: &bizidtest.Owner{Rows: s.store},
			Now:   func() time.Time { return fakeNow }, IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) }})
		if err != nil {
			tb.Fatal(err)
		}
		cfg.Kinds, cfg.Biz, cfg.BizTags = service.NewRegistry(biz, issuer, alloc), issuer, biz
		cfg.UUIDs = uuidv7.New(uuidv7.Options{})
		cfg.WorkerLeases = &fakeLeases{}
		cfg.AdminToken, cfg.StatusToken = oaAdmin, oaStatus
		cfg.Instance = httpapi.Instance{Version: "test", Store: "sqlite", Durability: func() []httpapi.DurabilityLine {
			return []httpapi.DurabilityLine{
				{Node: "db1:3306", Known: true, Durable: true, Why: "flushed", Checked: fakeNow},
				{Node: "db2:3306", Known: true, Why: "flush=2", Checked: fakeNow},
				{Node: "db3:3306", Why: "not read: refused"},
			}
		}}
		cfg.Checks = []readiness.Check{
			{Name: "starting", Func: func(context.Context) error {
				if s.notReady.Load() {
					return errors.New("starting")
				}
				return nil
			}, ShowReason: true},
			{Name: "store", Func: func(context.Context) error {
				if s.degraded.Load() {
					return fmt.Errorf("%w: store down", readiness.ErrDegraded)
				}
				return nil
			}},
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{
		Handler: cfg.handler(),
		// Short enough for the 408 of a body that stops arriving.
		ReadTimeout: 500 * time.Millisecond,
		IdleTimeout: time.Minute,
	}
	go srv.Serve(httpapi.JSONRefusals(ln))
	tb.Cleanup(func() { srv.Close() })
	s.url = "http://" + ln.Addr().String()
	return s
}

// oaCase is a request and the answer it must get. path is the document's
// path of the operation, or empty for answers the document describes as
// components: a 405 (MethodNotAllowed), a path that is no route
// (NotFound), a refusal of Go's HTTP server (BadRequest).
type oaCase struct {
	method, target string
	body           string
	token          string // a bearer token to send
	plain          bool   // path is one of the document's x-plain-text
	status         int
	path           string
	component      string
	raw            string                        // sent as it is over TCP instead
	setup          func(*oaServer) (undo func()) // run before the request
}

func (c oaCase) String() string {
	if c.raw != "" {
		return strings.SplitN(c.raw, "\r\n", 2)[0]
	}
	return c.method + " " + c.target
}

// TestOpenAPIAnswers sends real requests to every operation of the
// document, errors included, and validates each answer (status, headers,
// Content-Type and body) against the document with kin-openapi; the
// requests that succeed are validated against it too. It fails for an
// operation of the document that no case here reaches with a success, or
// an error status no case provokes.
func TestOpenAPIAnswers(t *testing.T) {
	doc, plainDoc := loadOpenAPI(t), loadPlainOpenAPI(t)
	// kin-openapi reads no HTML; the status page's schema is a string.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	on, off := startOAServer(t, true), startOAServer(t, false)
	big := `{"description":"` + strings.Repeat("x", 70<<10) + `"}`
	notReady := func(s *oaServer) func() { s.notReady.Store(true); return func() { s.notReady.Store(false) } }
	degraded := func(s *oaServer) func() { s.degraded.Store(true); return func() { s.degraded.Store(false) } }
	tagsDown := func(s *oaServer) func() {
		s.store.SetFail(segment.ErrStoreUnavailable)
		return func() { s.store.SetFail(nil) }
	}
	const (
		seg      = "/api/segment/get/{tag}"
		batch    = "/api/segment/batch/{tag}"
		rng      = "/api/segment/range/{tag}"
		tags     = "/api/admin/tags"
		tag      = "/api/admin/tags/{tag}"
		statusJS = "/status.json"
		reveal   = "/api/admin/tags/{tag}/reveal/{id}"
		next     = "/api/sequence/next/{space}/{key}"
		nextNoK  = "/api/sequence/next/{space}"
		current  = "/api/sequence/current/{space}/{key}"
		currNoK  = "/api/sequence/current/{space}"
		key      = "/api/sequence/key/{space}/{key}"
		keyNoK   = "/api/sequence/key/{space}"
		routes   = "/api/sequence/routes/{space}"
		spaces   = "/api/admin/sequences"
		space    = "/api/admin/sequences/{space}"
	)
	round := func(s *oaServer) func() { s.round(t); return func() {} }
	seqDown := func(s *oaServer) func() {
		s.seqStore.Fail(sequence.ErrUnavailable)
		return func() { s.seqStore.Fail(nil) }
	}
	// The id of opq's number 1, which its first range holds; 12345 is an
	// id of its domain whose number no range held.
	opq, err := bizid.NewCipher([]byte(testOpaqueKey), bizid.Bits63)
	if err != nil {
		t.Fatal(err)
	}
	opqFirst, err := opq.Encode(1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []oaCase{
		{method: "GET", target: "/api/segment/get/orders", status: 200, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/orders?format=base62", status: 200, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/", status: 400, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/orders?format=hex", status: 400, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/nosuch", status: 404, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/exhausted", status: 410, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/misconfigured", status: 500, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/down", status: 503, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/fmt", status: 200, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/opq", status: 200, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/full", status: 409, path: seg, plain: true},
		{method: "GET", target: "/api/segment/get/fmt?format=base62", status: 400, path: seg, plain: true},
		{method: "HEAD", target: "/api/segment/get/orders", status: 405, component: "MethodNotAllowed"},
		{method: "POST", target: "/api/segment/get/orders", status: 405, component: "MethodNotAllowed"},
		{raw: "GET /api/segment/get/%zz HTTP/1.1\r\nHost: leaf\r\n\r\n", status: 400, component: "BadRequest"},

		{method: "GET", target: "/api/segment/batch/orders?count=3", status: 200, path: batch},
		{method: "GET", target: "/api/segment/batch/orders?count=3&format=base62", status: 200, path: batch},
		{method: "GET", target: "/api/segment/batch/orders", status: 400, path: batch},
		{method: "GET", target: "/api/segment/batch/orders?count=10001", status: 400, path: batch},
		{method: "GET", target: "/api/segment/batch/?count=1", status: 400, path: batch},
		{method: "GET", target: "/api/segment/batch/nosuch?count=1", status: 404, path: batch},
		{method: "GET", target: "/api/segment/batch/exhausted?count=1", status: 410, path: batch},
		{method: "GET", target: "/api/segment/batch/misconfigured?count=1", status: 500, path: batch},
		{method: "GET", target: "/api/segment/batch/down?count=1", status: 503, path: batch},
		{method: "GET", target: "/api/segment/batch/fmt?count=3", status: 200, path: batch},
		{method: "GET", target: "/api/segment/batch/opq?count=3", status: 200, path: batch},
		{method: "GET", target: "/api/segment/batch/full?count=1", status: 409, path: batch},
		{method: "GET", target: "/api/segment/batch/full?count=2", status: 400, path: batch}, // more of a capped period than one call may take

		{method: "GET", target: "/api/segment/range/orders?count=5", status: 200, path: rng},
		{method: "GET", target: "/api/segment/range/orders?count=1000001", status: 400, path: rng},
		{method: "GET", target: "/api/segment/range/?count=1", status: 400, path: rng},
		{method: "GET", target: "/api/segment/range/nosuch?count=1", status: 404, path: rng},
		{method: "GET", target: "/api/segment/range/exhausted?count=1", status: 410, path: rng},
		{method: "GET", target: "/api/segment/range/misconfigured?count=1", status: 500, path: rng},
		{method: "GET", target: "/api/segment/range/down?count=1", status: 503, path: rng},
		{method: "GET", target: "/api/segment/range/fmt?count=5", status: 409, path: rng},
		{method: "GET", target: "/api/segment/range/opq?count=5", status: 409, path: rng},

		{method: "GET", target: "/api/snowflake/get", status: 200, path: "/api/snowflake/get", plain: true},
		{method: "GET", target: "/api/snowflake/get?format=base62", status: 200, path: "/api/snowflake/get", plain: true},
		{method: "GET", target: "/api/snowflake/get?format=hex", status: 400, path: "/api/snowflake/get", plain: true},
		{method: "GET", target: "/api/snowflake/get/any", status: 200, path: "/api/snowflake/get/{key}", plain: true},
		{method: "GET", target: "/api/snowflake/get/any?format=base62", status: 200, path: "/api/snowflake/get/{key}", plain: true},
		{method: "GET", target: "/api/snowflake/get/any?format=hex", status: 400, path: "/api/snowflake/get/{key}", plain: true},
		{method: "GET", target: "/api/snowflake/batch?count=3", status: 200, path: "/api/snowflake/batch"},
		{method: "GET", target: "/api/snowflake/batch?count=3&format=base62", status: 200, path: "/api/snowflake/batch"},
		{method: "GET", target: "/api/snowflake/batch?count=x", status: 400, path: "/api/snowflake/batch"},
		{method: "GET", target: "/api/snowflake/decode/2124335342185087064", status: 200, path: "/api/snowflake/decode/{id}"},
		{method: "GET", target: "/api/snowflake/decode/x", status: 400, path: "/api/snowflake/decode/{id}"},
		{method: "GET", target: "/api/snowflake/decode/", status: 400, path: "/api/snowflake/decode/{id}"},
		{method: "GET", target: "/api/snowflake/bounds?from=2026-12-07T10:00:00Z&to=1796641200000", status: 200, path: "/api/snowflake/bounds"},
		{method: "GET", target: "/api/snowflake/bounds?from=2026-12-07T10:00:00Z&to=2026-12-07T09:00:00Z", status: 400, path: "/api/snowflake/bounds"},
		{method: "GET", target: "/api/snowflake/bounds?from=yesterday&to=1", status: 400, path: "/api/snowflake/bounds"},
		{method: "GET", target: "/api/snowflake/layout", status: 200, path: "/api/snowflake/layout"},
		{method: "POST", target: "/api/snowflake/leases", body: `{"holder":"svc","ttl_ms":30000,"reserve_ms":1796641200000}`, status: 201, path: "/api/snowflake/leases"},
		{method: "POST", target: "/api/snowflake/leases", body: `{"holder":"svc","ttl_ms":1,"reserve_ms":1}`, status: 400, path: "/api/snowflake/leases"},
		{method: "PUT", target: "/api/snowflake/leases/0", body: `{"lease":"AHN2YwAw","ttl_ms":30000,"reserve_ms":1796641230000}`, status: 200, path: "/api/snowflake/leases/{worker_id}"},
		{method: "PUT", target: "/api/snowflake/leases/5", body: `{"lease":"AHN2YwAw","ttl_ms":30000,"reserve_ms":1796641230000}`, status: 409, path: "/api/snowflake/leases/{worker_id}"},
		{method: "PUT", target: "/api/snowflake/leases/x", body: `{"lease":"AHN2YwAw","ttl_ms":30000,"reserve_ms":1}`, status: 400, path: "/api/snowflake/leases/{worker_id}"},
		{method: "DELETE", target: "/api/snowflake/leases/0", body: `{"lease":"AHN2YwAw","last_ms":1796641201000}`, status: 200, path: "/api/snowflake/leases/{worker_id}"},
		{method: "DELETE", target: "/api/snowflake/leases/0", body: `{"lease":"nonsense","last_ms":1}`, status: 400, path: "/api/snowflake/leases/{worker_id}"},

		{method: "GET", target: "/api/uuid/get", status: 200, path: "/api/uuid/get", plain: true},
		{method: "GET", target: "/api/uuid/batch?count=3", status: 200, path: "/api/uuid/batch"},
		{method: "GET", target: "/api/uuid/batch?count=0", status: 400, path: "/api/uuid/batch"},
		{method: "GET", target: "/api/uuid/decode/019a9c2e-5b3f-7c41-8d2e-0123456789ab", status: 200, path: "/api/uuid/decode/{uuid}"},
		{method: "GET", target: "/api/uuid/decode/not-a-uuid", status: 400, path: "/api/uuid/decode/{uuid}"},
		{method: "GET", target: "/api/uuid/decode/", status: 400, path: "/api/uuid/decode/{uuid}"},
		{method: "GET", target: "/api/uuid/bounds?from=1796637600000&to=2026-12-07T11:00:00.5Z", status: 200, path: "/api/uuid/bounds"},
		{method: "GET", target: "/api/uuid/bounds?from=1&from=2&to=3", status: 400, path: "/api/uuid/bounds"},

		{method: "GET", target: "/api/convert/decimal/1042", status: 200, path: "/api/convert/{form}/{id}"},
		{method: "GET", target: "/api/convert/base62/000000000Go", status: 200, path: "/api/convert/{form}/{id}"},
		{method: "GET", target: "/api/convert/decimal/x", status: 400, path: "/api/convert/{form}/{id}"},
		{method: "GET", target: "/api/convert/base62/", status: 400, path: "/api/convert/{form}/{id}"},
		{method: "GET", target: "/api/convert/hex/1", status: 404, path: "/api/convert/{form}/{id}"},

		{method: "GET", target: "/healthz", status: 200, path: "/healthz"},
		{method: "HEAD", target: "/healthz", status: 200, path: "/healthz"},
		{method: "POST", target: "/healthz", status: 405, component: "MethodNotAllowed"},
		{method: "GET", target: "/readyz", status: 200, path: "/readyz"},
		{method: "HEAD", target: "/readyz", status: 200, path: "/readyz"},
		{method: "GET", target: "/readyz", status: 200, path: "/readyz", setup: degraded},
		{method: "GET", target: "/readyz", status: 503, path: "/readyz", setup: notReady},
		{method: "HEAD", target: "/readyz", status: 503, path: "/readyz", setup: notReady},
		{method: "GET", target: "/metrics", status: 200, path: "/metrics"},
		{method: "HEAD", target: "/metrics", status: 200, path: "/metrics"},
		{method: "GET", target: "/openapi.json", status: 200, path: "/openapi.json"},
		{method: "HEAD", target: "/openapi.json", status: 200, path: "/openapi.json"},
		{method: "GET", target: "/status", token: oaStatus, status: 200, path: "/status"},
		{method: "GET", target: "/status?page=1&per_page=10&q=ord", token: oaStatus, status: 200, path: "/status"},
		{method: "HEAD", target: "/status", token: oaStatus, status: 200, path: "/status"},
		{method: "GET", target: "/status", status: 401, path: "/status"},
		{method: "HEAD", target: "/status", token: "wrong", status: 401, path: "/status"},
		{method: "GET", target: "/status?page=0", token: oaStatus, status: 400, path: "/status"},
		{method: "GET", target: statusJS, token: oaStatus, status: 200, path: statusJS},
		{method: "GET", target: statusJS + "?page=1&per_page=2&q=o", token: oaStatus, status: 200, path: statusJS},
		{method: "HEAD", target: statusJS, token: oaStatus, status: 200, path: statusJS},
		{method: "GET", target: statusJS, token: oaAdmin, status: 401, path: statusJS},
		{method: "GET", target: statusJS + "?per_page=501", token: oaStatus, status: 400, path: statusJS},
		{method: "GET", target: statusJS + "?q=" + strings.Repeat("q", 129), token: oaStatus, status: 400, path: statusJS},

		{method: "GET", target: tags, token: oaAdmin, status: 200, path: tags},
		{method: "GET", target: tags, status: 401, path: tags},
		{method: "GET", target: tags, token: "wrong", status: 401, path: tags},
		{method: "GET", target: tags, token: oaAdmin, status: 503, path: tags, setup: tagsDown},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"payments","step":2000,"max_id":"10","description":"payment ids"}`, status: 201, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"payments"}`, status: 409, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":""}`, status: 400, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"x","Step":1}`, status: 400, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: big, status: 413, path: tags},
		{method: "POST", target: tags, body: `{"tag":"y"}`, status: 401, path: tags},
		{raw: "POST /api/admin/tags HTTP/1.1\r\nHost: leaf\r\nAuthorization: Bearer " + oaAdmin +
			"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"tag\":\"sl", status: 408, path: tags},
		{method: "DELETE", target: "/api/admin/tags/orders", token: oaAdmin, status: 405, component: "MethodNotAllowed"},
		{method: "GET", target: "/api/admin/tags/orders", token: oaAdmin, status: 200, path: tag},
		{method: "GET", target: "/api/admin/tags/", token: oaAdmin, status: 400, path: tag},
		{method: "GET", target: "/api/admin/tags/nosuch", token: oaAdmin, status: 404, path: tag},
		{method: "GET", target: "/api/admin/tags/orders", status: 401, path: tag},
		{method: "PATCH", target: "/api/admin/tags/orders", token: oaAdmin, body: `{"step":3000,"description":"orders"}`, status: 200, path: tag},
		{method: "PATCH", target: "/api/admin/tags/orders", token: oaAdmin, body: `{"max_id":1}`, status: 400, path: tag},
		{method: "PATCH", target: "/api/admin/tags/orders", token: oaAdmin, body: `{"max":2147483647}`, status: 200, path: tag},
		{method: "PATCH", target: "/api/admin/tags/orders", token: oaAdmin, body: `{"max":-1}`, status: 400, path: tag},
		{method: "PATCH", target: "/api/admin/tags/orders", token: oaAdmin, body: `{}`, status: 400, path: tag},
		{method: "PATCH", target: "/api/admin/tags/nosuch", token: oaAdmin, body: `{"step":5}`, status: 404, path: tag},
		{method: "PATCH", target: "/api/admin/tags/orders", token: oaAdmin, body: big, status: 413, path: tag},
		{method: "PATCH", target: "/api/admin/tags/orders", body: `{"step":5}`, status: 401, path: tag},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"inv","format":"INV{date:200601}-{seq:4!}","reset":"month","time_zone":"Europe/Paris","step":50}`, status: 201, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"users","opaque":53}`, status: 201, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"bad","format":"ORD-{date:20060102}"}`, status: 400, path: tags},
		{method: "GET", target: "/api/admin/tags/fmt", token: oaAdmin, status: 200, path: tag},
		{method: "GET", target: tags, token: oaAdmin, status: 200, path: tags},
		{method: "PATCH", target: "/api/admin/tags/fmt", token: oaAdmin, body: `{"time_zone":"UTC"}`, status: 200, path: tag},
		{method: "PATCH", target: "/api/admin/tags/fmt", token: oaAdmin, body: `{"format":"G-{seq}"}`, status: 409, path: tag},
		{method: "GET", target: "/api/admin/tags/opq/reveal/" + strconv.FormatInt(opqFirst, 10), token: oaAdmin, status: 200, path: reveal},
		{method: "GET", target: "/api/admin/tags/opq/reveal/12345", token: oaAdmin, status: 400, path: reveal},
		{method: "GET", target: "/api/admin/tags/opq/reveal/x", token: oaAdmin, status: 400, path: reveal},
		{method: "GET", target: "/api/admin/tags/orders/reveal/5", token: oaAdmin, status: 400, path: reveal},
		{method: "GET", target: "/api/admin/tags/opq/reveal/5", status: 401, path: reveal},
		{method: "GET", target: "/api/admin/segments", token: oaAdmin, status: 200, path: "/api/admin/segments"},
		{method: "GET", target: "/api/admin/segments", status: 401, path: "/api/admin/segments"},

		// Per-key sequences.
		{method: "GET", target: "/api/sequence/next/inbox/alice", status: 200, path: next, plain: true},
		{method: "GET", target: "/api/sequence/next/inbox/%E4%BC%9A%E8%AF%9D%2F1?count=3", status: 200, path: next},
		{method: "GET", target: "/api/sequence/next/inbox/alice?count=0", status: 400, path: next},
		{method: "GET", target: "/api/sequence/next/inbox/alice?count=10001", status: 400, path: next},
		{method: "GET", target: "/api/sequence/next/inbox/", status: 400, path: next, plain: true},
		{method: "GET", target: "/api/sequence/next/inbox/a%FFb", status: 400, path: next, plain: true},
		{method: "GET", target: "/api/sequence/next/inbox/" + strings.Repeat("k", 257), status: 400, path: next, plain: true},
		{method: "GET", target: "/api/sequence/next/" + strings.Repeat("s", 129) + "/k", status: 400, path: next, plain: true},
		{method: "GET", target: "/api/sequence/next/nosuch/k", status: 404, path: next, plain: true},
		{method: "HEAD", target: "/api/sequence/next/inbox/alice", status: 405, component: "MethodNotAllowed"},
		{method: "GET", target: "/api/sequence/next/inbox", status: 400, path: nextNoK},
		{method: "GET", target: "/api/sequence/next/", status: 400, path: nextNoK},
		{method: "GET", target: "/api/sequence/current/inbox/alice", status: 200, path: current, plain: true},
		{method: "GET", target: "/api/sequence/current/inbox/never", status: 200, path: current, plain: true},
		{method: "GET", target: "/api/sequence/current/inbox/alice?count=1", status: 400, path: current, plain: true},
		{method: "GET", target: "/api/sequence/current/nosuch/k", status: 404, path: current, plain: true},
		{method: "GET", target: "/api/sequence/current/inbox", status: 400, path: currNoK},
		{method: "GET", target: "/api/sequence/key/inbox/alice", status: 200, path: key},
		{method: "GET", target: "/api/sequence/key/inbox/never", status: 200, path: key},
		{method: "GET", target: "/api/sequence/key/inbox/%E4%BC%9A%E8%AF%9D%2F1", status: 200, path: key},
		{method: "GET", target: "/api/sequence/key/inbox/alice?x=1", status: 400, path: key},
		{method: "GET", target: "/api/sequence/key/inbox/", status: 400, path: key},
		{method: "GET", target: "/api/sequence/key/nosuch/k", status: 404, path: key},
		{method: "GET", target: "/api/sequence/key/inbox", status: 400, path: keyNoK},
		{method: "GET", target: "/api/sequence/next/inbox/alice?count=1", status: 200, path: next},
		{method: "GET", target: "/api/segment/batch/orders?count=1", status: 200, path: batch},
		{method: "GET", target: "/api/snowflake/batch?count=1", status: 200, path: "/api/snowflake/batch"},
		{method: "GET", target: "/api/uuid/batch?count=1", status: 200, path: "/api/uuid/batch"},
		{method: "GET", target: "/api/sequence/routes/inbox", status: 200, path: routes},
		{raw: "GET /api/sequence/next/inbox/alice HTTP/1.1\r\nHost: leaf\r\nLeaf-Routes-Version: 0000000000000000\r\n\r\n", status: 200, path: next, plain: true},
		{method: "GET", target: "/api/sequence/routes/inbox?x=1", status: 200, path: routes},
		{method: "GET", target: "/api/sequence/routes/", status: 400, path: routes},
		{method: "GET", target: "/api/sequence/routes/" + strings.Repeat("s", 129), status: 400, path: routes},
		{method: "GET", target: "/api/sequence/routes/nosuch", status: 404, path: routes},
		{method: "GET", target: "/api/sequence/routes/elsewhere", status: 503, path: routes, setup: seqDown},
		{method: "HEAD", target: "/api/sequence/routes/inbox", status: 405, component: "MethodNotAllowed"},
		{method: "GET", target: spaces, token: oaAdmin, status: 200, path: spaces},
		{method: "GET", target: spaces, status: 401, path: spaces},
		{method: "GET", target: spaces, token: oaAdmin, status: 503, path: spaces, setup: seqDown},
		{method: "POST", target: spaces, token: oaAdmin, body: `{"space":"outbox","step":100,"sections":8}`, status: 201, path: spaces},
		{method: "GET", target: "/api/sequence/next/outbox/k", status: 503, path: next, plain: true},
		{method: "GET", target: "/api/sequence/key/outbox/k", status: 503, path: key},
		{method: "GET", target: "/api/sequence/next/outbox/k", status: 200, path: next, plain: true, setup: round},
		{method: "POST", target: spaces, token: oaAdmin, body: `{"space":"inbox"}`, status: 409, path: spaces},
		{method: "POST", target: spaces, token: oaAdmin, body: `{"space":"x","sections":0}`, status: 400, path: spaces},
		{method: "POST", target: spaces, token: oaAdmin, body: `{"space":"` + strings.Repeat("s", 129) + `"}`, status: 400, path: spaces},
		{method: "POST", target: spaces, token: oaAdmin, body: big, status: 413, path: spaces},
		{method: "POST", target: spaces, body: `{"space":"y"}`, status: 401, path: spaces},
		{method: "GET", target: "/api/admin/sequences/inbox", token: oaAdmin, status: 200, path: space},
		{method: "GET", target: "/api/admin/sequences/nosuch", token: oaAdmin, status: 404, path: space},
		{method: "GET", target: "/api/admin/sequences/", token: oaAdmin, status: 400, path: space},
		{method: "GET", target: "/api/admin/sequences/inbox", status: 401, path: space},
		{method: "GET", target: "/api/admin/sequences/inbox", token: oaAdmin, status: 503, path: space, setup: seqDown},

		// Ordered tags: served by their owner, never formatted or opaque.
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"ticks","ordered":true,"step":5}`, status: 201, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"ticks2","ordered":true,"opaque":63}`, status: 400, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"ticks2","ordered":"yes"}`, status: 400, path: tags},
		{method: "PATCH", target: "/api/admin/tags/ticks", token: oaAdmin, body: `{"format":"T-{seq}"}`, status: 409, path: tag},
		{method: "GET", target: "/api/segment/get/ticks", status: 200, path: seg, plain: true, setup: round},
		{method: "GET", target: "/api/segment/batch/ticks?count=3", status: 200, path: batch},
		{method: "GET", target: "/api/segment/range/ticks?count=3", status: 400, path: rng},

		{method: "GET", target: "/nope", status: 404, component: "NotFound"},

		// OPTIONS is a method like any other that no path answers.
		{method: "OPTIONS", target: "/api/segment/get/orders", status: 405, component: "MethodNotAllowed"},
		{method: "OPTIONS", target: "/api/admin/tags", status: 405, component: "MethodNotAllowed"},
		{method: "OPTIONS", target: "/healthz", status: 405, component: "MethodNotAllowed"},
		{method: "OPTIONS", target: "/nope", status: 404, component: "NotFound"},
	}
	// The server with every mode off and no admin token: the routes of a
	// mode answer 404 not_found, and the admin paths are no routes.
	offCases := []oaCase{
		{method: "GET", target: "/api/segment/get/orders", status: 404, path: seg, plain: true},
		{method: "GET", target: "/api/segment/batch/orders?count=1", status: 404, path: batch},
		{method: "GET", target: "/api/segment/range/orders?count=1", status: 404, path: rng},
		{method: "GET", target: "/api/snowflake/get", status: 404, path: "/api/snowflake/get", plain: true},
		{method: "GET", target: "/api/snowflake/get/any", status: 404, path: "/api/snowflake/get/{key}", plain: true},
		{method: "GET", target: "/api/snowflake/batch?count=1", status: 404, path: "/api/snowflake/batch"},
		{method: "GET", target: "/api/snowflake/decode/1", status: 404, path: "/api/snowflake/decode/{id}"},
		{method: "GET", target: "/api/snowflake/bounds?from=0&to=1", status: 404, path: "/api/snowflake/bounds"},
		{method: "GET", target: "/api/snowflake/layout", status: 404, path: "/api/snowflake/layout"},
		{method: "GET", target: "/api/uuid/bounds?from=0&to=1", status: 200, path: "/api/uuid/bounds"},
		{method: "GET", target: "/api/uuid/get", status: 404, path: "/api/uuid/get", plain: true},
		{method: "GET", target: "/api/uuid/batch?count=1", status: 404, path: "/api/uuid/batch"},
		{method: "GET", target: "/api/admin/tags", token: oaAdmin, status: 404, path: tags},
		{method: "POST", target: tags, token: oaAdmin, body: `{"tag":"x"}`, status: 404, path: tags},
		{method: "GET", target: "/api/admin/tags/orders", token: oaAdmin, status: 404, path: tag},
		{method: "PATCH", target: "/api/admin/tags/orders", token: oaAdmin, body: `{"step":5}`, status: 404, path: tag},
		{method: "GET", target: "/api/admin/segments", token: oaAdmin, status: 404, path: "/api/admin/segments"},
		{method: "GET", target: "/api/sequence/next/inbox/k", status: 404, path: next, plain: true},
		{method: "GET", target: "/api/sequence/next/inbox/k?count=2", status: 404, path: next},
		{method: "GET", target: "/api/sequence/next/inbox", status: 404, path: nextNoK},
		{method: "GET", target: "/api/sequence/current/inbox/k", status: 404, path: current, plain: true},
		{method: "GET", target: "/api/sequence/current/inbox", status: 404, path: currNoK},
		{method: "GET", target: "/api/sequence/key/inbox/k", status: 404, path: key},
		{method: "GET", target: "/api/sequence/key/inbox", status: 404, path: keyNoK},
		{method: "GET", target: "/api/sequence/routes/inbox", status: 404, path: routes},
		{method: "GET", target: spaces, token: oaAdmin, status: 404, path: spaces},
		{method: "GET", target: "/api/admin/sequences/inbox", token: oaAdmin, status: 404, path: space},
		{method: "GET", target: statusJS, status: 200, path: statusJS},
		{method: "GET", target: "/status", status: 200, path: "/status"},
		{method: "GET", target: "/readyz", status: 200, path: "/readyz"},
	}

	succeeded := map[string]bool{} // operations answered with a 2xx
	reached := map[string]bool{}   // operations answered at all
	provoked := map[int]bool{}     // error statuses seen
	run := func(s *oaServer, cases []oaCase) {
		for _, c := range cases {
			t.Run(c.String(), func(t *testing.T) {
				if c.setup != nil {
					defer c.setup(s)()
				}
				d, op := doc, strings.ToLower(c.method)+" "+c.path
				if c.plain {
					d, op = plainDoc, "plain "+op
				}
				status := checkOpenAPIAnswer(t, d, s, c)
				reached[op] = true
				if status >= 200 && status < 300 {
					succeeded[op] = true
				} else {
					provoked[status] = true
				}
			})
		}
	}
	run(on, cases)
	run(off, offCases)

	for _, d := range []struct {
		doc    *openapi3.T
		prefix string
	}{{doc, ""}, {plainDoc, "plain "}} {
		for _, op := range slices.Sorted(maps.Keys(operationsOf(d.doc))) {
			method, path, _ := strings.Cut(op, " ")
			key := d.prefix + strings.ToLower(method) + " " + path
			if !successful(d.doc.Paths.Value(path).GetOperation(method)) {
				// A form registered only to refuse (a sequence route
				// without its key): some case must reach it.
				if !reached[key] {
					t.Errorf("no case reaches %s%s: add one to TestOpenAPIAnswers", d.prefix, op)
				}
				continue
			}
			if !succeeded[key] {
				t.Errorf("no case answers %s%s with a success: add one to TestOpenAPIAnswers", d.prefix, op)
			}
		}
	}
	for _, status := range []int{400, 401, 404, 405, 408, 409, 410, 413, 500, 503} {
		if !provoked[status] {
			t.Errorf("no case provokes a %d", status)
		}
	}
}

// successful says whether op documents a 2xx answer.
func successful(op *openapi3.Operation) bool {
	for code := range op.Responses.Map() {
		if strings.HasPrefix(code, "2") {
			return true
		}
	}
	return false
}

// checkOpenAPIAnswer sends c to s and validates the answer against doc; it
// returns the status.
func checkOpenAPIAnswer(t *testing.T, doc *openapi3.T, s *oaServer, c oaCase) int {
	t.Helper()
	var (
		req  *http.Request
		resp *http.Response
		body []byte
		err  error
	)
	if c.raw != "" {
		req, resp, body = sendRaw(t, s, c.raw)
	} else {
		var rb io.Reader
		if c.body != "" {
			rb = strings.NewReader(c.body)
		}
		req, err = http.NewRequest(c.method, s.url+c.target, rb)
		if err != nil {
			t.Fatal(err)
		}
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if resp.StatusCode != c.status {
		t.Fatalf("%s: status %d, want %d; body %.300s", c, resp.StatusCode, c.status, body)
	}

	route := &routers.Route{Spec: doc, Method: req.Method, Path: c.path}
	switch {
	case c.path != "":
		route.PathItem = doc.Paths.Value(c.path)
		if route.PathItem == nil {
			t.Fatalf("%s: %s has no path %s", c, docFile, c.path)
		}
		route.Operation = route.PathItem.GetOperation(req.Method)
		if route.Operation == nil {
			t.Fatalf("%s: %s has no %s %s", c, docFile, req.Method, c.path)
		}
	default:
		// An answer the document describes once for every path.
		ref := doc.Components.Responses[c.component]
		if ref == nil {
			t.Fatalf("%s: %s has no response %s", c, docFile, c.component)
		}
		route.Path = "(" + c.component + ")"
		route.Operation = &openapi3.Operation{Responses: openapi3.NewResponses(openapi3.WithStatus(c.status, ref))}
	}
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
			if !strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
				return errors.New("no bearer token")
			}
			return nil
		},
	}
	in := &openapi3filter.RequestValidationInput{Request: req, Route: route, Options: opts}
	if c.path != "" && resp.StatusCode < 300 {
		// A request that succeeds is one the document allows.
		vreq := req.Clone(context.Background())
		vreq.Body = io.NopCloser(strings.NewReader(c.body))
		vin := &openapi3filter.RequestValidationInput{Request: vreq, Route: route, Options: opts, PathParams: pathParams(t, c.path, req.URL)}
		if err := openapi3filter.ValidateRequest(context.Background(), vin); err != nil {
			t.Errorf("%s: the request does not match %s: %v", c, docFile, err)
		}
	}
	if req.Method == http.MethodHead {
		// kin-openapi does not validate HEAD answers: the status must be
		// one the operation lists, and there is no body.
		if route.Operation.Responses.Status(resp.StatusCode) == nil {
			t.Errorf("%s: status %d is not in %s", c, resp.StatusCode, docFile)
		}
		if len(body) != 0 {
			t.Errorf("%s: a body to HEAD: %q", c, body)
		}
		return resp.StatusCode
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                opts,
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s: the answer %d %q does not match %s: %v\nbody %.500s", c, resp.StatusCode, resp.Header.Get("Content-Type"), docFile, err, body)
	}
	return resp.StatusCode
}

// sendRaw writes raw on a connection of its own and reads the answer.
func sendRaw(t *testing.T, s *oaServer, raw string) (*http.Request, *http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	line := strings.SplitN(raw, "\r\n", 2)[0]
	method, target, _ := strings.Cut(line, " ")
	target, _, _ = strings.Cut(target, " ")
	req := &http.Request{Method: method, URL: &url.URL{Path: target}, Header: http.Header{}}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return req, resp, body
}

// pathParams reads the values of template's parameters from u.
func pathParams(t *testing.T, template string, u *url.URL) map[string]string {
	t.Helper()
	tp, up := strings.Split(template, "/"), strings.Split(u.EscapedPath(), "/")
	if len(tp) != len(up) {
		t.Fatalf("%s does not match %s", u.EscapedPath(), template)
	}
	out := map[string]string{}
	for i, p := range tp {
		if strings.HasPrefix(p, "{") {
			v, err := url.PathUnescape(up[i])
			if err != nil {
				t.Fatal(err)
			}
			out[strings.Trim(p, "{}")] = v
		}
	}
	return out
}
