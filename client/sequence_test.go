package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/sequence"
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
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Sequences: q}))
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
		})
	}
}
