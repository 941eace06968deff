package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// BenchmarkSequenceNext is one GET /api/sequence/next/{space}/{key} of a
// key held in memory, through the whole handler chain.
func BenchmarkSequenceNext(b *testing.B) {
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: sequence.MaxStep, Sections: 4}); err != nil {
		b.Fatal(err)
	}
	q := newSequencer(b, st, "self:1")
	if err := q.Round(context.Background()); err != nil {
		b.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Service: service.New(service.Config{Sequences: q}), Registry: prometheus.NewRegistry()})
	req := httptest.NewRequest(http.MethodGet, "/api/sequence/next/inbox/alice", nil)
	w := &discard{h: http.Header{}}
	h.ServeHTTP(w, req)
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// loopbackPair is two instances on loopback sharing one sequence store:
// owner serves every section (and a segment tag), other forwards to it.
func loopbackPair(b *testing.B) (owner, other string) {
	b.Helper()
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: sequence.MaxStep, Sections: 4}); err != nil {
		b.Fatal(err)
	}
	alloc := segment.New(segmenttest.New(segment.Tag{Name: "bench", MaxID: 1, Step: segment.MaxStep}), segment.Options{RefreshInterval: -1})
	b.Cleanup(func() { alloc.Close() })
	start := func(withSegments bool) (string, *sequence.Sequencer) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		q := newSequencer(b, st, ln.Addr().String())
		cfg := service.Config{Sequences: q, Logger: slog.New(slog.DiscardHandler)}
		if withSegments {
			cfg.Segments = alloc
		}
		h := httpapi.New(httpapi.Config{Service: service.New(cfg), Registry: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
		srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
		srv.Start()
		b.Cleanup(srv.Close)
		return srv.URL, q
	}
	owner, qo := start(true)
	if err := qo.Round(context.Background()); err != nil { // takes every section
		b.Fatal(err)
	}
	other, qt := start(false)
	if err := qt.Round(context.Background()); err != nil { // learns the owner
		b.Fatal(err)
	}
	return owner, other
}

func benchGet(b *testing.B, url string) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	get := func() {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", url, resp.StatusCode)
		}
	}
	get()
	b.ReportAllocs()
	for b.Loop() {
		get()
	}
}

// BenchmarkLoopback compares, over loopback HTTP, one call at a time:
// the segment route, next of an in-memory key at its owner, and the same
// next sent to another instance, which forwards it to the owner.
func BenchmarkLoopback(b *testing.B) {
	owner, other := loopbackPair(b)
	b.Run("segment", func(b *testing.B) { benchGet(b, owner+"/api/segment/get/bench") })
	b.Run("sequence-owner", func(b *testing.B) { benchGet(b, owner+"/api/sequence/next/inbox/alice") })
	b.Run("sequence-forwarded", func(b *testing.B) { benchGet(b, other+"/api/sequence/next/inbox/alice") })
}

// BenchmarkSegmentGetWithOrderedCheck is BenchmarkSegmentGet as leaf
// serve runs it with sequences on: the get of a plain tag asks the
// Sequencer nothing (only the allocator's refusal of a tag that is not
// plain sends a request there), so the two should not differ.
func BenchmarkSegmentGetWithOrderedCheck(b *testing.B) {
	st := sequencetest.NewMemStore(time.Now)
	tags := sequencetest.NewOrderedTags(st, 10)
	tags.Create("bench", false)
	q, err := sequence.New(sequence.Options{Store: st, Ordered: tags, Tags: tags, Addr: "self:1", Lease: time.Hour, Interval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = q.Close(context.Background()) })
	alloc := segment.New(segmenttest.New(segment.Tag{Name: "bench", MaxID: 1, Step: segment.MaxStep}), segment.Options{RefreshInterval: -1})
	b.Cleanup(func() { alloc.Close() })
	h := httpapi.New(httpapi.Config{Service: service.New(service.Config{Segments: alloc, Ordered: q}), Registry: prometheus.NewRegistry()})
	req := httptest.NewRequest(http.MethodGet, "/api/segment/get/bench", nil)
	w := &discard{h: http.Header{}}
	h.ServeHTTP(w, req)
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}
