package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/proc"
)

const (
	adminToken   = "conformance-admin-token"
	startTimeout = 30 * time.Second
	exitTimeout  = 10 * time.Second
)

// server is one `leaf serve` process, restarted at will on the same port,
// behind a proxy of its own that outlives it. Clients reach it through the
// proxy only, and it advertises the proxy's address to other servers and
// in its routing tables, so every request to it passes the proxy.
type server struct {
	idx   int
	addr  string // where leaf listens, 127.0.0.1:port
	args  []string
	log   string // the file its output goes to
	proxy *proxy

	mu sync.Mutex // protects p
	p  *proc.Process
}

// startServers starts n servers with the store args of c's store.
func startServers(tb testing.TB, n int, storeArgs func(i int) []string, extra []string) []*server {
	tb.Helper()
	ports, err := mariadbtest.FreePorts(n)
	if err != nil {
		tb.Fatalf("free ports: %v", err)
	}
	dir := tb.TempDir()
	out := make([]*server, n)
	for i := range n {
		px := newProxy(tb, "127.0.0.1:"+strconv.Itoa(ports[i]))
		s := &server{idx: i, addr: "127.0.0.1:" + strconv.Itoa(ports[i]), proxy: px, log: filepath.Join(dir, fmt.Sprintf("leaf-%d.log", i))}
		s.args = append([]string{"serve", "--addr", s.addr, "--advertise-addr", px.addr,
			"--log-format", "json", "--admin-token", adminToken,
			"--snowflake-worker-id", strconv.Itoa(i)}, storeArgs(i)...)
		s.args = append(s.args, extra...)
		tb.Cleanup(func() {
			_ = s.kill()
			if tb.Failed() {
				tb.Logf("server %d (%s), last lines of its log:\n%s", i, s.addr, tail(s.log, 25))
			}
		})
		out[i] = s
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, s := range out {
		wg.Go(func() { errs[i] = s.start() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	return out
}

// start starts the server and returns once it answers /readyz. A server
// that exits before serving is started once more: on a loaded machine
// MariaDB may not answer within the server's store timeout.
func (s *server) start() error {
	err := s.startOnce()
	if err != nil && errors.Is(err, errExited) {
		err = s.startOnce()
	}
	return err
}

var errExited = errors.New("exited before serving")

func (s *server) startOnce() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil && !s.p.Exited() {
		return fmt.Errorf("server %d runs already", s.idx)
	}
	f, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(leafBin, s.args...)
	cmd.Env = leafEnv()
	cmd.Stdout, cmd.Stderr = f, f
	p, err := proc.Start(cmd, nil)
	if err != nil {
		return fmt.Errorf("server %d: %w", s.idx, err)
	}
	s.p = p
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		if p.Exited() {
			return fmt.Errorf("server %d %w (%v):\n%s", s.idx, errExited, p.State(), tail(s.log, 25))
		}
		resp, err := http.Get("http://" + s.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = p.Signal(syscall.SIGKILL, 0, exitTimeout)
	return fmt.Errorf("server %d does not serve after %v:\n%s", s.idx, startTimeout, tail(s.log, 25))
}

// kill kills the server with SIGKILL, as a crash would.
func (s *server) kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil || s.p.Exited() {
		return nil
	}
	return s.p.Signal(syscall.SIGKILL, 0, exitTimeout)
}

func (s *server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p != nil && !s.p.Exited()
}

// admin makes an admin call to the server, which must answer 201.
func (s *server) admin(path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+s.addr+path, strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s %s: %d %s", path, b, resp.StatusCode, out)
	}
	return nil
}

// routes is a routing table as the server answers it.
type routes struct {
	Version string   `json:"version"`
	Members []string `json:"members"`
	Owners  []int    `json:"owners"`
}

func (s *server) routes(space string) (routes, error) {
	var r routes
	resp, err := http.Get("http://" + s.addr + "/api/sequence/routes/" + url.PathEscape(space))
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("routes of %s: %d", space, resp.StatusCode)
	}
	return r, json.NewDecoder(resp.Body).Decode(&r)
}

// leafEnv is the environment without LEAF_ variables, which leaf would
// read as flags.
func leafEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEAF_") {
			env = append(env, kv)
		}
	}
	return env
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return "  " + strings.Join(lines[max(0, len(lines)-n):], "\n  ")
}

// record is one request the proxy passed or answered.
type record struct {
	path      string // decoded
	held      string // the Leaf-Routes-Version sent
	answered  string // the Leaf-Routes-Version answered
	forwarded bool   // sent by a server forwarding a client's request
	order     uint64 // when it came, across every proxy of the run
}

// arrivals orders the records of every proxy.
var arrivals atomic.Uint64

// injection is an answer the proxy gives instead of the server's to the
// requests whose path starts with path.
type injection struct {
	path   string
	status int
	body   string
}

// recordKey is the context key of a request's index in proxy.records.
type recordKey struct{}

// proxy stands in front of a server: it passes requests on, records them,
// and answers injected errors. When the server is down it drops the
// connection without an answer, as a dead server's port would.
type proxy struct {
	addr string
	srv  *http.Server

	mu      sync.Mutex // protects the fields below
	records []record
	inject  *injection
}

func newProxy(tb testing.TB, target string) *proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy: %v", err)
	}
	p := &proxy{addr: ln.Addr().String()}
	u := &url.URL{Scheme: "http", Host: target}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorHandler = func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) }
	rp.ModifyResponse = func(resp *http.Response) error {
		i, ok := resp.Request.Context().Value(recordKey{}).(int)
		if v := resp.Header.Get("Leaf-Routes-Version"); ok && v != "" {
			p.mu.Lock()
			p.records[i].answered = v
			p.mu.Unlock()
		}
		return nil
	}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			p.records = append(p.records, record{
				path:      r.URL.Path,
				held:      r.Header.Get("Leaf-Routes-Version"),
				forwarded: r.Header.Get("Leaf-Forwarded") != "",
				order:     arrivals.Add(1),
			})
			i, inj := len(p.records)-1, p.inject
			p.mu.Unlock()
			if inj != nil && strings.HasPrefix(r.URL.Path, inj.path) {
				if strings.HasPrefix(inj.body, "{") {
					w.Header().Set("Content-Type", "application/json")
				}
				w.WriteHeader(inj.status)
				_, _ = io.WriteString(w, inj.body)
				return
			}
			rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), recordKey{}, i)))
		}),
	}
	go func() { _ = p.srv.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = p.srv.Shutdown(ctx)
		_ = p.srv.Close()
	})
	return p
}

func (p *proxy) url() string { return "http://" + p.addr }

func (p *proxy) setInjection(inj *injection) {
	p.mu.Lock()
	p.inject = inj
	p.mu.Unlock()
}

// matching returns the records whose path starts with prefix.
func (p *proxy) matching(prefix string) []record {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []record
	for _, r := range p.records {
		if strings.HasPrefix(r.path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// refusing is an endpoint that answers every request 503 unavailable.
func refusing(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"unavailable","message":"refusing, on purpose"}}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// unreachable is an endpoint where nothing listens.
func unreachable(tb testing.TB) string {
	tb.Helper()
	ports, err := mariadbtest.FreePorts(1)
	if err != nil {
		tb.Fatal(err)
	}
	return "http://127.0.0.1:" + strconv.Itoa(ports[0])
}
