package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
)

func TestSequenceNext(t *testing.T) {
	st := sequencetest.NewMemStore(time.Now)
	if _, err := st.CreateSpace(context.Background(), sequence.Space{Name: "inbox", Step: 10, Sections: 4}); err != nil {
		t.Fatal(err)
	}
	q, err := sequence.New(sequence.Options{Store: st, Addr: "self:1", Lease: time.Hour, Interval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(context.Background())
	if err := q.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Service: service.New(service.Config{Sequences: q})}))
	defer srv.Close()
	dead := httptest.NewServer(nil)
	dead.Close() // an endpoint that does not answer: the client fails over
	c, err := client.New(client.Config{Endpoints: []string{dead.URL, srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for i := int64(1); i <= 25; i++ {
		v, err := c.SequenceNext(ctx, "inbox", "user/42")
		if err != nil || v != i {
			t.Fatalf("number %d = %d, %v", i, v, err)
		}
	}
	if first, err := c.SequenceNextN(ctx, "inbox", "user/42", 100); err != nil || first != 26 {
		t.Fatalf("batch = %d, %v", first, err)
	}
	if v, err := c.SequenceCurrent(ctx, "inbox", "user/42"); err != nil || v != 125 {
		t.Fatalf("current = %d, %v; want 125", v, err)
	}
	if v, err := c.SequenceCurrent(ctx, "inbox", "never"); err != nil || v != 0 {
		t.Fatalf("current of a key never given a number = %d, %v; want 0", v, err)
	}
	for _, tc := range []struct {
		name, space, key string
		want             error
	}{
		{"unknown space", "outbox", "k", client.ErrUnknownSpace},
		{"long key", "inbox", strings.Repeat("k", 257), client.ErrInvalidKey},
		{"not utf-8", "inbox", "a\xff", client.ErrInvalidKey},
		{"no space", "", "k", client.ErrInvalidSpace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.SequenceNext(ctx, tc.space, tc.key); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if _, err := c.SequenceCurrent(ctx, tc.space, tc.key); !errors.Is(err, tc.want) {
				t.Fatalf("current: err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestSequenceMalformedAnswers: a current that is not a number of 0 or
// more is ErrInternal; a routing table that makes no sense is not kept,
// and one of a scheme the client does not compute routes nothing.
func TestSequenceMalformedAnswers(t *testing.T) {
	var current, routes atomic.Value
	var direct atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Host == "owner.invalid:1":
			direct.Add(1)
			http.Error(w, "no", http.StatusBadGateway)
		case strings.HasPrefix(r.URL.Path, "/api/sequence/routes/"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, routes.Load().(string))
		case strings.HasPrefix(r.URL.Path, "/api/sequence/current/"):
			w.Header().Set(client.HeaderRoutesVersion, "00000000000000ff")
			io.WriteString(w, current.Load().(string))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, body := range []string{"-1", "abc", "1.5", "", "99999999999999999999"} {
		current.Store(body)
		routes.Store(`{}`)
		c := newClient(t, client.Config{Endpoints: []string{srv.URL}, NoDirectSequences: true})
		if v, err := c.SequenceCurrent(ctx, "inbox", "k"); !errors.Is(err, client.ErrInternal) {
			t.Errorf("current answering %q: %d, %v; want ErrInternal", body, v, err)
		}
	}
	current.Store("7")
	for _, tc := range []struct {
		name, body string
		kept       bool
	}{
		{"owner out of range", `{"sections":2,"scheme":"fnv1a64-mod","version":"v","members":["a:1"],"owners":[0,1]}`, false},
		{"owner below -1", `{"sections":2,"scheme":"fnv1a64-mod","version":"v","members":["a:1"],"owners":[0,-2]}`, false},
		{"too few owners", `{"sections":3,"scheme":"fnv1a64-mod","version":"v","members":["a:1"],"owners":[0,0]}`, false},
		{"no sections", `{"sections":0,"scheme":"fnv1a64-mod","version":"v","members":[],"owners":[]}`, false},
		{"no version", `{"sections":1,"scheme":"fnv1a64-mod","members":["a:1"],"owners":[0]}`, false},
		{"not host:port", `{"sections":1,"scheme":"fnv1a64-mod","version":"v","members":["a:1/x"],"owners":[0]}`, false},
		{"another scheme", `{"sections":1,"scheme":"xxhash-jump","version":"v","members":["owner.invalid:1"],"owners":[0]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			routes.Store(tc.body)
			c := newClient(t, client.Config{Endpoints: []string{srv.URL}})
			if v, err := c.SequenceCurrent(ctx, "inbox", "k"); err != nil || v != 7 {
				t.Fatalf("current = %d, %v", v, err)
			}
			if !tc.kept {
				testkit.WaitFor(t, 0, "the fetch", func() bool { return client.RoutesFetched(c, "inbox") })
				if v := client.RoutesVersion(c, "inbox"); v != "" {
					t.Fatalf("the table was kept: version %q", v)
				}
				return
			}
			testkit.WaitFor(t, 0, "the table", func() bool { return client.RoutesVersion(c, "inbox") == "v" })
			for range 3 {
				if v, err := c.SequenceCurrent(ctx, "inbox", "k"); err != nil || v != 7 {
					t.Fatalf("current = %d, %v", v, err)
				}
			}
		})
	}
	if n := direct.Load(); n != 0 {
		t.Fatalf("%d calls to the owner of a table of another scheme", n)
	}
}
