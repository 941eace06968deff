package mariadbtest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Place is where a server listens and runs. The zero Place is 127.0.0.1 in
// the test's own network namespace. A server placed in a namespace of its
// own (internal/netns) binds Host there and runs through Exec, which
// wraps its command line (ip netns exec NAME ...).
type Place struct {
	// Host is the address the server binds and is reached at.
	Host string
	// Exec returns the command line that runs argv in the namespace,
	// as root; the server then drops to mysql with setpriv.
	Exec func(argv ...string) []string
}

func (p Place) host() string {
	if p.Host == "" {
		return "127.0.0.1"
	}
	return p.Host
}

// StartServerIn is StartServerWith at place: a standalone server that
// listens on place.Host.
func StartServerIn(tb testing.TB, place Place, options ...string) *Server {
	tb.Helper()
	ports, err := freePorts(1)
	if err != nil {
		tb.Fatalf("mariadbtest: %v", err)
	}
	s := newServer(tb, "server", ports[0], place, options)
	s.install(tb)
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Addr is the server's TCP address, "127.0.0.1:port" unless placed
// elsewhere.
func (s *Server) Addr() string { return s.place.host() + ":" + strconv.Itoa(s.port) }

// command is mariadbd with args, to be run as mysql; proc.Start gives it a
// process group of its own, so it and the helpers it spawns (state
// transfer scripts, rsync) are signalled by its id.
func (s *Server) command(args ...string) *exec.Cmd {
	if s.place.Exec != nil {
		// Entering a namespace needs root: the wrapper runs as root and
		// setpriv drops to mysql, keeping the parent-death signal, which
		// the kernel clears when a process changes its own user.
		argv := s.place.Exec(append([]string{"setpriv",
			"--reuid=" + strconv.Itoa(s.uid), "--regid=" + strconv.Itoa(s.gid), "--clear-groups",
			"--pdeathsig=keep", "--", mariadbdPath}, args...)...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = s.dir
		cmd.Env = serverEnv()
		return cmd
	}
	cmd := exec.Command(mariadbdPath, args...)
	cmd.Dir = s.dir
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Started as mysql rather than with --user, so that the
		// parent-death signal survives: the kernel clears it when a
		// process changes its own user.
		Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)},
	}
	return cmd
}

// Pause stops the server and the helpers it spawned with SIGSTOP, as a
// machine that hangs would: its sockets stay open, the kernel still
// accepts connections for it, and nothing answers. Resume continues it.
func (s *Server) Pause() error { return s.sendGroup(syscall.SIGSTOP) }

// Resume continues a server stopped by Pause, with SIGCONT.
func (s *Server) Resume() error { return s.sendGroup(syscall.SIGCONT) }

func (s *Server) sendGroup(sig syscall.Signal) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	p := s.running()
	if p == nil {
		return ErrNotRunning
	}
	if err := syscall.Kill(-p.Pid(), sig); err != nil {
		return fmt.Errorf("mariadbtest: %v to %s: %w", sig, s.name, err)
	}
	return nil
}

// rootFromAnywhere gives root with no password from any host the rights
// of root@localhost, which mariadb-install-db made: the test process
// reaches a server in a namespace from the bridge's address, not from
// localhost.
const rootFromAnywhere = "INSERT INTO mysql.global_priv (Host, User, Priv) " +
	"SELECT '%', User, Priv FROM mysql.global_priv WHERE Host = 'localhost' AND User = 'root';\n"

// letRootIn lets root in from the network when the server listens
// elsewhere than on 127.0.0.1, by running rootFromAnywhere on the fresh
// data directory in bootstrap mode.
func (s *Server) letRootIn(tb testing.TB) {
	tb.Helper()
	if s.place.Host == "" {
		return
	}
	cmd := exec.Command(mariadbdPath, "--defaults-file="+s.path(cnfName), "--user="+serverUserName,
		"--bootstrap", "--wsrep-on=OFF", "--skip-networking")
	cmd.Dir = s.dir
	cmd.Env = serverEnv()
	cmd.Stdin = strings.NewReader(rootFromAnywhere)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("mariadbtest: %s: let root in from %s: %v\n%s", s.name, s.place.Host, err, tail(out, logTailLines))
	}
}

// WaitWhole waits until every node is Synced in a primary component and
// sees every node of the cluster. A node continued after a pause still
// believes, for a while, that it is Synced in its old primary component:
// only the others' view says it has rejoined.
func (c *Cluster) WaitWhole(ctx context.Context) error {
	for i := range c.nodes {
		if err := c.WaitSynced(ctx, i); err != nil {
			return err
		}
	}
	for i := range c.nodes {
		if err := c.waitSize(ctx, i, len(c.nodes)); err != nil {
			return err
		}
	}
	return nil
}
