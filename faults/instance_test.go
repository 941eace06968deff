package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
)

const (
	// startTimeout bounds the wait for a started instance to serve.
	startTimeout = 30 * time.Second
	// stopTimeout is how long a graceful stop may take before SIGKILL.
	stopTimeout = 15 * time.Second
	// exitTimeout bounds the wait for a process after SIGKILL.
	exitTimeout = 10 * time.Second
	// commandTimeout bounds a one-shot leaf command (migrate, tag add).
	commandTimeout = 60 * time.Second
	// logTail is how many log lines a failure message shows.
	logTail = 30
)

// instance is one `leaf serve` process, restarted at will on the same
// address. It runs in a process group of its own and gets SIGKILL when the
// test process dies (parent-death signal); tb.Cleanup kills it too, so no
// process outlives its test. Its methods may be called from any goroutine.
type instance struct {
	name string
	addr string // 127.0.0.1:port, the same across restarts
	args []string
	logs *logBook
	// prefix, when set, runs the command through it: ip netns exec NAME,
	// for an instance in a network namespace of its own.
	prefix []string

	opMu sync.Mutex // serialises start, stop and kill

	mu   sync.Mutex // protects following fields
	proc *process   // the last process started, nil before the first
	runs int
}

// process is one run of an instance.
type process struct {
	*proc.Process // done once it has exited and its output is read
	run           int
	serving       chan struct{} // closed when the process logs that it serves
}

// newInstances makes n instances named A, B, C, ... on free ports, each run
// as `leaf serve` with args; none is started. group tells the instances
// of one test apart in the names of kept logs.
func newInstances(tb testing.TB, group string, n int, args func(i int) []string) []*instance {
	tb.Helper()
	ports, err := mariadbtest.FreePorts(n)
	if err != nil {
		tb.Fatalf("free ports: %v", err)
	}
	out := make([]*instance, n)
	for i := range out {
		in := &instance{
			name: string(rune('A' + i)),
			addr: "127.0.0.1:" + strconv.Itoa(ports[i]),
			args: args(i),
			logs: &logBook{},
		}
		tb.Cleanup(func() {
			if err := in.kill(); err != nil && !errors.Is(err, errNotRunning) {
				tb.Errorf("instance %s: %v", in.name, err)
			}
			if tb.Failed() {
				tb.Logf("instance %s (%s), last log lines:\n%s", in.name, in.addr, in.logs.tail(logTail))
			}
			if dir := os.Getenv(envLogs); dir != "" {
				if err := in.logs.save(dir, tb.Name()+"-"+group+"-"+in.name); err != nil {
					tb.Errorf("instance %s: keep the log: %v", in.name, err)
				}
			}
		})
		out[i] = in
	}
	return out
}

var errNotRunning = errors.New("not running")

// base is the instance's URL, "http://127.0.0.1:port".
func (in *instance) base() string { return "http://" + in.addr }

// start starts the instance and returns once it serves.
func (in *instance) start() error {
	in.opMu.Lock()
	defer in.opMu.Unlock()
	if p := in.running(); p != nil {
		return fmt.Errorf("instance %s already runs as process %d", in.name, p.Pid())
	}
	in.mu.Lock()
	in.runs++
	run := in.runs
	in.mu.Unlock()

	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	args := append([]string{"serve", "--addr", in.addr, "--log-format", "json"}, in.args...)
	argv := append(append(slices.Clone(in.prefix), leafBin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = leafEnv()
	cmd.Stdout, cmd.Stderr = w, w
	p := &process{run: run, serving: make(chan struct{})}
	p.Process, err = proc.Start(cmd, func() {
		in.logs.read(r, run, p.serving)
		r.Close()
	})
	w.Close()
	if err != nil {
		r.Close()
		return fmt.Errorf("instance %s: %w", in.name, err)
	}
	in.mu.Lock()
	in.proc = p
	in.mu.Unlock()

	select {
	case <-p.serving:
		return nil
	case <-p.Done():
		return fmt.Errorf("instance %s exited before serving (%v):\n%s", in.name, p.State(), in.logs.tail(logTail))
	case <-time.After(startTimeout):
		_ = p.Signal(syscall.SIGKILL, 0, exitTimeout)
		return fmt.Errorf("instance %s does not serve after %v:\n%s", in.name, startTimeout, in.logs.tail(logTail))
	}
}

// kill kills the instance with SIGKILL and returns once it is gone.
func (in *instance) kill() error {
	in.opMu.Lock()
	defer in.opMu.Unlock()
	p := in.running()
	if p == nil {
		return errNotRunning
	}
	return p.Signal(syscall.SIGKILL, 0, exitTimeout)
}

// signal sends sig to the instance's process alone (SIGSTOP, SIGCONT).
func (in *instance) signal(sig syscall.Signal) error {
	p := in.running()
	if p == nil {
		return errNotRunning
	}
	return syscall.Kill(p.Pid(), sig)
}

// stop stops the instance with SIGTERM, as an orchestrator would, and
// kills it if it has not exited within stopTimeout.
func (in *instance) stop() error {
	in.opMu.Lock()
	defer in.opMu.Unlock()
	p := in.running()
	if p == nil {
		return errNotRunning
	}
	return p.Signal(syscall.SIGTERM, stopTimeout, exitTimeout)
}

// running returns the instance's process if it has not exited.
func (in *instance) running() *process {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.proc == nil || in.proc.Exited() {
		return nil
	}
	return in.proc
}

// leafEnv is the test's environment without LEAF_ variables, which leaf
// would read as flags: the suite passes every setting on the command line.
func leafEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEAF_") {
			env = append(env, kv)
		}
	}
	return env
}

// leafCommand runs a one-shot leaf command (migrate, tag add) and fails tb
// if it fails.
func leafCommand(tb testing.TB, args ...string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, leafBin, args...)
	cmd.Env = leafEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("leaf %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startAll starts every instance at the same moment and returns once all
// serve, or the first error.
func startAll(instances []*instance) error {
	errs := make([]error, len(instances))
	var wg sync.WaitGroup
	for i, in := range instances {
		wg.Go(func() { errs[i] = in.start() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopAll stops every instance gracefully, at once.
func stopAll(instances []*instance) error {
	errs := make([]error, len(instances))
	var wg sync.WaitGroup
	for i, in := range instances {
		wg.Go(func() {
			if err := in.stop(); err != nil && !errors.Is(err, errNotRunning) {
				errs[i] = fmt.Errorf("instance %s: %w", in.name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// logLine is one line an instance wrote, JSON (--log-format json) or not
// (a panic, say).
type logLine struct {
	at   time.Time // when the suite read it
	run  int       // which start of the instance wrote it
	text string
	rec  map[string]any // nil when the line is not JSON
}

// str is the field key of a JSON line as text.
func (l logLine) str(key string) string {
	switch v := l.rec[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// num is the numeric field key of a JSON line.
func (l logLine) num(key string) (int64, bool) {
	switch v := l.rec[key].(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func (l logLine) msg() string { return l.str("msg") }

// logBook keeps every line of every run of an instance.
type logBook struct {
	mu    sync.Mutex // protects lines
	lines []logLine
}

// read stores the lines of r until it ends, and closes serving once a
// line says the process serves.
func (b *logBook) read(r io.Reader, run int, serving chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	closed := false
	for sc.Scan() {
		l := logLine{at: time.Now(), run: run, text: sc.Text()}
		if t := bytes.TrimSpace(sc.Bytes()); len(t) > 0 && t[0] == '{' {
			d := json.NewDecoder(bytes.NewReader(t))
			d.UseNumber()
			var rec map[string]any
			if d.Decode(&rec) == nil {
				l.rec = rec
			}
		}
		b.mu.Lock()
		b.lines = append(b.lines, l)
		b.mu.Unlock()
		if !closed && l.msg() == "serving" {
			close(serving)
			closed = true
		}
	}
	// The rest of a line too long for the scanner is dropped; the
	// process is not blocked on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

// match returns the lines for which keep is true.
func (b *logBook) match(keep func(logLine) bool) []logLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []logLine
	for _, l := range b.lines {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

// withMsg returns the lines whose message starts with prefix.
func (b *logBook) withMsg(prefix string) []logLine {
	return b.match(func(l logLine) bool { return strings.HasPrefix(l.msg(), prefix) })
}

// save writes every line to dir/name.log, name made safe for a file name;
// an earlier file of the same name gets a number.
func (b *logBook) save(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '_'
		}
		return r
	}, name)
	path := filepath.Join(dir, safe+".log")
	for n := 2; ; n++ {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			break
		}
		path = filepath.Join(dir, fmt.Sprintf("%s.%d.log", safe, n))
	}
	b.mu.Lock()
	var sb strings.Builder
	for _, l := range b.lines {
		fmt.Fprintf(&sb, "[run %d] %s\n", l.run, l.text)
	}
	b.mu.Unlock()
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// tail is the last n lines, for failure messages.
func (b *logBook) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := b.lines[max(0, len(b.lines)-n):]
	var sb strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&sb, "  [run %d] %s\n", l.run, l.text)
	}
	return sb.String()
}
