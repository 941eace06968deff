package service_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// TestForwarder: a forward reaches the owner marked as forwarded and
// brings its answer back; a request forwarded already is refused; an
// owner that does not answer fails; each is counted once, and two
// forwarders on one registry share the count.
func TestForwarder(t *testing.T) {
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(service.HeaderForwarded) != "1" {
			http.Error(w, "not marked", http.StatusTeapot)
			return
		}
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("42"))
		case "/busy":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"moving"}}`))
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer owner.Close()
	addr := strings.TrimPrefix(owner.URL, "http://")
	reg := prometheus.NewRegistry()
	f := service.NewForwarder(reg, 0, nil)
	other := service.NewForwarder(reg, 0, nil) // the other edge's
	ctx := context.Background()

	ans, err := f.Forward(ctx, addr, "/ok?x=1", false)
	if err != nil || ans.Status != 200 || string(ans.Body) != "42" || ans.ContentType != "text/plain" {
		t.Fatalf("Forward = %+v, %v", ans, err)
	}
	if body, err := ans.OK(); err != nil || string(body) != "42" {
		t.Fatalf("OK = %q, %v", body, err)
	}
	ans, err = other.Forward(ctx, addr, "/busy", false)
	if err != nil || ans.Status != 503 || ans.RetryAfter != "1" {
		t.Fatalf("Forward of a 503 = %+v, %v", ans, err)
	}
	if _, err := ans.OK(); code(err) != service.Unavailable || !strings.Contains(err.Error(), "moving") {
		t.Fatalf("OK of the owner's error = %v", err)
	}
	ans, _ = f.Forward(ctx, addr, "/other", false)
	if _, err := ans.OK(); code(err) != service.Unavailable || !strings.Contains(err.Error(), "502") {
		t.Fatalf("OK of an answer without the error shape = %v", err)
	}
	if _, err := f.Forward(ctx, addr, "/ok", true); code(err) != service.Unavailable {
		t.Fatalf("Forward of a forwarded request = %v", err)
	}
	if _, err := f.Forward(ctx, "127.0.0.1:1", "/ok", false); code(err) != service.Unavailable || strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("Forward to no one = %v", err)
	}

	for result, want := range map[string]float64{"ok": 3, "refused": 1, "failed": 1} {
		if got := forwards(t, reg, result); got != want {
			t.Errorf("forwards %s = %v, want %v", result, got, want)
		}
	}
	if f.Forwards() != 5 || other.Forwards() != 5 {
		t.Errorf("Forwards = %d and %d, want 5", f.Forwards(), other.Forwards())
	}
}

// TestNextOrdered: an ordered tag's ids come from here when this instance
// owns it, from the owner's answer otherwise (read, asked for as a batch);
// a call that came forwarded is refused; a tag that is not ordered, or no
// ordered tags at all, is unavailable, and a range is refused.
func TestNextOrdered(t *testing.T) {
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/segment/batch/far" || r.URL.Query().Get("count") != "2" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusTeapot)
			return
		}
		_, _ = w.Write([]byte(`{"tag":"far","ids":["7","8"]}`))
	}))
	defer owner.Close()
	tags := orderedTags{"near": "", "far": strings.TrimPrefix(owner.URL, "http://")}
	f := service.NewForwarder(prometheus.NewRegistry(), 0, nil)
	ctx := context.Background()

	ids, ans, err := f.NextOrdered(ctx, tags, "near", 2, "/unused", false)
	if err != nil || ans != nil || len(ids) != 2 || ids[0] != 1 {
		t.Fatalf("owned: %v %v %v", ids, ans, err)
	}
	ids, ans, err = f.NextOrdered(ctx, tags, "far", 2, "/unused", false)
	if err != nil || ans != nil || len(ids) != 2 || ids[0] != 7 || ids[1] != 8 {
		t.Fatalf("forwarded: %v %v %v", ids, ans, err)
	}
	if _, _, err := f.NextOrdered(ctx, tags, "far", 2, "/unused", true); code(err) != service.Unavailable {
		t.Fatalf("forwarded twice: %v", err)
	}
	if _, _, err := f.NextOrdered(ctx, tags, "plain", 1, "/", false); code(err) != service.Unavailable {
		t.Fatalf("a tag that is not ordered: %v", err)
	}
	if _, _, err := (*service.Forwarder)(nil).NextOrdered(ctx, nil, "far", 1, "/", false); code(err) != service.Unavailable || !strings.Contains(err.Error(), "--sequences") {
		t.Fatalf("no ordered tags: %v", err)
	}
	if err := service.RefuseOrderedRange(ctx, tags, "near", "get"); code(err) != service.InvalidRequest {
		t.Fatalf("range: %v", err)
	}
}

// orderedTags maps each ordered tag to its owner's address, "" for this
// instance.
type orderedTags map[string]string

func (o orderedTags) Ordered(_ context.Context, tag string) (bool, error) {
	_, ok := o[tag]
	return ok, nil
}

func (o orderedTags) NextTag(_ context.Context, tag string, n int) ([]int64, error) {
	if addr := o[tag]; addr != "" {
		return nil, &sequence.NotOwnerError{Addr: addr}
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	return ids, nil
}

func code(err error) string {
	if err == nil {
		return ""
	}
	c, _ := service.Classify(err)
	return c
}

// forwards reads leaf_sequence_forwards_total{result}.
func forwards(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == "leaf_sequence_forwards_total" && m.GetLabel()[0].GetValue() == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no leaf_sequence_forwards_total{result=%q}", result)
	return 0
}

// TestForwardLargeAnswer: an owner's answer as long as a batch of the
// longest texts a formatted tag can have comes back whole; a longer one
// is refused as unavailable, never passed on cut.
func TestForwardLargeAnswer(t *testing.T) {
	text := `"` + strings.Repeat(`\u003c`, bizid.MaxFormatLen) + `"`
	batch := `{"tag":"t","ids":[` + strings.TrimSuffix(strings.Repeat(text+",", service.MaxCount), ",") + `]}`
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/longer" {
			_, _ = w.Write([]byte(strings.Repeat(" ", service.MaxForwardedBody-len(batch)+1)))
		}
		_, _ = w.Write([]byte(batch))
	}))
	defer owner.Close()
	addr := strings.TrimPrefix(owner.URL, "http://")
	reg := prometheus.NewRegistry()
	// A timeout no loaded machine reaches: the size is what is tested.
	f := service.NewForwarder(reg, time.Minute, nil)
	ans, err := f.Forward(context.Background(), addr, "/batch", false)
	if err != nil {
		t.Fatalf("Forward of %d bytes: %v", len(batch), err)
	}
	if ans.Status != 200 || string(ans.Body) != batch {
		t.Fatalf("Forward of %d bytes: %d, %d bytes back", len(batch), ans.Status, len(ans.Body))
	}
	if ans, err := f.Forward(context.Background(), addr, "/longer", false); code(err) != service.Unavailable {
		t.Fatalf("Forward of %d bytes = %v, %v", service.MaxForwardedBody+1, ans, err)
	}
	if got := forwards(t, reg, "failed"); got != 1 {
		t.Errorf("forwards failed = %v, want 1", got)
	}
}
