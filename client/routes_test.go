package client_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// seqServer is a leaf server serving sequences: the real HTTP handler and
// Sequencer, on its own handle of a shared SQLite store, behind a real
// listener at the address it advertises. The test runs its ownership
// rounds.
type seqServer struct {
	q    *sequence.Sequencer
	srv  *httptest.Server
	addr string
	// calls counts the sequence requests that came from a client;
	// forwarded those another server forwarded here.
	calls, forwarded atomic.Int64
}

func (s *seqServer) URL() string { return s.srv.URL }

// seqCluster is servers sharing one SQLite database holding the space
// inbox.
type seqCluster struct {
	tb      testing.TB
	dsn     string
	servers []*seqServer
	tls     bool // the servers serve HTTPS, and forward over it
}

func newSeqCluster(tb testing.TB, sections, n int) *seqCluster {
	return newCluster(tb, sections, n, false)
}

// newCluster is newSeqCluster, its servers serving HTTPS when tlsOn (the
// test server's certificate, for 127.0.0.1).
func newCluster(tb testing.TB, sections, n int, tlsOn bool) *seqCluster {
	tb.Helper()
	c := &seqCluster{tb: tb, dsn: filepath.Join(tb.TempDir(), "leaf.db"), tls: tlsOn}
	st := storetest.Open(tb, store.SQLite, c.dsn)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 100, Sections: sections}); err != nil {
		tb.Fatal(err)
	}
	for range n {
		c.start()
	}
	c.settle()
	return c
}

// start adds a server; its sections come with the next rounds.
func (c *seqCluster) start() *seqServer {
	c.tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.tb.Fatal(err)
	}
	s := &seqServer{addr: ln.Addr().String()}
	s.q, err = sequence.New(sequence.Options{Store: storetest.Open(c.tb, store.SQLite, c.dsn), Addr: s.addr, Lease: time.Minute, Interval: -1})
	if err != nil {
		c.tb.Fatal(err)
	}
	c.tb.Cleanup(func() { _ = s.q.Close(context.Background()) })
	var peerTLS func(string) *tls.Config
	if c.tls {
		peerTLS = func(string) *tls.Config { return testServerTLS() }
	}
	h := httpapi.New(httpapi.Config{Service: service.New(service.Config{Sequences: s.q, Peer: httpapi.NewPeer(0, peerTLS)})})
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/sequence/next/") || strings.HasPrefix(r.URL.Path, "/api/sequence/current/") {
			if r.Header.Get(httpapi.HeaderForwarded) != "" {
				s.forwarded.Add(1)
			} else {
				s.calls.Add(1)
			}
		}
		h.ServeHTTP(w, r)
	})}}
	if c.tls {
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	c.tb.Cleanup(s.srv.Close)
	c.servers = append(c.servers, s)
	return s
}

// settle runs rounds until every server has read every other's handovers
// and takes: three rounds of each, in turn.
func (c *seqCluster) settle() {
	c.tb.Helper()
	for range 3 {
		for _, s := range c.servers {
			if err := s.q.Round(context.Background()); err != nil {
				c.tb.Fatal(err)
			}
		}
	}
}

// forwards is the number of requests forwarded between the servers.
func (c *seqCluster) forwards() int64 {
	var n int64
	for _, s := range c.servers {
		n += s.forwarded.Load()
	}
	return n
}

func (c *seqCluster) urls() []string {
	var out []string
	for _, s := range c.servers {
		out = append(out, s.URL())
	}
	return out
}

// keys are the keys the tests ask numbers of.
func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "user-" + strconv.Itoa(i)
	}
	return out
}

// taker asks numbers of keys and checks that each key's numbers strictly
// increase.
type taker struct {
	tb   testing.TB
	last map[string]int64
}

func newTaker(tb testing.TB) *taker { return &taker{tb: tb, last: map[string]int64{}} }

func (k *taker) take(c *client.Client, keys []string) {
	k.tb.Helper()
	for _, key := range keys {
		v, err := c.SequenceNext(context.Background(), "inbox", key)
		if err != nil {
			k.tb.Fatalf("next %s: %v", key, err)
		}
		if v <= k.last[key] {
			k.tb.Fatalf("key %s: %d after %d", key, v, k.last[key])
		}
		k.last[key] = v
	}
}

// waitTable waits until c holds the table the servers answer now.
func waitTable(tb testing.TB, c *client.Client, cl *seqCluster, keys []string) {
	tb.Helper()
	testkit.WaitFor(tb, 10*time.Second, "the client's routing table", func() bool {
		if v := client.RoutesVersion(c, "inbox"); v != "" && v == cl.servers[0].q.RoutesVersion("inbox") {
			return true
		}
		// An answer whose version differs asks for the table again.
		_, _ = c.SequenceCurrent(context.Background(), "inbox", keys[0])
		return false
	})
}

// TestSequenceDirectToOwner: once the client holds the table, every call
// goes straight to the owner of the key's section: no server forwards any,
// though the client was given one endpoint, which owns a third of them. A
// client told not to (NoDirectSequences) has most of its calls forwarded.
func TestSequenceDirectToOwner(t *testing.T) {
	cl := newSeqCluster(t, 24, 3)
	ks := keys(150)
	k := newTaker(t)

	through := newClient(t, client.Config{Endpoints: []string{cl.servers[0].URL()}, NoDirectSequences: true})
	before := cl.forwards()
	k.take(through, ks)
	if n := cl.forwards() - before; n < int64(len(ks))/3 {
		t.Fatalf("%d of %d calls through one endpoint were forwarded: the keys are not spread", n, len(ks))
	}

	c := newClient(t, client.Config{Endpoints: []string{cl.servers[0].URL()}})
	waitTable(t, c, cl, ks)
	before = cl.forwards()
	calls := make([]int64, len(cl.servers))
	for i, s := range cl.servers {
		calls[i] = s.calls.Load()
	}
	for range 3 {
		k.take(c, ks)
	}
	if n := cl.forwards() - before; n != 0 {
		t.Fatalf("%d calls forwarded with the table known", n)
	}
	for i, s := range cl.servers {
		if s.calls.Load() == calls[i] {
			t.Errorf("server %d was called by no one", i)
		}
	}
	// current goes to the owner too, and answers the last number taken.
	for _, key := range ks[:20] {
		v, err := c.SequenceCurrent(context.Background(), "inbox", key)
		if err != nil || v != k.last[key] {
			t.Fatalf("current %s = %d, %v; want %d", key, v, err, k.last[key])
		}
	}
	if n := cl.forwards() - before; n != 0 {
		t.Fatalf("%d calls of current forwarded", n)
	}
}

// testServerTLS trusts the certificate of httptest's TLS servers.
func testServerTLS() *tls.Config {
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	defer srv.Close()
	return srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

// TestSequenceDirectOverTLS: a client given an https:// endpoint calls the
// owners it learns of over HTTPS too, straight: no call is forwarded, and
// none is sent in clear (a server serving TLS would refuse it).
func TestSequenceDirectOverTLS(t *testing.T) {
	cl := newCluster(t, 24, 3, true)
	ks := keys(60)
	k := newTaker(t)
	c := newClient(t, client.Config{Endpoints: []string{cl.servers[0].URL()}, HTTPClient: &http.Client{
		Transport: &http.Transport{TLSClientConfig: testServerTLS()}}})
	if !strings.HasPrefix(cl.servers[0].URL(), "https://") {
		t.Fatalf("the servers serve %s", cl.servers[0].URL())
	}
	waitTable(t, c, cl, ks)
	before := cl.forwards()
	for range 3 {
		k.take(c, ks)
	}
	if n := cl.forwards() - before; n != 0 {
		t.Fatalf("%d calls forwarded with the table known: the owners were not called over HTTPS", n)
	}
	for i, s := range cl.servers {
		if s.calls.Load() == 0 {
			t.Errorf("server %d was called by no one", i)
		}
	}
}

// TestSequenceRoutesAfterMove: a server joins and takes some sections; the
// client's calls now get answers of a version other than its table's
// (from the old owners, which forward calls for the sections they gave up,
// and from the others); the client fetches the table again and its calls
// go straight to the owners again, the new server's included. No key's
// numbers go down meanwhile.
func TestSequenceRoutesAfterMove(t *testing.T) {
	cl := newSeqCluster(t, 24, 2)
	ks := keys(150)
	k := newTaker(t)
	c := newClient(t, client.Config{Endpoints: cl.urls(), RoutesInterval: 50 * time.Millisecond})
	waitTable(t, c, cl, ks)
	old := client.RoutesVersion(c, "inbox")
	k.take(c, ks)

	joined := cl.start()
	cl.settle()
	if joined.q.Stats().SectionsOwned == 0 {
		t.Fatal("the new server took no section")
	}
	// The first answers come with the new version; calls made before
	// the table is fetched again that reach an old owner are forwarded.
	before := cl.forwards()
	k.take(c, ks)
	t.Logf("%d of %d calls forwarded while the table was stale", cl.forwards()-before, len(ks))
	waitTable(t, c, cl, ks)
	if client.RoutesVersion(c, "inbox") == old {
		t.Fatal("the table's version did not change")
	}
	before = cl.forwards()
	calls := joined.calls.Load()
	k.take(c, ks)
	if n := cl.forwards() - before; n != 0 {
		t.Fatalf("%d calls forwarded after the table was fetched again", n)
	}
	if joined.calls.Load() == calls {
		t.Fatal("the new server was not called directly")
	}
}

// TestSequenceOwnerUnreachable: an owner stops (its listener closed, its
// sections released and taken by the others); the client, whose table
// still names it, gets no answer from it and falls back to the endpoints
// for those keys without an error. Once RoutesInterval has passed, the
// next answer, whose version is not the table's, fetches the table again,
// and calls go to the new owners directly.
func TestSequenceOwnerUnreachable(t *testing.T) {
	cl := newSeqCluster(t, 24, 3)
	ks := keys(150)
	k := newTaker(t)
	clock := testkit.NewClock(time.Now(), 0)
	c, err := client.New(client.Config{Endpoints: cl.urls(), RoutesInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	client.SetNow(c, clock.Now)
	t.Cleanup(func() { _ = c.Close() })
	waitTable(t, c, cl, ks)
	k.take(c, ks)

	gone := cl.servers[2]
	if client.OwnerFailures(c, "inbox", gone.addr) != 0 {
		t.Fatal("the table does not name the server about to stop")
	}
	gone.srv.Close()
	if err := gone.q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cl.servers = cl.servers[:2]
	cl.settle()
	if n := cl.servers[0].q.Stats().SectionsOwned + cl.servers[1].q.Stats().SectionsOwned; n != 24 {
		t.Fatalf("%d of 24 sections owned after a server stopped", n)
	}
	// The table still names the stopped server (no fetch within the
	// hour): its keys are served through the endpoints, one of which is
	// the stopped server too. It is called once, then left out.
	k.take(c, ks)
	k.take(c, ks)
	if n := client.OwnerFailures(c, "inbox", gone.addr); n != 1 {
		t.Fatalf("the stopped owner failed %d times, want once (then left out)", n)
	}
	clock.Add(time.Hour)
	waitTable(t, c, cl, ks)
	if client.OwnerFailures(c, "inbox", gone.addr) != -1 {
		t.Fatal("the new table names the stopped server")
	}
	before := cl.forwards()
	k.take(c, ks)
	if n := cl.forwards() - before; n != 0 {
		t.Fatalf("%d calls forwarded after the table was fetched again", n)
	}
}
