package mariadbtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/proc"
)

// ErrNotRunning is returned by Kill and Stop when the server has no process.
var ErrNotRunning = errors.New("mariadbtest: server is not running")

const (
	// startTimeout bounds how long Start waits for the server to answer; a
	// Galera joiner copies the whole data directory first.
	startTimeout = 60 * time.Second
	// stopTimeout is how long Stop lets a server shut down before SIGKILL.
	stopTimeout = 60 * time.Second
	// cleanupGrace is the same for the cleanup at the end of a test, whose
	// data is thrown away.
	cleanupGrace = 10 * time.Second
	// exitTimeout bounds the wait for a process after SIGKILL.
	exitTimeout = 30 * time.Second
	// pollInterval is how often a starting server is pinged.
	pollInterval = 100 * time.Millisecond
	// logTailLines is how much of the error log a failure message shows.
	logTailLines = 40
)

// File names inside a server's directory.
const (
	cnfName  = "my.cnf"
	dataName = "data"
	tmpName  = "tmp"
	logName  = "mariadbd.log"
)

// Server is one mariadbd of a test: its directory and port are fixed, its
// process comes and goes with Start, Stop and Kill. Its methods may be
// called from several goroutines.
type Server struct {
	name string // for messages
	dir  string
	port int
	uid  int // of the mysql user
	gid  int
	// galera: a Galera node, whose restarts begin by recovering its
	// position, so that it can rejoin by IST instead of SST.
	galera bool
	place  Place // where it listens and runs; the zero Place is 127.0.0.1

	opMu sync.Mutex // serialises Start, Stop and Kill

	mu   sync.Mutex    // protects following fields
	proc *proc.Process // the last run of mariadbd, nil before the first
}

// StartServer initialises a fresh data directory in a new directory and
// starts a standalone mariadbd on a free 127.0.0.1 port. It returns once the
// server answers; tb.Cleanup stops it and removes the directory.
func StartServer(tb testing.TB) *Server {
	tb.Helper()
	return StartServerWith(tb)
}

// StartServerWith is StartServer with options added to the server's
// option file, one per line as it takes them ("log_bin=leaf-bin").
func StartServerWith(tb testing.TB, options ...string) *Server {
	tb.Helper()
	ports, err := freePorts(1)
	if err != nil {
		tb.Fatalf("mariadbtest: %v", err)
	}
	s := newServer(tb, "server", ports[0], Place{}, options)
	s.install(tb)
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// newServer makes the directory of a server and its option file, with
// extra lines appended to the [mariadbd] group. The directory is removed,
// after the server is stopped, when tb ends.
func newServer(tb testing.TB, name string, port int, place Place, extra []string) *Server {
	tb.Helper()
	if err := Available(); err != nil {
		tb.Fatal(err)
	}
	uid, gid, err := serverUser()
	if err != nil {
		tb.Fatalf("mariadbtest: %v", err)
	}
	// Not tb.TempDir: that directory is root's alone (0700) and the server
	// runs as mysql.
	dir, err := os.MkdirTemp("", "leaf-mariadb-")
	if err != nil {
		tb.Fatalf("mariadbtest: %v", err)
	}
	s := &Server{name: name, dir: dir, port: port, uid: uid, gid: gid, place: place}
	tb.Cleanup(func() {
		if err := s.shutdown(cleanupGrace); err != nil {
			tb.Errorf("mariadbtest: stop %s: %v", s.name, err)
		}
		if err := os.RemoveAll(dir); err != nil {
			tb.Errorf("mariadbtest: %v", err)
		}
	})
	if err := s.prepare(extra); err != nil {
		tb.Fatalf("mariadbtest: %s: %v", name, err)
	}
	return s
}

// prepare writes the option file and hands the directory to mysql.
func (s *Server) prepare(extra []string) error {
	if err := os.Chmod(s.dir, 0o755); err != nil {
		return err
	}
	for _, d := range []string{dataName, tmpName} {
		if err := os.Mkdir(filepath.Join(s.dir, d), 0o750); err != nil {
			return err
		}
	}
	if err := os.WriteFile(s.path(cnfName), []byte(s.config(extra)), 0o644); err != nil {
		return err
	}
	return filepath.WalkDir(s.dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, s.uid, s.gid)
	})
}

// config is the text of the server's option file.
func (s *Server) config(extra []string) string {
	var b strings.Builder
	lines := []string{
		"[mariadbd]",
		"datadir=" + s.path(dataName),
		"tmpdir=" + s.path(tmpName),
		"socket=" + s.path("mariadbd.sock"),
		"pid-file=" + s.path("mariadbd.pid"),
		"port=" + strconv.Itoa(s.port),
		"bind-address=" + s.place.host(),
		"skip-name-resolve",
		"innodb_buffer_pool_size=32M",
		"innodb_log_file_size=16M",
		"performance_schema=OFF",
		"max_connections=200",
	}
	for _, l := range append(lines, extra...) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// install creates the system tables with a root that needs no password.
func (s *Server) install(tb testing.TB) {
	tb.Helper()
	cmd := exec.Command(installDBPath,
		"--defaults-file="+s.path(cnfName),
		"--user="+serverUserName,
		"--auth-root-authentication-method=normal",
		"--skip-test-db",
	)
	cmd.Dir = s.dir
	cmd.Env = serverEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("mariadbtest: %s: mariadb-install-db: %v\n%s", s.name, err, tail(out, logTailLines))
	}
	s.letRootIn(tb)
}

// DSN is a go-sql-driver DSN of database db (may be empty) on the server,
// as root with no password, with parseTime=true.
func (s *Server) DSN(db string) string { return RootDSN(s.Addr(), db) }

// RootDSN is a go-sql-driver DSN of database db (may be empty) on the
// server at addr, as root with no password, with parseTime=true: how the
// tests' own servers are reached.
func RootDSN(addr, db string) string {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = addr
	cfg.DBName = db
	cfg.ParseTime = true
	return cfg.FormatDSN()
}

// Pid is the process id of the running server, or 0.
func (s *Server) Pid() int {
	if p := s.running(); p != nil {
		return p.Pid()
	}
	return 0
}

// Start starts the server on its data directory and port and waits until it
// answers. It fails if the server already runs.
func (s *Server) Start() error { return s.start() }

// start runs mariadbd with extra command-line options.
func (s *Server) start(extra ...string) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if p := s.running(); p != nil {
		return fmt.Errorf("mariadbtest: %s already runs as process %d", s.name, p.Pid())
	}
	s.mu.Lock()
	restart := s.proc != nil
	s.mu.Unlock()
	if s.galera && restart {
		if pos := s.recoverPosition(); pos != "" {
			extra = append(extra, "--wsrep_start_position="+pos)
		}
	}
	logf, err := os.OpenFile(s.path(logName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("mariadbtest: %s: %w", s.name, err)
	}
	args := append([]string{"--defaults-file=" + s.path(cnfName)}, extra...)
	fmt.Fprintf(logf, "\n==== %s %s\n", time.Now().Format(time.RFC3339), strings.Join(args, " "))
	cmd := s.command(args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	p, err := proc.Start(cmd, nil)
	logf.Close()
	if err != nil {
		return fmt.Errorf("mariadbtest: start %s: %w", s.name, err)
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.waitAnswer(ctx, p); err != nil {
		_ = s.signal(p, syscall.SIGKILL, 0)
		return fmt.Errorf("mariadbtest: start %s: %w\n%s", s.name, err, s.logTail())
	}
	return nil
}

// recoveredPosition finds the position in the output of mariadbd --wsrep-recover.
var recoveredPosition = regexp.MustCompile(`WSREP: Recovered position:\s*(\S+:-?[0-9]+)`)

// recoverPosition reads the last committed Galera position (uuid:seqno)
// from the node's InnoDB, as the Debian service does before it starts a
// node. A node killed with SIGKILL leaves seqno -1 in grastate.dat and,
// started without this position, would copy the whole data directory from
// a donor (SST, which blocks the donor's writes for its duration) instead
// of fetching only the write sets it missed (IST). It returns "" when the
// position cannot be recovered, for example after an interrupted SST; the
// node then asks for an SST. The output goes to the node's log.
func (s *Server) recoverPosition() string {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := s.command("--defaults-file="+s.path(cnfName), "--wsrep-recover", "--disable-log-error")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	if err == nil {
		stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		err = cmd.Wait()
		stop()
	}
	pos := ""
	if m := recoveredPosition.FindSubmatch(out.Bytes()); m != nil && err == nil {
		pos = string(m[1])
	}
	if logf, ferr := os.OpenFile(s.path(logName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); ferr == nil {
		fmt.Fprintf(logf, "\n==== %s --wsrep-recover: position %q, exit %v\n", time.Now().Format(time.RFC3339), pos, err)
		logf.Write(out.Bytes())
		logf.Close()
	}
	return pos
}

// waitAnswer pings the server until it answers, its process exits or ctx
// ends.
func (s *Server) waitAnswer(ctx context.Context, p *proc.Process) error {
	db, err := s.open()
	if err != nil {
		return err
	}
	defer db.Close()
	return WaitAnswer(ctx, p, db, s.Addr())
}

// WaitAnswer pings db, a pool on the server at addr that p runs, until it
// answers, p exits or ctx ends.
func WaitAnswer(ctx context.Context, p *proc.Process, db *sql.DB, addr string) error {
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = db.PingContext(pctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("the server exited: %v", p.State())
		case <-ctx.Done():
			return fmt.Errorf("no answer on %s: %w (last: %v)", addr, ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}

// Kill kills the server with SIGKILL, with the helpers it spawned, and
// returns once the process is gone.
func (s *Server) Kill() error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	p := s.running()
	if p == nil {
		return ErrNotRunning
	}
	return s.signal(p, syscall.SIGKILL, 0)
}

// Stop shuts the server down cleanly with SIGTERM, and kills it if it is
// not gone within a minute.
func (s *Server) Stop() error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	p := s.running()
	if p == nil {
		return ErrNotRunning
	}
	return s.signal(p, syscall.SIGTERM, stopTimeout)
}

// shutdown stops the server if it runs, allowing it grace to shut down.
func (s *Server) shutdown(grace time.Duration) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	p := s.running()
	if p == nil {
		return nil
	}
	return s.signal(p, syscall.SIGTERM, grace)
}

// signal sends sig to p (SIGKILL to its whole process group), waits up to
// grace for it to exit, then kills the group and waits for the process.
func (s *Server) signal(p *proc.Process, sig syscall.Signal, grace time.Duration) error {
	_ = syscall.Kill(-p.Pid(), syscall.SIGCONT) // a paused server could not act on sig
	if err := p.Signal(sig, grace, exitTimeout); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

// running returns the server's process if it has not exited.
func (s *Server) running() *proc.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.Exited() {
		return nil
	}
	return s.proc
}

func (s *Server) path(name string) string { return filepath.Join(s.dir, name) }

// logTail is the end of the server's error log, for failure messages.
func (s *Server) logTail() string {
	b, err := os.ReadFile(s.path(logName))
	if err != nil {
		return fmt.Sprintf("(no log of %s: %v)", s.name, err)
	}
	return fmt.Sprintf("--- last lines of %s ---\n%s", s.path(logName), tail(b, logTailLines))
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	b = bytes.TrimRight(b, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}

// serverEnv is the environment of the server and its helper scripts: the
// test's, with the system directories on PATH (the state transfer scripts
// call rsync, ss and coreutils).
func serverEnv() []string {
	env := make([]string, 0, len(os.Environ())+1)
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range os.Environ() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			if v != "" {
				path = v + ":" + path
			}
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+path)
}

// open opens a pool on the server for this package's own queries, with a
// short dial timeout.
func (s *Server) open() (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(s.DSN(""))
	if err != nil {
		return nil, err
	}
	cfg.Timeout = time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}
