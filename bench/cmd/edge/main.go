// Command edge serves leaf's HTTP API as `leaf serve` wires it (httpapi with
// the segment allocator on an embedded SQLite store, snowflake with a fixed
// worker id, the metrics registry) and writes a CPU profile of the time it
// runs, so that a load test can show where a request's time goes. It is not
// part of the service.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18082", "listen address")
	profile := flag.String("cpuprofile", "", "write a CPU profile here until SIGINT or SIGTERM")
	flag.Parse()

	ctx := context.Background()
	dir, err := os.MkdirTemp("", "leaf-edge")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenSQLite(ctx, filepath.Join(dir, "leaf.db"), store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := st.CreateTag(ctx, segment.Tag{Name: "bench", MaxID: 1, Step: segment.MaxStep}); err != nil {
		log.Fatal(err)
	}
	alloc := segment.New(st, segment.Options{})
	defer alloc.Close()
	gen, err := snowflake.New(ctx, snowflake.Settings{WorkerID: 1})
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, metrics.Sources{Segments: alloc, Snowflake: gen}); err != nil {
		log.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Service: service.New(service.Config{Segments: alloc, Snowflake: gen, Tags: st, Metrics: reg}), Registry: reg})

	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() { <-stop; srv.Shutdown(context.Background()) }()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Print(err)
	}
}
