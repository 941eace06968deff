// Package proc runs the child processes of tests (database servers, leaf
// instances) in process groups of their own: they are signalled by process
// id, never by name, take the helpers they spawned down with them, and die
// with the test process (parent-death signal) should it die first.
package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is one started command.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
}

// Start starts cmd in a process group of its own, with SIGKILL as its
// parent-death signal; other fields of cmd.SysProcAttr (a Credential, say)
// are kept. drain, when not nil, runs before the process is reaped, in the
// goroutine that reaps it: to read its output pipe to the end.
func Start(cmd *exec.Cmd, drain func()) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		if drain != nil {
			drain()
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id, which is also the id of its group.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited and been reaped.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// State is how the process ended; nil before it has.
func (p *Process) State() *os.ProcessState {
	if !p.Exited() {
		return nil
	}
	return p.cmd.ProcessState
}

// Signal sends sig to the process (SIGKILL to its whole group), waits up to
// grace for it to exit, then kills whatever is left of the group and waits
// up to wait for the process to be reaped.
func (p *Process) Signal(sig syscall.Signal, grace, wait time.Duration) error {
	pid := p.Pid()
	target := pid
	if sig == syscall.SIGKILL {
		target = -pid
	}
	if err := syscall.Kill(target, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to process %d: %w", sig, pid, err)
	}
	if grace > 0 {
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	// The process if it did not stop in time, or helpers it left behind.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(wait):
		return fmt.Errorf("process %d still runs %v after SIGKILL", pid, wait)
	}
}
