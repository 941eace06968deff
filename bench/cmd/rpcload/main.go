// Command rpcload measures ids per second over gRPC beside the HTTP route,
// each against a trivial handler of its own protocol, in one run: the
// service's handler (grpcapi in front of httpapi, as `leaf serve` wires
// them, with the allocator on an embedded SQLite store and the metrics
// registry) and, on a second port, a bare net/http handler writing a
// constant and a bare connect handler returning a constant id. The
// clients run in the same process, so client and servers share the
// cores, as wrk does in scripts/loadtest.sh. It is not part of the service.
//
// Each round runs every case for -duration, the cases interleaved; the
// figures are the medians of the rounds (BENCHMARKS.md, "gRPC").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/leafid/leaf/grpcapi"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/metrics"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/proto/leaf/v1/leafv1connect"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
)

func main() {
	rounds := flag.Int("rounds", 5, "rounds")
	duration := flag.Duration("duration", 3*time.Second, "time of each case in each round")
	workers := flag.Int("c", 64, "concurrent callers per case")
	only := flag.String("only", "", "run only the cases whose name contains this")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the rounds here")
	flag.Parse()
	onlyCase = *only
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
	if err := run(*rounds, *duration, *workers); err != nil {
		log.Print(err)
	}
}

// The cases the others are compared with.
const (
	bareHTTP  = "bare net/http handler, HTTP/1.1"
	routeHTTP = "GET /api/segment/get/bench, HTTP/1.1"
	bareH2C   = "bare net/http handler, HTTP/2 (h2c)"
	bareGRPC  = "bare connect handler, gRPC"
	routeGRPC = "GetSegmentId, gRPC"
)

// onlyCase limits the run to the cases whose name contains it.
var onlyCase string

// A case is one kind of call, made by many callers at once; each call
// returns how many ids it got.
type testCase struct {
	name  string
	call  func(ctx context.Context) (int, error)
	bases []string // the names of the cases it is compared with
}

func run(rounds int, d time.Duration, workers int) error {
	ctx := context.Background()
	leafAddr, bareAddr, stop, err := serve(ctx)
	if err != nil {
		return err
	}
	defer stop()

	// HTTP/1.1 with keep-alive, a connection per caller, as wrk -c.
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}}
	get := func(url string) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			resp, err := httpClient.Get(url)
			if err != nil {
				return 0, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return 0, fmt.Errorf("%s: %s", url, resp.Status)
			}
			return 1, nil
		}
	}
	// gRPC: google.golang.org/grpc, one connection, every caller's calls
	// multiplexed on it, as gRPC clients are used.
	dial := func(addr string) (*grpc.ClientConn, error) {
		return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	leafConn, err := dial(leafAddr)
	if err != nil {
		return err
	}
	defer leafConn.Close()
	bareConn, err := dial(bareAddr)
	if err != nil {
		return err
	}
	defer bareConn.Close()
	invoke := func(cc *grpc.ClientConn, tag string) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var res leafv1.GetSegmentIdResponse
			return 1, cc.Invoke(ctx, "/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: tag}, &res)
		}
	}
	batch := func(ctx context.Context) (int, error) {
		var res leafv1.BatchSegmentIdsResponse
		err := leafConn.Invoke(ctx, "/leaf.v1.IdService/BatchSegmentIds", &leafv1.BatchSegmentIdsRequest{Tag: "bench", Count: 100}, &res)
		return len(res.GetIds()), err
	}
	// Connect's own protocol, protobuf over HTTP/1.1.
	connectClient := leafv1connect.NewIdServiceClient(httpClient, "http://"+leafAddr)
	connectGet := func(ctx context.Context) (int, error) {
		_, err := connectClient.GetSegmentId(ctx, connect.NewRequest(&leafv1.GetSegmentIdRequest{Tag: "bench"}))
		return 1, err
	}

	h2cTransport := &http.Transport{Protocols: new(http.Protocols)}
	h2cTransport.Protocols.SetUnencryptedHTTP2(true)
	h2cClient := &http.Client{Transport: h2cTransport}
	getH2C := func(ctx context.Context) (int, error) {
		resp, err := h2cClient.Get("http://" + bareAddr + "/")
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return 1, nil
	}
	cases := []testCase{
		{name: bareHTTP, call: get("http://" + bareAddr + "/")},
		{name: routeHTTP, call: get("http://" + leafAddr + "/api/segment/get/bench"), bases: []string{bareHTTP}},
		{name: bareH2C, call: getH2C, bases: []string{bareHTTP}},
		{name: bareGRPC, call: invoke(bareConn, "bench"), bases: []string{bareH2C}},
		{name: routeGRPC, call: invoke(leafConn, "bench"), bases: []string{bareGRPC, routeHTTP}},
		{name: "GetSegmentId, Connect (proto, HTTP/1.1)", call: connectGet, bases: []string{bareHTTP, routeHTTP}},
		{name: "GET /api/segment/batch/bench?count=100, HTTP/1.1", bases: []string{routeHTTP}, call: func(ctx context.Context) (int, error) {
			if _, err := get("http://" + leafAddr + "/api/segment/batch/bench?count=100")(ctx); err != nil {
				return 0, err
			}
			return 100, nil
		}},
		{name: "BatchSegmentIds count=100, gRPC", call: batch, bases: []string{routeGRPC}},
	}
	if onlyCase != "" {
		cases = slices.DeleteFunc(cases, func(c testCase) bool { return !strings.Contains(c.name, onlyCase) })
	}
	for _, c := range cases { // warm up: connections, the first segment
		if _, _, err := measure(ctx, c, workers, d/3); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	results := make([][]float64, len(cases)) // ids/s
	perCPU := make([][]float64, len(cases))  // ids per CPU second
	for r := range rounds {
		for i, c := range cases {
			rate, cpuRate, err := measure(ctx, c, workers, d)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			results[i] = append(results[i], rate)
			perCPU[i] = append(perCPU[i], cpuRate)
			fmt.Fprintf(os.Stderr, "round %d: %-50s %10.0f ids/s %10.0f ids per CPU second\n", r+1, c.name, rate, cpuRate)
		}
	}
	table(cases, results, "ids/s")
	fmt.Println()
	table(cases, perCPU, "ids per CPU second")
	return nil
}

// table prints the medians of results, and each case's ratios to its
// bases.
func table(cases []testCase, results [][]float64, unit string) {

	// A ratio is taken within each round, between measurements a few
	// seconds apart, then the median of the rounds: the machine's load
	// changes less within a round than across the run.
	index := func(name string) int { return slices.IndexFunc(cases, func(x testCase) bool { return x.name == name }) }
	fmt.Printf("| case | median %s | ratio: median of the rounds (range) | runs |\n|---|---|---|---|\n", unit)
	for i, c := range cases {
		var ratios []string
		for _, base := range c.bases {
			b := index(base)
			if b < 0 {
				continue
			}
			r := make([]float64, len(results[i]))
			for k := range r {
				r[k] = results[i][k] / results[b][k]
			}
			ratios = append(ratios, fmt.Sprintf("**%.2f×** %s (%.2f–%.2f)", median(r), base, slices.Min(r), slices.Max(r)))
		}
		runs := ""
		for _, v := range results[i] {
			runs += fmt.Sprintf(" %.0f", v)
		}
		fmt.Printf("| %s | %.0f | %s |%s |\n", c.name, median(results[i]), strings.Join(ratios, "; "), runs)
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs c with workers callers for d and returns ids per second of
// the clock and ids per second of the process's CPU time (client and
// server together). The second depends far less on what else the machine
// runs.
func measure(ctx context.Context, c testCase, workers int, d time.Duration) (float64, float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		ids   atomic.Int64
		first atomic.Pointer[error]
		wg    sync.WaitGroup
	)
	cpu0 := cpuTime()
	start := time.Now()
	deadline := start.Add(d)
	for range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				n, err := c.call(ctx)
				if err != nil {
					first.CompareAndSwap(nil, &err)
					cancel()
					return
				}
				ids.Add(int64(n))
			}
		})
	}
	wg.Wait()
	took, cpu := time.Since(start), cpuTime()-cpu0
	if p := first.Load(); p != nil {
		return 0, 0, *p
	}
	return float64(ids.Load()) / took.Seconds(), float64(ids.Load()) / cpu.Seconds(), nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// serve starts leaf's handler, as `leaf serve` wires it, and the bare
// handlers, each on a loopback port over HTTP/1.1 and unencrypted HTTP/2.
func serve(ctx context.Context) (leafAddr, bareAddr string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "leaf-rpcload")
	if err != nil {
		return "", "", nil, err
	}
	st, err := store.OpenSQLite(ctx, filepath.Join(dir, "leaf.db"), store.Options{})
	if err != nil {
		return "", "", nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		return "", "", nil, err
	}
	if _, err := st.CreateTag(ctx, segment.Tag{Name: "bench", MaxID: 1, Step: segment.MaxStep}); err != nil {
		return "", "", nil, err
	}
	alloc := segment.New(st, segment.Options{})
	gen, err := snowflake.New(ctx, snowflake.Settings{WorkerID: 1})
	if err != nil {
		return "", "", nil, err
	}
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg, metrics.Sources{Segments: alloc, Snowflake: gen}); err != nil {
		return "", "", nil, err
	}
	api := httpapi.New(httpapi.Config{Service: service.New(service.Config{Segments: alloc, Snowflake: gen, Tags: st, Metrics: reg}), Registry: reg})
	leaf := grpcapi.New(grpcapi.Config{Service: service.New(service.Config{Segments: alloc, Snowflake: gen, Tags: st, Metrics: reg}), Registry: reg}, api)

	body := []byte("1234567890123")
	bare := http.NewServeMux()
	bare.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		_, _ = w.Write(body)
	})
	bare.Handle(leafv1connect.NewIdServiceHandler(constantID{}))

	var servers []*http.Server
	start := func(h http.Handler) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		srv := &http.Server{Handler: h, Protocols: grpcapi.ServerProtocols(), ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				log.Print(err)
			}
		}()
		return ln.Addr().String(), nil
	}
	if leafAddr, err = start(leaf); err != nil {
		return "", "", nil, err
	}
	if bareAddr, err = start(bare); err != nil {
		return "", "", nil, err
	}
	return leafAddr, bareAddr, func() {
		for _, s := range servers {
			_ = s.Close()
		}
		_ = alloc.Close()
		_ = gen.Close(ctx)
		_ = st.Close()
		_ = os.RemoveAll(dir)
	}, nil
}

// constantID answers GetSegmentId with a constant: the floor of a gRPC
// call through connect.
type constantID struct {
	leafv1connect.UnimplementedIdServiceHandler
}

func (constantID) GetSegmentId(context.Context, *connect.Request[leafv1.GetSegmentIdRequest]) (*connect.Response[leafv1.GetSegmentIdResponse], error) {
	return connect.NewResponse(&leafv1.GetSegmentIdResponse{Id: 1234567890123}), nil
}
