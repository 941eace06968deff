package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/leafid/leaf/client"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/store"
)

// Example takes ids of the tag "orders" from a leaf server. The server here
// is the real one on a test listener, over an embedded SQLite database.
func Example() {
	url, stop := exampleServer()
	defer stop()

	c, err := client.New(client.Config{Endpoints: []string{url}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx := context.Background()
	id, err := c.Next(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	ids, err := c.NextN(ctx, "orders", 3)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id, ids)
	// Output: 1 [2 3 4]
}

// ExampleClient_Source takes ids through a Source, which one goroutine
// keeps: many goroutines with one each hand out ids without contending.
func ExampleClient_Source() {
	url, stop := exampleServer()
	defer stop()

	c, err := client.New(client.Config{Endpoints: []string{url}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx := context.Background()
	src := c.Source("orders")
	var ids []int64
	for range 3 {
		id, err := src.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, id)
	}
	fmt.Println(ids)
	// Output: [1 2 3]
}

// exampleServer serves the leaf API with the tag "orders" on a test
// listener and returns its URL and a function that stops it.
func exampleServer() (url string, stop func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "leaf-example")
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.OpenSQLite(ctx, filepath.Join(dir, "leaf.db"), store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := st.CreateTag(ctx, segment.Tag{Name: "orders", Step: 1000, MaxID: 1}); err != nil {
		log.Fatal(err)
	}
	alloc := segment.New(st, segment.Options{})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Service: service.New(service.Config{Segments: alloc})}))
	return srv.URL, func() {
		srv.Close()
		_ = alloc.Close()
		_ = st.Close()
		_ = os.RemoveAll(dir)
	}
}
