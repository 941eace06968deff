package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

// benchHandler is the API as serve wires it, with metrics, recovery and
// the error map on, over the real allocator and generator.
func benchHandler(b *testing.B) http.Handler {
	b.Helper()
	alloc := segment.New(segmenttest.New(segment.Tag{Name: "bench", MaxID: 1, Step: segment.MaxStep}), segment.Options{RefreshInterval: -1})
	b.Cleanup(func() { alloc.Close() })
	gen, err := snowflake.New(context.Background(), snowflake.Settings{WorkerID: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gen.Close(context.Background()) })
	reg := prometheus.NewRegistry()
	return httpapi.New(httpapi.Config{Segments: alloc, Snowflake: gen, Registry: reg})
}

// discard is a ResponseWriter that keeps nothing, so the benchmark counts
// the handler's own allocations, not a recorder's.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

func benchRoute(b *testing.B, target string) {
	h := benchHandler(b)
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := &discard{h: http.Header{}}
	h.ServeHTTP(w, req) // the first load
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// BenchmarkSegmentGet is one GET /api/segment/get/{tag} through the whole
// handler chain; its allocs/op is the figure in BENCHMARKS.md.
func BenchmarkSegmentGet(b *testing.B) { benchRoute(b, "/api/segment/get/bench") }

func BenchmarkSnowflakeGet(b *testing.B) { benchRoute(b, "/api/snowflake/get") }

func BenchmarkHealthz(b *testing.B) { benchRoute(b, "/healthz") }

// BenchmarkBareHandler is the floor: a net/http handler writing a constant.
func BenchmarkBareHandler(b *testing.B) {
	body := []byte("1234567890123")
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		_, _ = w.Write(body)
	})
	req := httptest.NewRequest(http.MethodGet, "/api/segment/get/bench", nil)
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}
