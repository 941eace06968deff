// Command manytags measures one `leaf serve` on MySQL with many tags: how
// long the first request for every tag takes from many concurrent clients
// (each of them a first load from the database), the same requests again
// once every tag is loaded, the process's memory per loaded tag, and the
// CPU it uses idle with them all loaded, over a window that holds one
// read of the tag list. It is not part of the service; scripts/manytags.sh
// builds leaf and runs it.
//
// For each count of tags and each round it creates a database of its own
// on the server, fills leaf_alloc, starts the binary given by -leaf on
// it, measures, stops it and drops the database. The idle CPU is measured
// in the last round only. The machine's load average is printed beside
// each figure: the clients, leaf and the database share its cores. Given
// several binaries (-leaf old,new), each round runs each of them in turn,
// so that a change of the machine's load falls on all of them alike. The
// database server's CPU during the first requests is read from /proc when
// it runs on this machine (its @@pid_file).
//
// With -stores 1,3 each round also runs each binary over a set of that many
// stores: as many databases on the server, each filled with the same tags,
// made one set by `leaf store init`, served with LEAF_STORES (the first
// store preferred). The databases share one server, so that the one-store
// and the several-store runs differ only in what leaf does and asks: on a
// machine of two cores, servers of their own would share the same cores.
//
// With -profile DIR and a binary built with -tags pgoprofile,pprof, each
// run leaves in DIR a CPU profile of the first requests and the heap
// after the second:
//
//	CGO_ENABLED=0 go build -tags pprof,pgoprofile -o /tmp/leaf-prof ./cmd/leaf
//	cd bench && go run ./cmd/manytags -leaf /tmp/leaf-prof -tags 100000 -rounds 1 -profile /tmp/prof
package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/migrations"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat:
// 100 on every Linux architecture Go builds for.
const clockTicks = 100

func main() {
	server := flag.String("dsn", "root@tcp(127.0.0.1:3306)/", "DSN of the MySQL server, without a database: each run creates its own")
	binaries := flag.String("leaf", "bin/leaf", "the leaf binary, or comma-separated binaries to compare")
	counts := flag.String("tags", "1000,10000,100000", "comma-separated counts of tags, one run each")
	clients := flag.Int("clients", 64, "concurrent clients, each with its own connection")
	idle := flag.Duration("idle", 65*time.Second, "how long to measure the idle CPU; the default holds one tag refresh (every 60s)")
	port := flag.Int("port", 18090, "port of leaf serve on 127.0.0.1")
	keep := flag.Bool("keep", false, "keep each run's database")
	rounds := flag.Int("rounds", 3, "runs per count of tags; the table shows the median run")
	again := flag.Int("again", 1, "passes over every tag once all are loaded; leaf's CPU and the time are of all of them")
	profile := flag.String("profile", "", "`directory` for profiles of each run: a CPU profile of the first requests and the heap after the second; the binary must be built with -tags pgoprofile,pprof")
	storeCounts := flag.String("stores", "1", "comma-separated counts of stores, each run by every binary in every round: 1 is one database, more a set of that many databases on the server")
	flag.Parse()

	var sizes []int
	for _, s := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("-tags: %q is not a count", s)
		}
		sizes = append(sizes, n)
	}
	cfg, err := mysql.ParseDSN(*server)
	if err != nil {
		log.Fatalf("-dsn: %v", err)
	}
	var stores []int
	for _, s := range strings.Split(*storeCounts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("-stores: %q is not a count", s)
		}
		stores = append(stores, n)
	}
	var runners []runner
	for _, b := range strings.Split(*binaries, ",") {
		abs, err := filepath.Abs(b)
		if err != nil {
			log.Fatal(err)
		}
		for _, n := range stores {
			runners = append(runners, runner{server: cfg, binary: abs, stores: n, clients: *clients, idle: *idle,
				addr: fmt.Sprintf("127.0.0.1:%d", *port), pprof: fmt.Sprintf("127.0.0.1:%d", *port+1), keep: *keep, profile: *profile, again: max(*again, 1)})
		}
	}
	n := max(*rounds, 1)
	rows := make([][]string, len(runners))
	for _, tags := range sizes {
		runs := make([][]result, len(runners))
		for round := range n {
			for i, r := range runners {
				// A run that fails (a store that stopped answering on a
				// machine busy with other work) is logged and run again,
				// twice at most.
				var (
					res result
					err error
				)
				for try := 0; try < 3; try++ {
					if res, err = r.run(context.Background(), tags, round, round == n-1); err == nil {
						break
					}
					log.Printf("FAILED, run again: %s, %d tags: %v", r.name(), tags, err)
				}
				if err != nil {
					log.Fatalf("%s, %d tags: %v", r.name(), tags, err)
				}
				runs[i] = append(runs[i], res)
			}
		}
		for i := range runners {
			rows[i] = append(rows[i], summary(runs[i]))
		}
	}
	for i, r := range runners {
		fmt.Printf("\n%s: %d clients; medians of %d rounds, the range in brackets; idle CPU over %v in the last round\n\n",
			r.name(), *clients, n, *idle)
		fmt.Println("| tags | first requests | per second | p50 / p99 | leaf's CPU | database's CPU | again, all loaded | leaf's CPU | RSS per tag | idle CPU |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
		for _, row := range rows[i] {
			fmt.Println(row)
		}
	}
}

type runner struct {
	server  *mysql.Config
	binary  string
	stores  int // databases: 1, or a set of that many
	clients int
	idle    time.Duration
	addr    string
	pprof   string // address of net/http/pprof in a -tags pprof build
	keep    bool
	profile string // directory of the profiles; empty: none taken
	again   int    // passes once every tag is loaded
}

// name says which binary the runner runs, over how many stores.
func (r runner) name() string {
	if r.stores == 1 {
		return r.binary + ", one store"
	}
	return fmt.Sprintf("%s, %d stores", r.binary, r.stores)
}

type result struct {
	tags              int
	warm, again       pass
	rssBefore, rss    int64         // bytes, when the server was ready and after the requests
	warmCPU, againCPU time.Duration // leaf's CPU time during the first requests and the second
	dbCPU             time.Duration // the database server's during the first requests; -1 when unknown
	idleCPU           float64       // share of one core; -1 when not measured
	rssIdle           int64         // bytes, after the idle window; 0 when not measured
}

// summary is the table row of the runs of one count of tags: the run of
// the median first-request time, with the range of all of them.
func summary(runs []result) string {
	byWarm := slices.Clone(runs)
	slices.SortFunc(byWarm, func(x, y result) int { return int(x.warm.took - y.warm.took) })
	r := byWarm[len(byWarm)/2]
	idle := "-"
	for _, run := range runs {
		if run.idleCPU >= 0 {
			idle = fmt.Sprintf("%.2f%% (RSS per tag then %.0f B)", 100*run.idleCPU, float64(run.rssIdle-run.rssBefore)/float64(run.tags))
		}
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	db := "-"
	if r.dbCPU >= 0 {
		db = r.dbCPU.String()
	}
	return fmt.Sprintf("| %d | %s (%s-%s) | %.0f/s | %v / %v | %v | %s | %s | %v | %.0f B | %s |",
		r.tags, ms(r.warm.took), ms(byWarm[0].warm.took), ms(byWarm[len(byWarm)-1].warm.took),
		float64(r.tags)/r.warm.took.Seconds(),
		r.warm.p50.Round(100*time.Microsecond), r.warm.p99.Round(100*time.Microsecond), r.warmCPU, db,
		ms(r.again.took), r.againCPU, float64(r.rss-r.rssBefore)/float64(r.tags), idle)
}

// pass is one request for every tag.
type pass struct {
	took     time.Duration
	p50, p99 time.Duration
}

// run measures one server over a database of n tags in round; the idle CPU
// only when idle is true.
func (r runner) run(ctx context.Context, n, round int, idle bool) (result, error) {
	res := result{tags: n, idleCPU: -1, dbCPU: -1}
	root, err := sql.Open("mysql", r.server.FormatDSN())
	if err != nil {
		return res, err
	}
	defer root.Close()
	var created []string
	if !r.keep {
		defer func() {
			for _, db := range created {
				_, _ = root.ExecContext(context.Background(), "DROP DATABASE `"+db+"`")
			}
		}()
	}
	env, tags, err := r.databases(ctx, root, n, &created)
	if err != nil {
		return res, err
	}

	prof := ""
	if r.profile != "" {
		prof = filepath.Join(r.profile, fmt.Sprintf("%s-%d-%d-%d", filepath.Base(r.binary), r.stores, n, round))
	}
	srv, err := r.start(env, prof)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	if res.rssBefore, err = rss(srv.pid()); err != nil {
		return res, err
	}

	rand.Shuffle(len(tags), func(i, j int) { tags[i], tags[j] = tags[j], tags[i] })
	dbPID := serverPID(ctx, root)
	db0, dbErr := cpuTicks(dbPID)
	cpu0, err := cpuTicks(srv.pid())
	if err != nil {
		return res, err
	}
	if prof != "" {
		_ = srv.cmd.Process.Signal(syscall.SIGUSR1) // the CPU profile starts
	}
	if res.warm, err = r.pass(tags); err != nil {
		return res, fmt.Errorf("first requests: %w", err)
	}
	if prof != "" {
		_ = srv.cmd.Process.Signal(syscall.SIGUSR2) // and ends
	}
	cpu1, err := cpuTicks(srv.pid())
	if err != nil {
		return res, err
	}
	res.warmCPU = time.Duration(cpu1-cpu0) * time.Second / clockTicks
	if db1, err := cpuTicks(dbPID); err == nil && dbErr == nil {
		res.dbCPU = time.Duration(db1-db0) * time.Second / clockTicks
	}
	log.Printf("%s: first requests for %d tags: %v, leaf's CPU %v, the database's %v, load average %s", r.name(), n, res.warm.took, res.warmCPU, res.dbCPU, loadavg())
	for range r.again {
		p, err := r.pass(tags)
		if err != nil {
			return res, fmt.Errorf("second requests: %w", err)
		}
		res.again.took += p.took
	}
	cpu2, err := cpuTicks(srv.pid())
	if err != nil {
		return res, err
	}
	res.againCPU = time.Duration(cpu2-cpu1) * time.Second / clockTicks
	log.Printf("again: %v, leaf's CPU %v, load average %s", res.again.took, res.againCPU, loadavg())
	time.Sleep(2 * time.Second) // loads started by the requests end
	if res.rss, err = rss(srv.pid()); err != nil {
		return res, err
	}
	if prof != "" {
		if err := r.heapProfiles(prof); err != nil {
			return res, err
		}
	}
	if !idle {
		return res, nil
	}
	return res, r.idleFor(srv.pid(), &res)
}

// databases creates the run's databases, each with the schema and the n
// tags, makes them one set when there are several, and returns the
// environment that gives them to leaf serve, and the tags. The databases
// created are added to *created, also when it fails.
func (r runner) databases(ctx context.Context, root *sql.DB, n int, created *[]string) (env []string, tags []string, err error) {
	var named []string
	for i := range r.stores {
		db := fmt.Sprintf("leaf_manytags_%d_%d_%d", n, os.Getpid(), i)
		if _, err := root.ExecContext(ctx, "CREATE DATABASE `"+db+"`"); err != nil {
			return nil, nil, err
		}
		*created = append(*created, db)
		cfg := r.server.Clone()
		cfg.DBName = db
		if tags, err = fill(ctx, cfg.FormatDSN(), n); err != nil {
			return nil, nil, fmt.Errorf("fill: %w", err)
		}
		named = append(named, fmt.Sprintf("s%d=%s", i, cfg.FormatDSN()))
	}
	log.Printf("%d tags in %s", n, strings.Join(*created, ", "))
	if r.stores == 1 {
		return []string{"LEAF_MYSQL_DSN=" + strings.TrimPrefix(named[0], "s0=")}, tags, nil
	}
	env = []string{"LEAF_STORES=" + strings.Join(named, " ")}
	cmd := exec.CommandContext(ctx, r.binary, "store", "init")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("leaf store init: %v\n%s", err, out)
	}
	return env, tags, nil
}

// heapProfiles writes the heap's profile and its text with the runtime's
// figures into prof.heap.prof and prof.heap.txt.
func (r runner) heapProfiles(prof string) error {
	for _, p := range []struct{ file, path string }{
		{".heap.prof", "/debug/pprof/heap"},
		{".heap.txt", "/debug/pprof/heap?debug=1"},
	} {
		if err := fetch("http://"+r.pprof+p.path, prof+p.file); err != nil {
			return fmt.Errorf("profile: %w", err)
		}
	}
	log.Printf("profiles in %s.*", prof)
	return nil
}

// idleFor measures the CPU of process pid over r.idle, and its RSS after.
func (r runner) idleFor(pid int, res *result) error {
	log.Printf("idle for %v", r.idle)
	before, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	time.Sleep(r.idle)
	after, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	res.idleCPU = float64(after-before) / clockTicks / r.idle.Seconds()
	if res.rssIdle, err = rss(pid); err != nil {
		return err
	}
	log.Printf("idle CPU %.2f%% of a core, load average %s", 100*res.idleCPU, loadavg())
	return nil
}

// fill creates the schema and n tags named like service-07:table-004321,
// step 1000.
func fill(ctx context.Context, dsn string, n int) ([]string, error) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := migrations.Up(ctx, db, migrations.MySQL); err != nil {
		return nil, err
	}
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("service-%02d:table-%06d", i%37, i)
	}
	const batch = 1000
	for i := 0; i < n; i += batch {
		part := tags[i:min(i+batch, n)]
		q := "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES " +
			strings.TrimSuffix(strings.Repeat("(?, 1, 1000),", len(part)), ",")
		args := make([]any, len(part))
		for j, t := range part {
			args[j] = t
		}
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			return nil, err
		}
	}
	return tags, nil
}

// pass asks for one id of every tag, from r.clients goroutines, each on
// a connection of its own. The requests are written and their answers read
// by hand, a few microseconds of CPU each: net/http's client would take
// more of the machine's two cores than the server it measures.
func (r runner) pass(tags []string) (pass, error) {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		lats  = make([]time.Duration, 0, len(tags))
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		next.Store(int64(len(tags)))
	}
	start := time.Now()
	for range r.clients {
		wg.Go(func() {
			c, err := dial(r.addr)
			if err != nil {
				fail(err)
				return
			}
			defer c.close()
			var mine []time.Duration
			defer func() {
				mu.Lock()
				lats = append(lats, mine...)
				mu.Unlock()
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tags) {
					return
				}
				began := time.Now()
				err := c.get("/api/segment/get/" + tags[i])
				mine = append(mine, time.Since(began))
				if err != nil {
					fail(fmt.Errorf("%s: %w", tags[i], err))
					return
				}
			}
		})
	}
	wg.Wait()
	p := pass{took: time.Since(start)}
	if first != nil {
		return p, first
	}
	slices.Sort(lats)
	p.p50, p.p99 = lats[len(lats)/2], lats[len(lats)*99/100]
	return p, nil
}

// conn is one keep-alive HTTP/1.1 connection to leaf.
type conn struct {
	c   net.Conn
	r   *bufio.Reader
	req []byte
}

func dial(addr string) (*conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReader(c)}, nil
}

func (c *conn) close() { c.c.Close() }

// get asks for path and checks that the answer is 200 with an id.
func (c *conn) get(path string) error {
	c.req = append(c.req[:0], "GET "...)
	c.req = append(c.req, path...)
	c.req = append(c.req, " HTTP/1.1\r\nHost: leaf\r\n\r\n"...)
	if _, err := c.c.Write(c.req); err != nil {
		return err
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return err
	}
	ok := len(status) >= 12 && string(status[9:12]) == "200"
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, found := strings.Cut(string(line), ":"); found && strings.EqualFold(k, "Content-Length") {
			if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return fmt.Errorf("Content-Length %q", v)
			}
		}
	}
	if length < 0 {
		return errors.New("an answer without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: %s", strings.TrimSpace(string(status)), strings.TrimSpace(string(body)))
	}
	if _, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64); err != nil {
		return fmt.Errorf("answer %q is not an id", body)
	}
	return nil
}

// server is a running leaf serve.
type server struct {
	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

// start starts leaf serve on the stores env gives; with prof set, it takes
// a CPU profile into prof+".cpu.prof" between SIGUSR1 and SIGUSR2, and
// serves net/http/pprof on r.pprof.
func (r runner) start(env []string, prof string) (*server, error) {
	logf, err := os.CreateTemp("", "manytags-leaf-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.binary, "serve")
	cmd.Env = append(append(os.Environ(), env...), "LEAF_ADDR="+r.addr, "LEAF_LOG_LEVEL=warn")
	if prof != "" {
		cmd.Env = append(cmd.Env, "LEAF_CPU_PROFILE="+prof+".cpu.prof", "LEAF_PPROF_ADDR="+r.pprof)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// Killed with this program: an interrupted run leaves no server
	// behind (its database stays; its name says which run made it).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan error, 1), log: logf}
	go func() { s.done <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("leaf serve exited (%v); its log is %s", err, logf.Name())
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get("http://" + r.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
	}
	s.stop()
	return nil, fmt.Errorf("leaf serve not ready within 30s; its log is %s", logf.Name())
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop ends the server with SIGKILL: a clean stop hands every tag's unused
// ids back one statement at a time, which is not what is measured here.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	s.log.Close()
	os.Remove(s.log.Name())
}

// fetch writes the body of a GET of url into file.
func fetch(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// serverPID is the process id of the database server, read from its pid
// file when it runs on this machine; 0 when it cannot be found.
func serverPID(ctx context.Context, db *sql.DB) int {
	var file string
	if err := db.QueryRowContext(ctx, "SELECT @@pid_file").Scan(&file); err != nil {
		return 0
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// cpuTicks is the user and system CPU time of process pid, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14 and stime 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc/<pid>/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc/<pid>/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return utime + stime, nil
}

// rss is the resident set size of process pid, in bytes.
func rss(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/<pid>/status")
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
