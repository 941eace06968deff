package netns

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is its own helper inside a namespace: with helperEnv set
// to "listen" it answers "ok" to every connection on helperAddr; with
// "dial" it connects to helperAddr and exits 0 once it read "ok".
const (
	helperEnv  = "LEAF_NETNS_HELPER"
	helperAddr = "LEAF_NETNS_ADDR"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "listen":
		ln, err := net.Listen("tcp", os.Getenv(helperAddr))
		if err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString("listening\n")
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(2)
			}
			c.Write([]byte("ok\n"))
			c.Close()
		}
	case "dial":
		if !reach(os.Getenv(helperAddr)) {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// reach reports whether addr answers "ok" within half a second.
func reach(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "ok\n"
}

// helper starts the test binary as a helper inside ns.
func helper(t *testing.T, ns *NS, mode, addr string) *exec.Cmd {
	t.Helper()
	argv := ns.Exec(os.Args[0], "-test.run=^$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperAddr+"="+addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// TestCutAndHeal makes two namespaces, a listener in one, and checks who
// reaches it through each cut and heal; then that everything it made is
// gone once its cleanup ran.
func TestCutAndHeal(t *testing.T) {
	Require(t)
	var spaces []string
	var link string
	t.Run("network", func(t *testing.T) {
		n := New(t)
		link = n.link
		a, b := n.Add(t, "a"), n.Add(t, "b")
		spaces = []string{a.Name, b.Name, n.hub}
		if a.IP == b.IP || !strings.HasPrefix(a.IP, subnetBase) {
			t.Fatalf("addresses %s and %s", a.IP, b.IP)
		}
		addr := net.JoinHostPort(b.IP, "7000")
		ln := helper(t, b, "listen", addr)
		out, err := ln.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := ln.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-ln.Process.Pid, syscall.SIGKILL); _ = ln.Wait() })
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "listening\n" {
			t.Fatalf("listener in %s: %q %v", b.Name, line, err)
		}
		check := func(step string, wantA, wantHost bool) {
			t.Helper()
			if got := runHelper(context.Background(), helper(t, a, "dial", addr)); got != wantA {
				t.Errorf("%s: namespace a reaches b: %v, want %v", step, got, wantA)
			}
			if got := reach(addr); got != wantHost {
				t.Errorf("%s: the host reaches b: %v, want %v", step, got, wantHost)
			}
		}
		check("at first", true, true)
		if err := n.Cut(a, b); err != nil {
			t.Fatal(err)
		}
		check("a cut from b", false, true)
		if err := n.Cut(b, nil); err != nil {
			t.Fatal(err)
		}
		check("b cut from the host too", false, false)
		if err := n.Heal(a, b); err != nil {
			t.Fatal(err)
		}
		check("a healed", true, false)
		if err := n.HealAll(); err != nil {
			t.Fatal(err)
		}
		check("all healed", true, true)
	})
	for _, name := range spaces {
		if exists("/run/netns/" + name) {
			t.Errorf("namespace %s still exists after the cleanup", name)
		}
	}
	if link == "" || linkExists(link) {
		t.Errorf("the host's link %q still exists after the cleanup", link)
	}
}

// runHelper runs a dial helper and reports whether it reached its address.
func runHelper(ctx context.Context, cmd *exec.Cmd) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := cmd.Start(); err != nil {
		return false
	}
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop()
	return cmd.Wait() == nil
}

func TestDeadOwner(t *testing.T) {
	if deadOwner("other-1-abc") || deadOwner(Prefix+"x-abc") {
		t.Error("a name not of this package is taken for one")
	}
	if deadOwner(Prefix + "1-abc-x") { // pid 1 always runs
		t.Error("pid 1 taken for dead")
	}
}
