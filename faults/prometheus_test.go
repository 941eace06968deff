package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/proc"
	"github.com/leafid/leaf/internal/testkit"
)

// alertRulesFile is the file of alert rules users deploy, loaded as it is.
const alertRulesFile = "../deploy/prometheus/leaf-alerts.yml"

const (
	// promInterval is the scrape and the rule evaluation interval: the
	// rules' own durations (for, ranges) are left as users get them, only
	// the time Prometheus takes to see a change is made short.
	promInterval = time.Second
	// promStartTimeout bounds the wait for a started server to be ready.
	promStartTimeout = 30 * time.Second
	// promStopGrace is how long a stopping server may take before SIGKILL.
	promStopGrace = 10 * time.Second
)

// requirePrometheus returns the path of the prometheus server (Debian's
// prometheus package), or skips tb when there is none; under CI=true that
// is a failure.
func requirePrometheus(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("prometheus")
	if err != nil {
		msg := "prometheus not found: install Debian's prometheus package (apt-get install prometheus) " +
			"to run the alert rules in a real server"
		if ci, _ := strconv.ParseBool(os.Getenv(mariadbtest.EnvCI)); ci {
			tb.Fatalf("%s (%s is true, so this is a failure, not a skip)", msg, mariadbtest.EnvCI)
		}
		tb.Skip(msg)
	}
	return path
}

// promServer is one Prometheus server of a test, on a free 127.0.0.1 port
// with a data directory of its own. It scrapes the instances given to
// startPrometheus (job "leaf") and evaluates the alert rules users deploy,
// every promInterval. It runs in a process group of its own and dies with
// the test process; tb.Cleanup stops it by its process id.
type promServer struct {
	addr   string
	out    *testkit.SyncBuffer // what the server wrote
	client *http.Client
}

// startPrometheus starts bin scraping ins and returns once it is ready.
func startPrometheus(tb testing.TB, bin string, ins []*instance) *promServer {
	tb.Helper()
	rules, err := filepath.Abs(alertRulesFile)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(rules); err != nil {
		tb.Fatal(err)
	}
	ports, err := mariadbtest.FreePorts(1)
	if err != nil {
		tb.Fatalf("free port: %v", err)
	}
	dir := tb.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(promConfig(rules, ins)), 0o644); err != nil {
		tb.Fatal(err)
	}
	s := &promServer{
		addr:   "127.0.0.1:" + strconv.Itoa(ports[0]),
		out:    &testkit.SyncBuffer{},
		client: &http.Client{Timeout: requestTimeout},
	}
	cmd := exec.Command(bin,
		"--config.file="+cfg,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+s.addr,
	)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = s.out, s.out
	p, err := proc.Start(cmd, nil)
	if err != nil {
		tb.Fatalf("start prometheus: %v", err)
	}
	tb.Cleanup(func() {
		if err := p.Signal(syscall.SIGTERM, promStopGrace, exitTimeout); err != nil {
			tb.Errorf("prometheus: %v", err)
		}
		if tb.Failed() {
			tb.Logf("prometheus on %s, last lines:\n%s", s.addr, lastLines(s.out.String(), logTail))
		}
	})

	deadline := time.Now().Add(promStartTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		status, _, _, err := get(ctx, s.client, "http://"+s.addr+"/-/ready", "")
		cancel()
		if err == nil && status == http.StatusOK {
			return s
		}
		select {
		case <-p.Done():
			tb.Fatalf("prometheus exited before it was ready (%v):\n%s", p.State(), lastLines(s.out.String(), logTail))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("prometheus is not ready after %v:\n%s", promStartTimeout, lastLines(s.out.String(), logTail))
		}
	}
}

// promConfig is the server's configuration: the rules file and one job that
// scrapes every instance.
func promConfig(rules string, ins []*instance) string {
	targets := make([]string, len(ins))
	for i, in := range ins {
		targets[i] = strconv.Quote(in.addr)
	}
	interval := promInterval.String()
	return fmt.Sprintf(`global:
  scrape_interval: %s
  scrape_timeout: %s
  evaluation_interval: %s
rule_files:
  - %s
scrape_configs:
  - job_name: leaf
    static_configs:
      - targets: [%s]
`, interval, interval, interval, strconv.Quote(rules), strings.Join(targets, ", "))
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// api GETs path from the server's HTTP API and decodes the data of a
// successful answer into v.
func (s *promServer) api(ctx context.Context, path string, query url.Values, v any) error {
	u := "http://" + s.addr + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("GET %s: %d: %w", path, resp.StatusCode, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %d %s: %s", path, resp.StatusCode, env.Status, env.Error)
	}
	return json.Unmarshal(env.Data, v)
}

// promAlert is one alert of /api/v1/alerts: pending or firing (resolved
// alerts are not listed).
type promAlert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
	Value    string            `json:"value"`
}

func (a promAlert) name() string { return a.Labels["alertname"] }

// key names the alert by its name and the labels that tell its instances
// apart; an instance found in names is shown by its name there.
func (a promAlert) key(names map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(a.Labels)) {
		v := a.Labels[k]
		switch k {
		case "alertname", "job", "severity":
			continue
		case "instance":
			if n, ok := names[v]; ok {
				v = n
			}
		}
		parts = append(parts, k+"="+v)
	}
	return a.name() + "{" + strings.Join(parts, ",") + "}"
}

// alerts is every alert pending or firing.
func (s *promServer) alerts(ctx context.Context) ([]promAlert, error) {
	var v struct {
		Alerts []promAlert `json:"alerts"`
	}
	err := s.api(ctx, "/api/v1/alerts", nil, &v)
	return v.Alerts, err
}

// promRule is one rule of /api/v1/rules.
type promRule struct {
	Group          string
	Name           string    `json:"name"`
	Type           string    `json:"type"`
	Health         string    `json:"health"`
	Duration       float64   `json:"duration"` // the rule's for, in seconds
	LastError      string    `json:"lastError"`
	LastEvaluation time.Time `json:"lastEvaluation"`
}

// rules is every rule the server loaded, with how its last evaluation went.
func (s *promServer) rules(tb testing.TB) []promRule {
	tb.Helper()
	var v struct {
		Groups []struct {
			Name  string     `json:"name"`
			Rules []promRule `json:"rules"`
		} `json:"groups"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := s.api(ctx, "/api/v1/rules", nil, &v); err != nil {
		tb.Fatalf("prometheus: %v", err)
	}
	var out []promRule
	for _, g := range v.Groups {
		for _, r := range g.Rules {
			r.Group = g.Name
			out = append(out, r)
		}
	}
	return out
}

// query evaluates expr now and returns the value of each series of the
// resulting vector, by its instance label.
func (s *promServer) query(tb testing.TB, expr string) map[string]string {
	tb.Helper()
	var v struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := s.api(ctx, "/api/v1/query", url.Values{"query": {expr}}, &v); err != nil {
		tb.Fatalf("prometheus: query %s: %v", expr, err)
	}
	out := map[string]string{}
	for _, r := range v.Result {
		out[r.Metric["instance"]] = fmt.Sprint(r.Value[1])
	}
	return out
}

// alertSnap is one answer of /api/v1/alerts, at a time of the scenario's
// clock (when the request was sent).
type alertSnap struct {
	at     time.Duration
	alerts []promAlert
	err    error
}

// alertWatch polls /api/v1/alerts at a steady interval until stopped and
// keeps every answer. tb.Cleanup stops it.
type alertWatch struct {
	clk clock
	srv *promServer

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex // protects snaps
	snaps []alertSnap
}

func watchAlerts(tb testing.TB, clk clock, srv *promServer, every time.Duration) *alertWatch {
	w := &alertWatch{clk: clk, srv: srv, done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go w.run(every)
	tb.Cleanup(w.stop)
	return w
}

func (w *alertWatch) run(every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		at := w.clk.now()
		ctx, cancel := context.WithTimeout(w.ctx, requestTimeout)
		alerts, err := w.srv.alerts(ctx)
		cancel()
		if w.ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		w.snaps = append(w.snaps, alertSnap{at: at, alerts: alerts, err: err})
		w.mu.Unlock()
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stop ends the polls and returns once the goroutine has.
func (w *alertWatch) stop() {
	w.cancel()
	<-w.done
}

// between is every answer to a poll sent in [from, to).
func (w *alertWatch) between(from, to time.Duration) []alertSnap {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []alertSnap
	for _, s := range w.snaps {
		if s.at >= from && s.at < to {
			out = append(out, s)
		}
	}
	return out
}

// first is the time of the first answer to a poll sent at or after from
// for which cond holds, or -1.
func (w *alertWatch) first(from time.Duration, cond func([]promAlert) bool) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.snaps {
		if s.at >= from && s.err == nil && cond(s.alerts) {
			return s.at
		}
	}
	return -1
}

// waitFor waits up to timeout for an answer to a poll sent at or after
// from for which cond holds, and returns its time, or -1 once timeout has
// passed.
func (w *alertWatch) waitFor(from, timeout time.Duration, cond func([]promAlert) bool) time.Duration {
	deadline := time.Now().Add(timeout)
	for {
		if at := w.first(from, cond); at >= 0 {
			return at
		}
		if time.Now().After(deadline) {
			return -1
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// history says, for every alert seen, when it was first seen in each
// state and when it was last seen, in seconds on the scenario's clock;
// and the polls that failed. Instances found in names are shown by their
// names there.
func (w *alertWatch) history(names map[string]string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	type seen struct {
		pending, firing, last time.Duration
	}
	by := map[string]*seen{}
	failed := 0
	var lastErr error
	for _, s := range w.snaps {
		if s.err != nil {
			failed++
			lastErr = s.err
			continue
		}
		for _, a := range s.alerts {
			k := a.key(names)
			h := by[k]
			if h == nil {
				h = &seen{pending: -1, firing: -1}
				by[k] = h
			}
			switch {
			case a.State == "pending" && h.pending < 0:
				h.pending = s.at
			case a.State == "firing" && h.firing < 0:
				h.firing = s.at
			}
			h.last = s.at
		}
	}
	secs := func(d time.Duration) string {
		if d < 0 {
			return "-"
		}
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		h := by[k]
		out = append(out, fmt.Sprintf("%s pending %s, firing %s, last seen %s", k, secs(h.pending), secs(h.firing), secs(h.last)))
	}
	if failed > 0 {
		out = append(out, fmt.Sprintf("%d polls of /api/v1/alerts failed, the last with: %v", failed, lastErr))
	}
	return out
}

// hasAlert reports whether alerts hold alert name in state (any state when
// empty) with every label of labels.
func hasAlert(alerts []promAlert, name, state string, labels map[string]string) bool {
	for _, a := range alerts {
		if a.name() != name || (state != "" && a.State != state) {
			continue
		}
		match := true
		for k, v := range labels {
			if a.Labels[k] != v {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return false
}
