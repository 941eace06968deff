// Command distance measures what the database's distance costs each kind
// of id: one `leaf serve` on MySQL (MariaDB here) reached through a proxy
// of its own that holds each of the database's answers for a delay (0, 5,
// 20 and 100 ms: another zone, another region), and wrk against it. It is
// not part of the service; scripts/distance.sh builds leaf and runs it.
//
// For each delay it makes a database of its own on the server, creates a
// plain tag, an ordered tag and a sequence space (64 sections) with the
// leaf command line (more ordered tags and spaces with -ordered-tags and
// -spaces, which the start takes too), starts leaf through the proxy and
// measures:
//
//   - the time from healthy to the first id of the ordered tag, and from
//     then to the first number of a sequence key (the start's round trips);
//   - the plain tag's first -duration of load from a fresh start of its
//     buffer, timed by this command's own client (ramp.go): p99, p99.9,
//     the requests over 100 ms, and the waits on the database the
//     allocator counted (the ramp-up);
//   - then, warm (after -warm of load not measured), -duration each of the
//     plain tag, the ordered tag and one hot sequence key: requests per
//     second and p99.
//
// Every figure of a delay is given beside the same figure at 0 ms from the
// same run, as a ratio. The machine's two cores are shared by wrk, leaf,
// the proxy and the database: the ratios, not the rates, are what carry.
package main

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

const adminToken = "distance-bench-admin-token"

type config struct {
	leaf, server, wrk string
	delays            []time.Duration
	duration, warm    time.Duration
	threads, conns    int
	spaces, tags      int // sequence spaces and ordered tags created
	plainStep         int // the plain tag's step
}

// figures are one delay's measurements.
type figures struct {
	delay                  time.Duration
	firstOrdered, firstSeq time.Duration
	ramp                   ramp
	rampWaits, rampLoads   int64
	plain, ordered, hot    load
}

type load struct {
	rps float64
	p99 time.Duration
}

func main() {
	var cfg config
	var delays string
	flag.StringVar(&cfg.leaf, "leaf", "/tmp/leaf", "the leaf binary")
	flag.StringVar(&cfg.server, "mysql", "root@tcp(127.0.0.1:3306)/", "a MySQL or MariaDB server: a DSN without a database")
	flag.StringVar(&cfg.wrk, "wrk", "wrk", "the wrk binary")
	flag.StringVar(&delays, "delays", "0,5ms,20ms,100ms", "the delays the proxy holds each answer for")
	flag.DurationVar(&cfg.duration, "duration", 6*time.Second, "each load's length")
	flag.DurationVar(&cfg.warm, "warm", 3*time.Second, "the load, not measured, that warms each kind before its warm figure")
	flag.IntVar(&cfg.threads, "threads", 2, "wrk's threads")
	flag.IntVar(&cfg.conns, "connections", 64, "wrk's connections")
	flag.IntVar(&cfg.spaces, "spaces", 1, "sequence spaces of 64 sections to create: the start takes them all")
	flag.IntVar(&cfg.tags, "ordered-tags", 1, "ordered tags to create: the start takes them all")
	flag.IntVar(&cfg.plainStep, "plain-step", 1000, "the plain tag's step: its first range")
	flag.Parse()
	for _, d := range strings.Split(delays, ",") {
		v, err := time.ParseDuration(d)
		if err != nil {
			log.Fatalf("-delays: %v", err)
		}
		cfg.delays = append(cfg.delays, v)
	}
	var all []figures
	for i, d := range cfg.delays {
		f, err := measure(cfg, d, i)
		if err != nil {
			log.Fatalf("delay %v: %v", d, err)
		}
		log.Printf("delay %v: %+v", d, f)
		all = append(all, f)
	}
	printTable(all)
}

// measure runs one delay from an empty database to a stopped leaf.
func measure(cfg config, delay time.Duration, n int) (figures, error) {
	f := figures{delay: delay}
	db := fmt.Sprintf("leaf_distance_%d_%d", os.Getpid(), n)
	if err := exec1(cfg.server, "DROP DATABASE IF EXISTS "+db, "CREATE DATABASE "+db); err != nil {
		return f, err
	}
	defer exec1(cfg.server, "DROP DATABASE IF EXISTS "+db)
	direct := strings.TrimSuffix(cfg.server, "/") + "/" + db
	creates := [][]string{
		{"tag", "add", "plain", "--step", strconv.Itoa(cfg.plainStep)},
		{"tag", "add", "ordered", "--ordered", "--step", "1000"},
		{"sequence", "add", "space"},
	}
	for i := 2; i <= cfg.tags; i++ {
		creates = append(creates, []string{"tag", "add", "ordered" + strconv.Itoa(i), "--ordered", "--step", "1000"})
	}
	for i := 2; i <= cfg.spaces; i++ {
		creates = append(creates, []string{"sequence", "add", "space" + strconv.Itoa(i)})
	}
	for _, args := range creates {
		if out, err := exec.Command(cfg.leaf, append(args, "--mysql-dsn", direct)...).CombinedOutput(); err != nil {
			return f, fmt.Errorf("leaf %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	proxy, err := newDelayProxy(serverAddr(cfg.server), delay)
	if err != nil {
		return f, err
	}
	defer proxy.close()
	host, stop, err := serve(cfg, strings.Replace(direct, serverAddr(cfg.server), proxy.addr(), 1))
	if err != nil {
		return f, err
	}
	defer stop()
	healthy := time.Now()
	if f.firstOrdered, err = until(host+"/api/segment/get/ordered", healthy); err != nil {
		return f, err
	}
	if f.firstSeq, err = until(host+"/api/sequence/next/space/first", time.Now()); err != nil {
		return f, err
	}
	return f, loads(cfg, host, &f)
}

// loads runs wrk: the plain tag's first load from a fresh buffer, then
// each kind warm.
func loads(cfg config, host string, f *figures) error {
	f.ramp = rampLoad(host+"/api/segment/get/plain", cfg.conns, cfg.duration, 100*time.Millisecond)
	var err error
	if f.rampWaits, err = waits(host, "plain"); err != nil {
		return err
	}
	if f.rampLoads, err = waitedLoads(host, "plain"); err != nil {
		return err
	}
	for _, l := range []struct {
		path string
		into *load
	}{
		{"/api/segment/get/plain", &f.plain},
		{"/api/segment/get/ordered", &f.ordered},
		{"/api/sequence/next/space/hot", &f.hot},
	} {
		if _, err = runWrk(cfg, host+l.path, cfg.warm); err != nil {
			return err
		}
		if *l.into, err = runWrk(cfg, host+l.path, cfg.duration); err != nil {
			return err
		}
	}
	return nil
}

func serverAddr(dsn string) string {
	_, rest, _ := strings.Cut(dsn, "@tcp(")
	addr, _, _ := strings.Cut(rest, ")")
	return addr
}

func exec1(server string, stmts ...string) error {
	db, err := sql.Open("mysql", server)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	return nil
}

// serve starts leaf on dsn and returns its URL once it is healthy.
func serve(cfg config, dsn string) (string, func(), error) {
	addr := "127.0.0.1:18391"
	cmd := exec.Command(cfg.leaf, "serve", "--addr", addr, "--mysql-dsn", dsn, "--admin-token", adminToken,
		"--snowflake-worker-id", "1", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	host := "http://" + addr
	if _, err := until(host+"/healthz", time.Now()); err != nil {
		stop()
		return "", nil, err
	}
	return host, stop, nil
}

// until polls url until it answers 200 and returns how long after since.
func until(url string, since time.Time) (time.Duration, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(since), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, fmt.Errorf("%s: no 200 within 2 minutes", url)
}

// waits is how often the tag's callers waited on a load, as the admin
// API's buffers say.
func waits(host, tag string) (int64, error) {
	req, _ := http.NewRequest(http.MethodGet, host+"/api/admin/segments", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Segments []struct {
			Tag   string `json:"tag"`
			Waits int64  `json:"waits"`
		} `json:"segments"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, err
	}
	for _, s := range out.Segments {
		if s.Tag == tag {
			return s.Waits, nil
		}
	}
	return 0, fmt.Errorf("no buffer of %s", tag)
}

// waitedLoads is how many loads of the tag its callers waited for, as
// leaf_segment_waited_loads_total says.
func waitedLoads(host, tag string) (int64, error) {
	resp, err := http.Get(host + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	series := `leaf_segment_waited_loads_total{tag="` + tag + `"} `
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /metrics", strings.TrimSpace(series))
}

// runWrk loads url for d and reads wrk's requests per second and 99th
// percentile.
func runWrk(cfg config, url string, d time.Duration) (load, error) {
	out, err := exec.Command(cfg.wrk, "-t"+strconv.Itoa(cfg.threads), "-c"+strconv.Itoa(cfg.conns),
		"-d"+d.String(), "--latency", url).CombinedOutput()
	if err != nil {
		return load{}, fmt.Errorf("wrk: %v: %s", err, out)
	}
	var l load
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 2 && fields[0] == "Requests/sec:":
			l.rps, _ = strconv.ParseFloat(fields[1], 64)
		case len(fields) == 2 && fields[0] == "99%":
			l.p99 = wrkDuration(fields[1])
		case len(fields) > 0 && strings.HasPrefix(fields[0], "Non-2xx"):
			return l, fmt.Errorf("wrk: %s: %s", url, line)
		}
	}
	return l, nil
}

// wrkDuration reads wrk's 19.70ms, 1.02s or 850.00us.
func wrkDuration(s string) time.Duration {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"m", time.Minute}, {"s", time.Second}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return time.Duration(f * float64(u.unit))
		}
	}
	return 0
}

func printTable(all []figures) {
	if len(all) == 0 {
		return
	}
	base := all[0]
	fmt.Println("| round trip | first ordered id after healthy | then the first sequence number | plain tag, first load: p99 / p99.9 / requests over 100 ms / requests that waited (loads waited for) | plain, warm | ordered tag, warm | one hot sequence key, warm |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, f := range all {
		fmt.Printf("| %v | %.2f s | %.2f s | %v / %v / %d of %d / %d (%d) | %s | %s | %s |\n", f.delay,
			f.firstOrdered.Seconds(), f.firstSeq.Seconds(), f.ramp.p99.Round(100*time.Microsecond), f.ramp.p999.Round(100*time.Microsecond),
			f.ramp.over, f.ramp.requests, f.rampWaits, f.rampLoads,
			ratio(f.plain, base.plain, f == base), ratio(f.ordered, base.ordered, f == base), ratio(f.hot, base.hot, f == base))
	}
}

func ratio(l, base load, isBase bool) string {
	if isBase {
		return fmt.Sprintf("%.1f k/s, p99 %v", l.rps/1000, l.p99.Round(100*time.Microsecond))
	}
	return fmt.Sprintf("%.2f×, p99 %v (%.2f×)", l.rps/base.rps, l.p99.Round(100*time.Microsecond), float64(l.p99)/float64(base.p99))
}
