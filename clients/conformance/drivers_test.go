package conformance

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/proc"
)

// callTimeout bounds one request to a driver: the longest step (a draw,
// a retry over a move of sequence sections) takes well under it.
const callTimeout = 90 * time.Second

// language is a client the suite knows, and how to start its driver.
type language struct {
	name string
	// command returns the driver's command line, or why it cannot run
	// here (a toolchain missing).
	command func() ([]string, []string, error)
	// forks names how the runtime copies a running process, objects and
	// all, into a child (the cases of "drivers": "fork"); empty where it
	// cannot: Go forks only to exec, Node.js starts a child afresh, and
	// the JVM has no fork.
	forks string
}

// root is the repository's root, from this package's directory.
const root = "../.."

// languages lists every client: how to start its driver, or why its
// toolchain is missing.
var languages = []language{
	{"go", func() ([]string, []string, error) { return []string{goDriverBin}, nil, nil }, ""},
	{"python", func() ([]string, []string, error) {
		py, err := exec.LookPath("python3")
		if err != nil {
			return nil, nil, errors.New("python3 not found")
		}
		if err := atLeast(py, []string{"-c", "import sys; print('%d.%d' % sys.version_info[:2])"}, 3, 11); err != nil {
			return nil, nil, err
		}
		src, _ := filepath.Abs(filepath.Join(root, "clients/python/src"))
		drv, _ := filepath.Abs("drivers/python/driver.py")
		return []string{py, drv}, []string{"PYTHONPATH=" + src}, nil
	}, "os.fork"},
	{"typescript", func() ([]string, []string, error) {
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, nil, errors.New("node not found")
		}
		if err := atLeast(node, []string{"-p", "process.versions.node"}, 20, 0); err != nil {
			return nil, nil, err
		}
		drv, _ := filepath.Abs("drivers/typescript/driver.mjs")
		return []string{node, drv}, nil, nil
	}, ""},
	{"java", javaDriver, ""},
}

// atLeast checks that the version a command prints is at least major.minor.
func atLeast(bin string, args []string, major, minor int) error {
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		return fmt.Errorf("%s: %v", bin, err)
	}
	m := regexp.MustCompile(`^v?(\d+)\.(\d+)`).FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return fmt.Errorf("%s: version %q", bin, out)
	}
	ma, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	if ma < major || ma == major && mi < minor {
		return fmt.Errorf("%s is %s.%s, older than %d.%d", bin, m[1], m[2], major, minor)
	}
	return nil
}

// driver is one running driver process.
type driver struct {
	lang  string
	p     *proc.Process
	in    io.WriteCloser
	lines chan string
	log   string
}

// answer is a driver's answer (README.md).
type answer struct {
	Values []string       `json:"values"`
	Error  *failure       `json:"error"`
	Drawn  int            `json:"drawn"`
	Errors map[string]int `json:"errors"`
}

type failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (f *failure) String() string {
	if f == nil {
		return "no error"
	}
	return f.Kind + " (" + f.Message + ")"
}

func startDriver(tb testing.TB, l language) *driver {
	tb.Helper()
	argv, env, err := l.command()
	if err != nil {
		tb.Fatalf("%s driver: %v", l.name, err)
	}
	d := &driver{lang: l.name, lines: make(chan string, 1), log: filepath.Join(tb.TempDir(), l.name+"-driver.log")}
	f, err := os.Create(d.log)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(leafEnv(), env...)
	cmd.Stderr = f
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if d.in, err = cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	d.p, err = proc.Start(cmd, func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		close(d.lines)
	})
	if err != nil {
		tb.Fatalf("%s driver: %v", l.name, err)
	}
	tb.Cleanup(func() {
		_ = json.NewEncoder(d.in).Encode(map[string]string{"op": "exit"})
		_ = d.in.Close()
		select {
		case <-d.p.Done():
		case <-time.After(5 * time.Second):
			_ = d.p.Signal(syscall.SIGKILL, 0, exitTimeout)
		}
		f.Close()
		if tb.Failed() {
			tb.Logf("%s driver's stderr:\n%s", l.name, tail(d.log, 30))
		}
	})
	return d
}

// call sends one request and returns the answer.
func (d *driver) call(req map[string]any) (answer, error) {
	var a answer
	b, err := json.Marshal(req)
	if err != nil {
		return a, err
	}
	if _, err := d.in.Write(append(b, '\n')); err != nil {
		return a, fmt.Errorf("%s driver: write: %w", d.lang, err)
	}
	select {
	case line, ok := <-d.lines:
		if !ok {
			return a, fmt.Errorf("%s driver exited on %s:\n%s", d.lang, b, tail(d.log, 30))
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			return a, fmt.Errorf("%s driver answered %q to %s: %w", d.lang, line, b, err)
		}
		if a.Error != nil && a.Error.Kind == "driver" {
			return a, fmt.Errorf("%s driver refused %s: %s", d.lang, b, a.Error.Message)
		}
		return a, nil
	case <-time.After(callTimeout):
		return a, fmt.Errorf("%s driver: no answer to %s within %v", d.lang, b, callTimeout)
	}
}
