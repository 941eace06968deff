package client_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// BenchmarkSequenceNext is one SequenceNext at a time over loopback HTTP,
// from two servers on one in-memory sequence store: owner serves every
// section, other none. The client is given other as its only endpoint.
// In direct, it holds the routing table and calls owner; in forwarded
// (NoDirectSequences), other forwards every call to owner; owner-endpoint
// (NoDirectSequences, owner as the endpoint) is the floor of direct.
//
//	go test -run '^$' -bench BenchmarkSequenceNext -benchtime 2s -count 3 ./client/
func BenchmarkSequenceNext(b *testing.B) {
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: sequence.MaxStep, Sections: 4}); err != nil {
		b.Fatal(err)
	}
	start := func() (*httptest.Server, *sequence.Sequencer) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		q, err := sequence.New(sequence.Options{Store: st, Addr: ln.Addr().String(), Lease: time.Hour, Interval: -1})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = q.Close(context.Background()) })
		srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: httpapi.New(httpapi.Config{Service: service.New(service.Config{Sequences: q, Logger: slog.New(slog.DiscardHandler)}), Logger: slog.New(slog.DiscardHandler)})}}
		srv.Start()
		b.Cleanup(srv.Close)
		return srv, q
	}
	owner, qo := start()
	if err := qo.Round(context.Background()); err != nil { // takes every section
		b.Fatal(err)
	}
	other, qt := start()
	if err := qt.Round(context.Background()); err != nil { // learns the owner
		b.Fatal(err)
	}
	run := func(b *testing.B, cfg client.Config) {
		c := newClient(b, cfg)
		ctx := context.Background()
		if !cfg.NoDirectSequences {
			testkit.WaitFor(b, 0, "the routing table", func() bool {
				_, _ = c.SequenceNext(ctx, "inbox", "alice")
				return client.RoutesVersion(c, "inbox") != ""
			})
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.SequenceNext(ctx, "inbox", "alice"); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, client.Config{Endpoints: []string{other.URL}}) })
	b.Run("forwarded", func(b *testing.B) { run(b, client.Config{Endpoints: []string{other.URL}, NoDirectSequences: true}) })
	b.Run("owner-endpoint", func(b *testing.B) { run(b, client.Config{Endpoints: []string{owner.URL}, NoDirectSequences: true}) })
}
