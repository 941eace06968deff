// Package mysqltest starts Oracle's MySQL servers for tests: standalone
// servers and the members of a Group Replication group, on loopback
// ports. The servers run from a root of their own that holds Debian's
// mysql-server-core (scripts/mysql-root.sh builds it from the unstable
// suite, which this machine's release does not carry), entered with
// chroot; their directories live inside that root and are removed when the
// test ends.
package mysqltest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/mariadbtest"
	"github.com/leafid/leaf/internal/proc"
)

const (
	// EnvRoot names the root that holds mysqld, when not DefaultRoot.
	EnvRoot = "LEAF_MYSQL_ROOT"
	// DefaultRoot is where scripts/mysql-root.sh builds the root.
	DefaultRoot = "/var/cache/leaf-images/mysql-9.7"
	// EnvCI, when true, turns "cannot start servers here" into a failure.
	EnvCI = "CI"

	mysqldPath = "/usr/sbin/mysqld" // inside the root

	startTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
	exitTimeout  = 30 * time.Second
	pollInterval = 100 * time.Millisecond
	logTailLines = 40
)

// ErrNotRunning is returned by Kill and Stop when the server has no process.
var ErrNotRunning = errors.New("mysqltest: server is not running")

// Root is the root that holds mysqld.
func Root() string {
	if r := os.Getenv(EnvRoot); r != "" {
		return r
	}
	return DefaultRoot
}

// Available reports why MySQL servers cannot be started here, or nil.
func Available() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("mysqltest: needs Linux, not %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		return errors.New("mysqltest: needs root, to enter the server's root with chroot")
	}
	if _, err := exec.LookPath("chroot"); err != nil {
		return fmt.Errorf("mysqltest: %w", err)
	}
	fi, err := os.Stat(filepath.Join(Root(), mysqldPath))
	if err != nil || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("mysqltest: no mysqld in %s (bash scripts/mysql-root.sh builds it)", Root())
	}
	return nil
}

// Require stops tb unless Available: it skips tb, or fails it when CI=true.
func Require(tb testing.TB) {
	tb.Helper()
	err := Available()
	ci, _ := strconv.ParseBool(os.Getenv(EnvCI))
	switch {
	case err != nil && ci:
		tb.Fatalf("%v (%s is true, so this is a failure, not a skip)", err, EnvCI)
	case err != nil:
		tb.Skip(err)
	}
}

// Server is one mysqld of a test: its directory and ports are fixed, its
// process comes and goes with Start, Stop and Kill. Its methods may be
// called from several goroutines.
type Server struct {
	name  string
	root  string
	dir   string // inside the root, as the server sees it
	port  int
	place mariadbtest.Place

	opMu sync.Mutex // serialises Start, Stop and Kill

	mu   sync.Mutex
	proc *proc.Process
}

// StartServer initialises a fresh data directory and starts a standalone
// server on a free 127.0.0.1 port, with options added to its option file
// ("innodb_flush_log_at_trx_commit=0"). It returns once the server
// answers; tb.Cleanup stops it and removes its directory.
func StartServer(tb testing.TB, options ...string) *Server {
	tb.Helper()
	ports, err := mariadbtest.FreePorts(1)
	if err != nil {
		tb.Fatalf("mysqltest: %v", err)
	}
	s := newServer(tb, "mysql", ports[0], mariadbtest.Place{}, options)
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// newServer makes the directory and option file of a server and its data
// directory (mysqld --initialize-insecure: root with no password), at
// place: placed in a namespace of its own, it binds place.Host there and
// root may come in from any host (the test process reaches it from the
// network's address, not from localhost).
func newServer(tb testing.TB, name string, port int, place mariadbtest.Place, options []string) *Server {
	tb.Helper()
	if err := Available(); err != nil {
		tb.Fatal(err)
	}
	root := Root()
	host, err := os.MkdirTemp(filepath.Join(root, "srv"), "leaf-mysql-")
	if err != nil {
		tb.Fatalf("mysqltest: %v", err)
	}
	s := &Server{name: name, root: root, dir: "/srv/" + filepath.Base(host), port: port, place: place}
	tb.Cleanup(func() {
		if err := s.shutdown(10 * time.Second); err != nil {
			tb.Errorf("mysqltest: stop %s: %v", s.name, err)
		}
		if err := os.RemoveAll(host); err != nil {
			tb.Errorf("mysqltest: %v", err)
		}
	})
	if err := os.WriteFile(s.host("my.cnf"), []byte(s.config(options)), 0o644); err != nil {
		tb.Fatalf("mysqltest: %v", err)
	}
	init := []string{"--initialize-insecure"}
	if place.Host != "" {
		// Run at the initialisation, which writes no binary log: a
		// member of a group may not have transactions of its own.
		if err := os.WriteFile(s.host("init.sql"), []byte(rootFromAnywhere), 0o644); err != nil {
			tb.Fatalf("mysqltest: %v", err)
		}
		init = append(init, "--init-file="+s.dir+"/init.sql")
	}
	cmd := s.command(init...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("mysqltest: %s: mysqld --initialize-insecure: %v\n%s\n%s", name, err, out, s.LogTail())
	}
	return s
}

// config is the text of the server's option file. Options of plugins not
// loaded at --initialize are given with loose_.
func (s *Server) config(options []string) string {
	lines := []string{
		"[mysqld]",
		"datadir=" + s.dir + "/data",
		"tmpdir=/tmp",
		"socket=" + s.dir + "/mysqld.sock",
		"pid-file=" + s.dir + "/mysqld.pid",
		"log-error=" + s.dir + "/mysqld.log",
		"port=" + strconv.Itoa(s.port),
		"bind-address=" + s.addrHost(),
		"mysqlx=OFF",
		"secure-file-priv=",
		"innodb_buffer_pool_size=32M",
		"innodb_redo_log_capacity=32M",
		"max_connections=300",
		"report_host=" + s.addrHost(),
		"report_port=" + strconv.Itoa(s.port),
	}
	var b strings.Builder
	for _, l := range append(lines, options...) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// host is a path of the server's directory as this process sees it.
func (s *Server) host(name string) string {
	return filepath.Join(s.root, s.dir, name)
}

// rootFromAnywhere gives root with no password from any host.
const rootFromAnywhere = "CREATE USER 'root'@'%' IDENTIFIED BY '';\n" +
	"GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;\n"

// addrHost is the address the server binds and is reached at.
func (s *Server) addrHost() string {
	if s.place.Host == "" {
		return "127.0.0.1"
	}
	return s.place.Host
}

// command is mysqld in the root with the server's option file and args,
// in the server's namespace when placed in one. It runs as root
// (--user=root): the root holds no mysql user.
func (s *Server) command(args ...string) *exec.Cmd {
	argv := append([]string{"chroot", s.root, mysqldPath, "--defaults-file=" + s.dir + "/my.cnf", "--user=root"}, args...)
	if s.place.Exec != nil {
		argv = s.place.Exec(argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TZ=UTC"}
	return cmd
}

// Addr is the server's TCP address.
func (s *Server) Addr() string { return s.addrHost() + ":" + strconv.Itoa(s.port) }

// Name is the server's name in messages.
func (s *Server) Name() string { return s.name }

// DSN is a go-sql-driver DSN of database db (may be empty) on the server,
// as root with no password, with parseTime=true.
func (s *Server) DSN(db string) string { return mariadbtest.RootDSN(s.Addr(), db) }

// Pid is the process id of the running server, or 0.
func (s *Server) Pid() int {
	if p := s.running(); p != nil {
		return p.Pid()
	}
	return 0
}

// Start starts the server and waits until it answers. It fails if the
// server already runs.
func (s *Server) Start() error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if p := s.running(); p != nil {
		return fmt.Errorf("mysqltest: %s already runs as process %d", s.name, p.Pid())
	}
	p, err := proc.Start(s.command(), nil)
	if err != nil {
		return fmt.Errorf("mysqltest: start %s: %w", s.name, err)
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.waitAnswer(ctx, p); err != nil {
		_ = p.Signal(syscall.SIGKILL, 0, exitTimeout)
		return fmt.Errorf("mysqltest: start %s: %w\n%s", s.name, err, s.LogTail())
	}
	return nil
}

func (s *Server) waitAnswer(ctx context.Context, p *proc.Process) error {
	db, err := s.Open()
	if err != nil {
		return err
	}
	defer db.Close()
	return mariadbtest.WaitAnswer(ctx, p, db, s.Addr())
}

// Kill kills the server with SIGKILL and returns once the process is gone.
func (s *Server) Kill() error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	p := s.running()
	if p == nil {
		return ErrNotRunning
	}
	return p.Signal(syscall.SIGKILL, 0, exitTimeout)
}

// Stop shuts the server down cleanly with SIGTERM, and kills it if it is
// not gone in time.
func (s *Server) Stop() error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	p := s.running()
	if p == nil {
		return ErrNotRunning
	}
	return p.Signal(syscall.SIGTERM, stopTimeout, exitTimeout)
}

// Pause stops the server with SIGSTOP: to the others of its group it is
// gone, as behind a cut link, and it wakes up with Resume to a view it
// may no longer be in.
func (s *Server) Pause() error { return s.send(syscall.SIGSTOP) }

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() error { return s.send(syscall.SIGCONT) }

func (s *Server) send(sig syscall.Signal) error {
	p := s.running()
	if p == nil {
		return ErrNotRunning
	}
	return syscall.Kill(-p.Pid(), sig)
}

func (s *Server) shutdown(grace time.Duration) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	p := s.running()
	if p == nil {
		return nil
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGCONT)
	return p.Signal(syscall.SIGTERM, grace, exitTimeout)
}

func (s *Server) running() *proc.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.Exited() {
		return nil
	}
	return s.proc
}

// Open opens a pool on the server, as root, with a short dial timeout;
// the callers bound their statements with contexts.
func (s *Server) Open() (*sql.DB, error) {
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

// Exec runs statements on the server, each on the same connection.
func (s *Server) Exec(ctx context.Context, stmts ...string) error {
	db, err := s.Open()
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mysqltest: %s: %s: %w", s.name, q, err)
		}
	}
	return nil
}

// LogTail is the end of the server's error log, for failure messages.
func (s *Server) LogTail() string {
	b, err := os.ReadFile(s.host("mysqld.log"))
	if err != nil {
		return fmt.Sprintf("(no log of %s: %v)", s.name, err)
	}
	b = bytes.TrimRight(b, "\n")
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return fmt.Sprintf("--- last lines of %s ---\n%s", s.host("mysqld.log"), bytes.Join(lines, []byte("\n")))
}

// LogLines are the lines of the server's error log that contain substr.
func (s *Server) LogLines(substr string) []string {
	b, err := os.ReadFile(s.host("mysqld.log"))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}
