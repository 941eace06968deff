// Package fleettest runs two leaf instances in one process over one
// in-memory database, for the fuzz targets of the edges (httpapi's
// FuzzHTTP, grpcapi's FuzzConnect). Each instance has its own segment
// allocator, snowflake generator, business id Issuer and Sequencer, wired
// as leaf serve wires them, and serves gRPC and the HTTP API on a
// loopback port: a request for a sequence section, an ordered tag or a
// formatted tag served by one owner that the other instance owns is
// forwarded there over real HTTP. Its Ledger keeps every id the targets
// were answered, by kind, with what the owners issued, and says when one
// breaks a rule (see ledger.go).
//
// The database is the in-memory stores of the other test packages:
// segmenttest for leaf_alloc (every row its own max_id, as in MySQL),
// bizidtest for the settings of formatted and opaque tags, sequencetest for
// the sequence tables and the lease rows of ordered tags. The rows of the
// tags served by one owner are raised in leaf_alloc's rows by the rules of
// store.RaiseRow, so that an allocator's load of such a row and an owner's
// raise meet in one row as they do in the database.
package fleettest

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/grpcapi"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// Token is the admin token of both instances.
const Token = "t"

// OpaqueKey is the opaque key of both instances.
const OpaqueKey = "fleettest-opaque-key-of-32-bytes!"

// Start is the time of the Issuers' clock when the fleet starts; Tick
// moves it on.
var Start = time.Date(2026, 11, 27, 21, 30, 0, 0, time.UTC)

// TickBy is how far each Tick moves the Issuers' clock: a day every 1,440
// requests, so that the periods of the tags that reset turn over during a
// run and a capped tag's day fills and starts again.
const TickBy = time.Minute

// The fixture's tags, beside plain ones of awkward names.
const (
	// Open is formatted, numbered by every instance's allocator.
	Open = "open"
	// Cap and CapDay are capped, served by one owner: 99 numbers for
	// ever, and 99 a day.
	Cap    = "cap"
	CapDay = "capday"
	// Text is formatted and ordered: served by one owner, not capped.
	Text = "ordtext"
	// Opaque63 and Opaque53 are opaque, of 63 and 53 bits.
	Opaque63 = "opq"
	Opaque53 = "opq53"
	// Ordered and OrderedB are ordered plain tags, owned by instance A
	// and instance B.
	Ordered  = "ordered"
	OrderedB = "ord"
)

// Formats of the fixture's formatted tags, and their caps.
var formats = map[string]bizid.Settings{
	Open:   {Format: "O-{date:20060102}-{seq:6}", Reset: bizid.Day, TimeZone: "Asia/Shanghai"},
	Cap:    {Format: "C-{seq:2!}", Reset: bizid.Never},
	CapDay: {Format: "D{date:20060102}-{seq:2!}", Reset: bizid.Day},
	Text:   {Format: "T-{seq:6}", Reset: bizid.Never, Ordered: true},
}

// Caps are the highest numbers of the capped fixture tags.
var Caps = map[string]int64{Cap: 99, CapDay: 99}

// Spaces of sequences: inbox, split between the instances; a space of
// step 1 (a raise per number); one of one section.
var spaces = []sequence.Space{
	{Name: "inbox", Step: 10, Sections: 8},
	{Name: "tight", Step: 1, Sections: 2},
	{Name: "会话", Step: 100, Sections: 1},
}

// plainRows are the plain tags, of names an edge must carry exactly, and
// rows a client cannot be served from.
var plainRows = []segment.Tag{
	{Name: "orders", MaxID: 1, Step: 1000},
	{Name: "order/v2", MaxID: 1, Step: 10},
	{Name: "user@profile", MaxID: 1, Step: 1000},
	{Name: "订单", MaxID: 1, Step: 1000},
	{Name: "été", MaxID: 1, Step: 1000},
	{Name: "a%3Ab", MaxID: 1, Step: 1000},
	{Name: "%", MaxID: 1, Step: 1000},
	{Name: `a"b\c`, MaxID: 1, Step: 1000},
	{Name: "misconfigured", MaxID: 1, Step: 0},
	{Name: "exhausted", MaxID: math.MaxInt64, Step: 1000},
}

// Fleet is two instances over one database, and the ledger of what they
// answered.
type Fleet struct {
	DB     *DB
	A, B   *Instance
	Ledger *Ledger

	now atomic.Int64 // the Issuers' clock, in nanoseconds since 1970
}

// Instance is one leaf instance: its HTTP API (HTTP), and the handler of
// its port (Handler), gRPC in front of the HTTP API.
type Instance struct {
	Name    string
	Addr    string
	HTTP    http.Handler
	Handler http.Handler
	Seq     *sequence.Sequencer
	Alloc   *segment.Allocator
	Issuer  *bizid.Issuer
}

// New starts a fleet. The instances' leases last an hour and their rounds
// run when a space or tag is new to them, as leaf serve's do, so that
// owners do not change during a run; ownership is settled before New
// returns: instance A owns Ordered, instance B OrderedB, Cap, CapDay and
// Text, and each some sections of inbox (B all of tight and 会话).
func New(tb testing.TB) *Fleet {
	tb.Helper()
	fl := &Fleet{Ledger: newLedger()}
	fl.now.Store(Start.UnixNano())
	fl.DB = newDB(tb)
	fl.Ledger.db = fl.DB
	// Both listen before either starts: each advertises its address, where
	// the other forwards.
	lnA, lnB := listen(tb), listen(tb)
	fl.A = fl.instance(tb, "a", 1, lnA)
	fl.B = fl.instance(tb, "b", 2, lnB)
	// Both become members first, so that each takes only what it wins.
	fl.rounds(tb, 1)
	ctx := context.Background()
	for _, tag := range []string{Ordered, OrderedB, Cap, CapDay, Text} {
		for _, in := range []*Instance{fl.A, fl.B} {
			if err := in.Seq.Own(ctx, tag); err != nil {
				tb.Fatal(err)
			}
		}
	}
	fl.rounds(tb, 2)
	fl.checkOwners(tb)
	return fl
}

// rounds runs n rounds of each instance.
func (fl *Fleet) rounds(tb testing.TB, n int) {
	tb.Helper()
	for range n {
		for _, in := range []*Instance{fl.A, fl.B} {
			if err := in.Seq.Round(context.Background()); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// checkOwners fails unless each instance owns what New says.
func (fl *Fleet) checkOwners(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	for tag, want := range map[string]*Instance{Ordered: fl.A, OrderedB: fl.B, Cap: fl.B, CapDay: fl.B, Text: fl.B} {
		other := fl.A
		if want == fl.A {
			other = fl.B
		}
		var no *sequence.NotOwnerError
		if err := other.Seq.Own(ctx, tag); err != nil {
			tb.Fatal(err)
		}
		// Asked of the instance that does not own the tag, its row names
		// the owner and takes nothing.
		if _, err := other.Seq.NextRow(ctx, tag, tag, 1, 1); !errors.As(err, &no) || no.Addr != want.Addr {
			tb.Fatalf("fleettest: %q is not owned by %s (asking %s: %v); choose another name", tag, want.Name, other.Name, err)
		}
	}
	for _, in := range []*Instance{fl.A, fl.B} {
		if in.Seq.Stats().SectionsOwned < 2 {
			tb.Fatalf("fleettest: %s owns %d sections; each must own some of inbox", in.Name, in.Seq.Stats().SectionsOwned)
		}
	}
}

// Now is the Issuers' clock.
func (fl *Fleet) Now() time.Time { return time.Unix(0, fl.now.Load()).UTC() }

// Tick moves the Issuers' clock on by TickBy.
func (fl *Fleet) Tick() { fl.now.Add(int64(TickBy)) }

// Fault is the first rule an owner broke, or nil (see Ledger).
func (fl *Fleet) Fault() error { return fl.Ledger.Fault() }

func listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ln
}

// instance starts an instance on ln, wired as leaf serve wires one.
func (fl *Fleet) instance(tb testing.TB, name string, worker int64, ln net.Listener) *Instance {
	tb.Helper()
	db := fl.DB
	in := &Instance{Name: name, Addr: ln.Addr().String()}
	fl.Ledger.addrs[in.Addr] = true
	alloc := segment.New(db.Rows, segment.Options{RefreshInterval: -1})
	tb.Cleanup(func() { _ = alloc.Close() })
	in.Alloc = alloc
	q, err := sequence.New(sequence.Options{Store: db.Seqs, Ordered: db.owned, Tags: db.owned, Addr: in.Addr, ID: name, Lease: time.Hour})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = q.Close(context.Background()) })
	in.Seq = q
	is, err := bizid.New(bizid.Options{
		Store: db.Settings, IDs: alloc, Keys: [][]byte{[]byte(OpaqueKey)}, Now: fl.Now,
		Owner:     owner{q: q, l: fl.Ledger, db: db},
		IsUnknown: func(err error) bool { return errors.Is(err, segment.ErrUnknownTag) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	kinds := service.NewRegistry(db.Settings, is, alloc)
	in.Issuer = is
	gen, err := snowflake.New(context.Background(), snowflake.Settings{WorkerID: worker})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = gen.Close(context.Background()) })
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	ordered := orderedTags{Sequencer: q, l: fl.Ledger}
	tags := announcedRows{MemStore: db.Rows, db: db, alloc: alloc}
	svc := service.New(service.Config{
		Segments: alloc, Snowflake: gen, UUIDs: uuidv7.New(uuidv7.Options{}), Tags: tags,
		Kinds: kinds, Biz: is, BizTags: settingsAdmin{Store: db.Settings, db: db},
		Sequences: q, Spaces: spaceAdmin{MemStore: db.Seqs, seq: q}, Ordered: ordered,
		Metrics: reg, Logger: log, Peer: httpapi.NewPeer(0, nil),
	})
	in.HTTP = httpapi.New(httpapi.Config{Service: svc, AdminToken: Token, Registry: reg, Logger: log})
	in.Handler = grpcapi.New(grpcapi.Config{Service: svc, AdminToken: Token, Registry: reg, Logger: log}, in.HTTP)
	srv := &http.Server{Handler: fl.Ledger.countForwards(in.Handler), Protocols: grpcapi.ServerProtocols(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return in
}
