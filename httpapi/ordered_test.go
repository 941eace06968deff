package httpapi_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

// TestOrderedTagRoutes: an ordered tag's ids, asked of either of two
// instances, strictly increase: one owner serves them, the other
// forwards. Its range is refused; a tag that is not ordered goes to the
// allocator as before. The tag registry says which is ordered.
func TestOrderedTagRoutes(t *testing.T) {
	st := sequencetest.NewMemStore(time.Now)
	tags := sequencetest.NewOrderedTags(st, 5)
	tags.Create("orders", true)
	tags.Create("users", false)
	var seqs []*sequence.Sequencer
	var urls []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		q, err := sequence.New(sequence.Options{Store: st, Ordered: tags, Tags: tags, Addr: ln.Addr().String(), Lease: time.Hour, Interval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close(context.Background()) })
		segs := newFakeSegments("users")
		kinds := service.NewRegistry(orderedKinds{"orders"}, nil, nil)
		h := httpapi.New(httpapi.Config{Service: service.New(service.Config{Segments: segs, Kinds: kinds, Ordered: q, Peer: httpapi.NewPeer(0, nil), Logger: slog.New(slog.DiscardHandler)}), Registry: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
		srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
		srv.Start()
		t.Cleanup(srv.Close)
		seqs, urls = append(seqs, q), append(urls, srv.URL)
	}
	for range 3 {
		for _, q := range seqs {
			if err := q.Round(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	var last int64
	for i := range 30 {
		url := urls[i%2] + "/api/segment/get/orders"
		code, body, _ := get(t, url)
		if code != 200 {
			t.Fatalf("%s: %d %s", url, code, body)
		}
		id, _ := strconv.ParseInt(body, 10, 64)
		if id <= last {
			t.Fatalf("%d after %d", id, last)
		}
		last = id
	}
	code, body, _ := get(t, urls[1]+"/api/segment/batch/orders?count=7")
	if code != 200 || !strings.HasPrefix(body, `{"tag":"orders","ids":["`+strconv.FormatInt(last+1, 10)+`"`) {
		t.Fatalf("batch: %d %s (last %d)", code, body, last)
	}
	code, body, _ = get(t, urls[0]+"/api/segment/range/orders?count=5")
	if code != 400 || !strings.Contains(body, "ordered") {
		t.Fatalf("range of an ordered tag: %d %s", code, body)
	}
	if code, body, _ = get(t, urls[0]+"/api/segment/get/users"); code != 200 {
		t.Fatalf("a plain tag: %d %s", code, body)
	}
}

func TestCreateOrderedTagRefused(t *testing.T) {
	v := newEnv(t)
	wantError(t, v.admin(t, http.MethodPost, "/api/admin/tags", `{"tag":"o","ordered":true}`), 400, "invalid_request")
	wantError(t, v.admin(t, http.MethodPost, "/api/admin/tags", `{"tag":"o","ordered":"yes"}`), 400, "invalid_request")
	if rec := v.admin(t, http.MethodPost, "/api/admin/tags", `{"tag":"o","ordered":false}`); rec.Code != http.StatusCreated {
		t.Fatalf("ordered false: %d %s", rec.Code, rec.Body)
	}
}

// orderedKinds says that the names it holds are ordered tags and the
// others plain ones (service.TagKinds).
type orderedKinds []string

func (o orderedKinds) LookupTags(_ context.Context, names []string) (map[string]bizid.Row, error) {
	out := make(map[string]bizid.Row, len(names))
	for _, n := range names {
		out[n] = bizid.Row{Kind: bizid.Plain, Settings: bizid.Settings{Tag: n, Ordered: slices.Contains(o, n)}}
	}
	return out, nil
}
