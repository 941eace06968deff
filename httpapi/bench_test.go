package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/bizidtest"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
)

// benchHandler is the API as serve wires it, with metrics, recovery and
// the error map on, over the real allocator and generator and a tag
// registry.
func benchHandler(b *testing.B, withBiz ...bool) http.Handler {
	b.Helper()
	rows := segmenttest.New(segment.Tag{Name: "bench", MaxID: 1, Step: segment.MaxStep})
	alloc := segment.New(rows, segment.Options{RefreshInterval: -1})
	kinds := service.NewRegistry(rows, nil, alloc)
	b.Cleanup(func() { alloc.Close() })
	var (
		biz    *bizidtest.Store
		issuer *bizid.Issuer
	)
	if len(withBiz) > 0 && withBiz[0] {
		biz = bizidtest.New(rows)
		for name, set := range map[string]bizid.Settings{
			"formatted": {Format: "ORD-{date:20060102}-{seq:6}", Reset: bizid.Day, TimeZone: "Asia/Shanghai"},
			"opaque":    {OpaqueBits: bizid.Bits63, KeyID: bizid.KeyID([]byte(testOpaqueKey))},
		} {
			if _, err := biz.CreateSpecialTag(context.Background(), segment.Tag{Name: name, MaxID: 1, Step: segment.MaxStep}, set); err != nil {
				b.Fatal(err)
			}
		}
		var err error
		if issuer, err = bizid.New(bizid.Options{Store: biz, IDs: alloc, Keys: [][]byte{[]byte(testOpaqueKey)}}); err != nil {
			b.Fatal(err)
		}
	}
	gen, err := snowflake.New(context.Background(), snowflake.Settings{WorkerID: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gen.Close(context.Background()) })
	reg := prometheus.NewRegistry()
	cfg := service.Config{Segments: alloc, Kinds: kinds, Snowflake: gen, Metrics: reg}
	if issuer != nil {
		cfg.Kinds, cfg.Biz, cfg.BizTags = service.NewRegistry(biz, issuer, alloc), issuer, biz
	}
	return httpapi.New(httpapi.Config{Service: service.New(cfg), Registry: reg})
}

// discard is a ResponseWriter that keeps nothing, so the benchmark counts
// the handler's own allocations, not a recorder's.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

func benchRoute(b *testing.B, target string, withBiz ...bool) {
	h := benchHandler(b, withBiz...)
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

// BenchmarkSegmentGetBizOn is BenchmarkSegmentGet, a plain tag, on a
// server that also serves formatted and opaque tags: the cost of telling
// them apart.
func BenchmarkSegmentGetBizOn(b *testing.B) { benchRoute(b, "/api/segment/get/bench", true) }

// BenchmarkSegmentGetFormatted is one text of a daily formatted tag.
func BenchmarkSegmentGetFormatted(b *testing.B) { benchRoute(b, "/api/segment/get/formatted", true) }

// BenchmarkSegmentGetOpaque is one id of an opaque tag.
func BenchmarkSegmentGetOpaque(b *testing.B) { benchRoute(b, "/api/segment/get/opaque", true) }

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
