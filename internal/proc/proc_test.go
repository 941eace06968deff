package proc

import (
	"bufio"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSignalTakesTheGroupDown(t *testing.T) {
	// A shell that starts a helper of its own, prints its pid and waits.
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper := make(chan int, 1)
	p, err := Start(cmd, func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		pid, _ := strconv.Atoi(strings.TrimSpace(line))
		helper <- pid
	})
	if err != nil {
		t.Fatal(err)
	}
	pid := <-helper
	if pid <= 0 || p.Exited() || p.State() != nil {
		t.Fatalf("helper pid %d, exited %v, state %v", pid, p.Exited(), p.State())
	}
	if err := p.Signal(syscall.SIGTERM, 50*time.Millisecond, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() || p.State() == nil {
		t.Fatal("the process has not been reaped")
	}
	// The helper was in the group: it is gone too (or a zombie of init's).
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("helper %d survived its group", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSignalAfterExit(t *testing.T) {
	p, err := Start(exec.Command("true"), nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if err := p.Signal(syscall.SIGKILL, 0, time.Second); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("Signal after exit: %v", err)
	}
}

// zombie reports whether pid has exited and waits for its parent to reap it.
func zombie(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	return err != nil || strings.HasPrefix(strings.TrimSpace(string(out)), "Z")
}
