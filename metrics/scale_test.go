package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/segmenttest"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
)

// What watching an instance costs with 100,000 tags loaded: the real
// allocator over an in-memory store, behind the real HTTP edge and
// metrics, as `leaf serve` wires them.
//
//	go test -run TestWatchingManyTags -v ./metrics/          (sizes, asserted)
//	go test -run '^$' -bench Watching -benchmem ./metrics/   (times)

const (
	manyTags = 100_000
	// maxAnswer bounds each answer: /metrics, /status and /status.json,
	// the largest page included.
	maxAnswer = 1 << 20
)

// scaleInstance is an instance serving manyTags tags: each took an id,
// the busiest more, three fail their loads and one is named.
type scaleInstance struct {
	api     http.Handler
	failing []string
	busiest string
	named   string
}

var (
	scaleOnce sync.Once
	scale     *scaleInstance
	scaleErr  error
)

// many returns the instance, built once for the package's tests and
// benchmarks: loading 100,000 tags takes seconds under -race.
func many(tb testing.TB) *scaleInstance {
	tb.Helper()
	scaleOnce.Do(func() { scale, scaleErr = newScaleInstance() })
	if scaleErr != nil {
		tb.Fatal(scaleErr)
	}
	return scale
}

func newScaleInstance() (*scaleInstance, error) {
	ctx := context.Background()
	rows := make([]segment.Tag, manyTags)
	for i := range rows {
		rows[i] = segment.Tag{Name: fmt.Sprintf("service-%02d:table-%06d", i%50, i), MaxID: 1, Step: 1000}
	}
	st := segmenttest.New(rows...)
	loads := metrics.NewLoadTimes()
	// Never closed: the instance lives as long as the test binary.
	alloc := segment.New(st, segment.Options{RefreshInterval: -1, OnLoad: loads.Observe})
	if err := alloc.Refresh(ctx); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Go(func() {
			for i := w; i < len(rows); i += len(errs) {
				if _, err := alloc.Next(ctx, rows[i].Name); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &scaleInstance{busiest: rows[4321].Name, named: rows[77].Name}
	for i := range 30 { // the 30 busiest, rows[4321] the most
		if _, err := alloc.NextN(ctx, rows[4321+i].Name, 500-i); err != nil {
			return nil, err
		}
	}
	// Three tags whose next load fails: taking past a tenth of their
	// range starts it.
	for _, r := range rows[50000:50003] {
		st.SetFailTag(r.Name, errors.New("lock wait timeout exceeded"))
		if _, err := alloc.NextN(ctx, r.Name, 200); err != nil {
			return nil, err
		}
		s.failing = append(s.failing, r.Name)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		n := 0
		alloc.EachTag(func(t segment.TagStats) {
			if t.Failing {
				n++
			}
		})
		if n == len(s.failing) {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d tags failing after a minute, want %d", n, len(s.failing))
		}
		time.Sleep(10 * time.Millisecond)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	err := metrics.Register(reg, metrics.Sources{
		Version: "test", StoreUp: func() bool { return true },
		Segments: alloc, SegmentLoads: loads, SegmentTags: []string{s.named},
	})
	if err != nil {
		return nil, err
	}
	s.api = httpapi.New(httpapi.Config{Service: service.New(service.Config{Segments: alloc, Metrics: reg}), Registry: reg, Instance: httpapi.Instance{Version: "test", Store: "memory"}})
	return s, nil
}

// linesOf are the lines of body that begin with prefix.
func linesOf(body, prefix string) []string {
	var out []string
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, prefix) {
			out = append(out, strings.TrimSuffix(line, "\n"))
		}
	}
	return out
}

// get answers target and returns the body and how long it took.
func (s *scaleInstance) get(tb testing.TB, target string) (string, time.Duration) {
	tb.Helper()
	rec := httptest.NewRecorder()
	began := time.Now()
	s.api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	took := time.Since(began)
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET %s = %d: %.500s", target, rec.Code, rec.Body)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b), took
}

// TestWatchingManyTags: with 100,000 tags, every answer stays under 1 MB
// and holds what matters: the totals of all tags, the failing tags, the
// busiest, the one named.
func TestWatchingManyTags(t *testing.T) {
	s := many(t)
	body, took := s.get(t, "/metrics")
	t.Logf("/metrics: %d bytes, %d lines, %v", len(body), strings.Count(body, "\n"), took)
	if len(body) > maxAnswer {
		t.Errorf("/metrics is %d bytes, more than %d", len(body), maxAnswer)
	}
	wants := []string{
		fmt.Sprintf("leaf_segment_tags %d\n", manyTags),
		"leaf_segment_tags_failing 3\n",
		fmt.Sprintf("leaf_segment_tags_exported %d\n", 3+1+metrics.TopTags),
		fmt.Sprintf(`leaf_ids_issued_total{mode="segment",tag=%q} 501`, s.busiest),
		fmt.Sprintf(`leaf_segment_step{tag=%q}`, s.named),
	}
	for _, tag := range s.failing {
		wants = append(wants, fmt.Sprintf(`leaf_segment_loads_total{result="error",tag=%q} 1`, tag))
	}
	for _, want := range wants {
		if !strings.Contains(body, want) {
			name, _, _ := strings.Cut(want, " ")
			t.Errorf("/metrics lacks %q; it has %q", want, linesOf(body, name))
		}
	}

	for _, target := range []string{"/status", "/status.json", "/status?per_page=500", "/status.json?per_page=500",
		"/status?page=1000", "/status?q=table-0999"} {
		body, took := s.get(t, target)
		t.Logf("%s: %d bytes, %v", target, len(body), took)
		if len(body) > maxAnswer {
			t.Errorf("%s is %d bytes, more than %d", target, len(body), maxAnswer)
		}
		if strings.HasPrefix(target, "/status?per_page") || target == "/status" {
			// The failing tags come first, the totals count them all.
			for _, want := range append([]string{"1–", fmt.Sprintf("of %s tags", "100,000"), "The last load failed for 3 tags"}, s.failing...) {
				if !strings.Contains(body, want) {
					t.Errorf("%s lacks %q", target, want)
				}
			}
			if i := strings.Index(body, "tag-row"); i < 0 || !strings.Contains(body[i:i+400], s.failing[0]) {
				t.Errorf("%s does not begin with a failing tag", target)
			}
		}
	}
}

func BenchmarkWatching(b *testing.B) {
	s := many(b)
	for _, target := range []string{"/metrics", "/status", "/status.json", "/status?per_page=500", "/status?q=table-0999"} {
		b.Run(strings.TrimPrefix(target, "/"), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				body, _ := s.get(b, target)
				size = len(body)
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}
